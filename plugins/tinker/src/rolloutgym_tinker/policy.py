"""The ``tinker`` policy provider: a :class:`~rolloutgym.llm.TokenPolicy` over Tinker.

``--policy tinker:MODEL`` creates a ``SamplingClient`` for the base model (or for a
checkpoint with ``--policy-arg model_path=tinker://...``), renders prompts with a
tinker-cookbook renderer (``--policy-arg renderer=NAME``; by default the model's
recommended one when tinker-cookbook is installed, else the tokenizer's chat template),
and records the sampled tokens and logprobs verbatim.
"""

from __future__ import annotations

import importlib.util
import inspect
from typing import Any

from rolloutgym.llm import ChatTemplateRenderer, TokenPolicy
from rolloutgym_protocol.errors import ConfigError, PolicyError

from ._deadline import run_with_deadline
from .client import DEFAULT_CLIENT_DEADLINE, create_sampling_client
from .renderer import CookbookRenderer, load_cookbook_renderer
from .sampler import TinkerSampler

__all__ = ["make_policy", "policy_from_client"]

_CLIENT_OPTIONS = ("api_key", "base_url", "model_path", "client_deadline")
_POLICY_OPTIONS = ("renderer", "tokenizer", "chat_template", "sample_timeout")


def _token_option_names() -> set[str]:
    parameters = inspect.signature(TokenPolicy.__init__).parameters.values()
    return {parameter.name for parameter in parameters if parameter.kind is inspect.Parameter.KEYWORD_ONLY}


def _load_tokenizer(name_or_path: str) -> Any:
    try:
        from transformers import AutoTokenizer

        return AutoTokenizer.from_pretrained(name_or_path)
    except Exception as exc:  # ImportError, OSError, HTTP errors: all mean "not loadable"
        raise PolicyError(
            f"could not load the tokenizer {name_or_path!r} ({type(exc).__name__}: {str(exc)[:300]}); "
            "pass a local tokenizer folder with --policy-arg tokenizer=PATH"
        ) from None


def policy_from_client(
    sampling_client: Any,
    tokenizer: Any,
    *,
    model: str | None = None,
    renderer: Any = "auto",
    chat_template: str | None = None,
    sample_timeout: float | None = 600.0,
    **token_options: Any,
) -> TokenPolicy:
    """A :class:`~rolloutgym.llm.TokenPolicy` over an existing ``SamplingClient``.

    Args:
        sampling_client: a ``tinker.SamplingClient`` (or a stand-in with ``sample_async``).
        tokenizer: the model's Hugging Face tokenizer.
        model: the model name (picks the recommended cookbook renderer; labels steps).
        renderer: ``"auto"`` (the cookbook's recommended renderer for ``model`` when
            tinker-cookbook is installed and knows it, else the chat template),
            ``"template"`` (the tokenizer's chat template), a cookbook renderer name
            (``"qwen3"``, ``"llama3"``...), or a ready cookbook ``Renderer`` object.
        chat_template: a Jinja template for ``renderer="template"``.
        sample_timeout: seconds one sample may take.
        **token_options: :class:`~rolloutgym.llm.TokenPolicy` options.
    """
    adapter: Any
    if renderer == "template" or (renderer == "auto" and not _cookbook_knows(model)):
        adapter = ChatTemplateRenderer(tokenizer, chat_template=chat_template)
    elif isinstance(renderer, str):
        adapter = CookbookRenderer(load_cookbook_renderer(None if renderer == "auto" else renderer, tokenizer, model))
    else:
        adapter = CookbookRenderer(renderer)
    stop = tuple(token_options.pop("stop", ()) or ()) + tuple(getattr(adapter, "stop_strings", ()))
    sampler = TinkerSampler(
        sampling_client,
        timeout=sample_timeout,
        token_text=lambda token: str(tokenizer.decode([token], skip_special_tokens=False)),
    )
    token_options.setdefault("name", f"tinker:{model}" if model else "tinker")
    return TokenPolicy(sampler, adapter, stop=stop, **token_options)


def _cookbook_knows(model: str | None) -> bool:
    if not model or importlib.util.find_spec("tinker_cookbook") is None:
        return False
    try:
        from tinker_cookbook.model_info import get_recommended_renderer_name

        get_recommended_renderer_name(model)
    except Exception:  # unknown model: use the chat template
        return False
    return True


def make_policy(model: str | None = None, **options: Any) -> TokenPolicy:
    """The ``tinker`` provider's factory: ``--policy tinker:MODEL [--policy-arg KEY=VALUE]``.

    Options: ``api_key`` (default ``$TINKER_API_KEY``), ``base_url``, ``model_path``
    (a ``tinker://`` checkpoint), ``client_deadline`` (seconds, default 60),
    ``sample_timeout``, ``renderer``, ``tokenizer`` (a local tokenizer folder; default: the
    client's ``get_tokenizer()``), ``chat_template``, and the
    :class:`~rolloutgym.llm.TokenPolicy` options.

    Raises:
        ConfigError: an unknown option.
        PolicyError: no API key, the service is unreachable or too slow (the deadline), or
            the tokenizer cannot be loaded.
    """
    known = {*_CLIENT_OPTIONS, *_POLICY_OPTIONS, *_token_option_names()}
    unknown = sorted(set(options) - known)
    if unknown:
        raise ConfigError(
            f"tinker policy: unknown option(s) {', '.join(unknown)}; known options: {', '.join(sorted(known))}"
        )
    if not model and not options.get("model_path"):
        raise ConfigError("the tinker policy needs a model: --policy tinker:MODEL (e.g. tinker:Qwen/Qwen3-8B)")
    deadline = float(options.pop("client_deadline", DEFAULT_CLIENT_DEADLINE))
    client_options = {key: options.pop(key) for key in ("api_key", "base_url", "model_path") if key in options}
    sampling_client = create_sampling_client(model, deadline=deadline, **client_options)
    tokenizer = options.pop("tokenizer", None)
    if tokenizer is None:
        tokenizer = run_with_deadline(
            sampling_client.get_tokenizer,
            seconds=deadline,
            what=f"loading the tokenizer of {model!r} from Tinker",
            hint="Pass a local copy with --policy-arg tokenizer=PATH.",
        )
    elif isinstance(tokenizer, str):
        tokenizer = _load_tokenizer(tokenizer)
    return policy_from_client(sampling_client, tokenizer, model=model, **options)
