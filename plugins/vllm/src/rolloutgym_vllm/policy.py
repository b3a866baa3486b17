"""The ``vllm`` policy provider: a :class:`~rolloutgym.llm.TokenPolicy` over vLLM.

* ``--policy vllm:MODEL`` runs vLLM's offline engine in this process (a CUDA GPU);
* ``--policy vllm:MODEL --base-url http://HOST:PORT/v1`` samples from a running
  ``vllm serve MODEL`` with token-id prompts; the chat template is applied here, from the
  model's Hugging Face tokenizer (``--policy-arg tokenizer=PATH`` to use another one).

Either way the prompt, observation and sampled tokens of every turn are recorded
verbatim, with the sampled tokens' logprobs.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import Any

from rolloutgym.install_hints import pip_install
from rolloutgym.llm import ChatTemplateRenderer, TokenPolicy
from rolloutgym_protocol.errors import ConfigError, PolicyError

__all__ = ["load_tokenizer", "make_policy"]

_SERVER_OPTIONS = ("api_key", "timeout", "max_retries", "max_concurrency", "extra_body")
_ENGINE_OPTIONS = ("engine_args", "batch_wait", "max_batch")
_RENDERER_OPTIONS = ("tokenizer", "chat_template", "tool_prompt", "stop_token_ids")


def load_tokenizer(name_or_path: str) -> Any:
    """Load a Hugging Face tokenizer (``transformers.AutoTokenizer``).

    Raises:
        PolicyError: ``transformers`` is missing or the tokenizer cannot be loaded.
    """
    try:
        from transformers import AutoTokenizer
    except ImportError:
        raise PolicyError(
            "the vllm policy applies the chat template itself and needs 'transformers': "
            f"{pip_install('rolloutgym-vllm', 'tokenizer')}"
        ) from None
    try:
        return AutoTokenizer.from_pretrained(name_or_path)
    except Exception as exc:  # OSError, ValueError, HTTP errors: all mean "not loadable"
        raise PolicyError(
            f"could not load the tokenizer {name_or_path!r} ({type(exc).__name__}: {str(exc)[:300]}). "
            "Pass a local tokenizer folder with --policy-arg tokenizer=PATH (the one the server uses)."
        ) from None


def _token_option_names() -> set[str]:
    parameters = inspect.signature(TokenPolicy.__init__).parameters.values()
    return {parameter.name for parameter in parameters if parameter.kind is inspect.Parameter.KEYWORD_ONLY}


def make_policy(model: str | None = None, **options: Any) -> TokenPolicy:
    """The ``vllm`` provider's factory.

    Args:
        model: the model name or path (the served name with ``base_url``).
        **options: ``base_url`` (use a running server); server options ``api_key``,
            ``timeout``, ``max_retries``, ``max_concurrency``, ``extra_body``; engine
            options ``engine_args`` (a dict for ``vllm.LLM``), ``batch_wait``,
            ``max_batch``; renderer options ``tokenizer`` (a name, path or tokenizer
            object), ``chat_template``, ``tool_prompt``, ``stop_token_ids``; and the
            :class:`~rolloutgym.llm.TokenPolicy` options (``max_tokens``,
            ``max_seq_len``, ``max_turns``, ``temperature``, ``greedy``, ``top_p``,
            ``stop``, ``seed``, ``keep_thinking``).

    Raises:
        ConfigError: an unknown option, or an option of the other mode.
        PolicyError: the engine or tokenizer cannot be loaded.
    """
    if not model:
        raise ConfigError("the vllm policy needs a model: --policy vllm:MODEL (e.g. vllm:Qwen/Qwen3-0.6B)")
    token_options = _token_option_names()
    known = {"base_url", *_SERVER_OPTIONS, *_ENGINE_OPTIONS, *_RENDERER_OPTIONS, *token_options}
    unknown = sorted(set(options) - known)
    if unknown:
        raise ConfigError(
            f"vllm policy: unknown option(s) {', '.join(unknown)}; known options: {', '.join(sorted(known))}"
        )
    base_url = options.pop("base_url", None)
    server = {key: options.pop(key) for key in _SERVER_OPTIONS if key in options}
    engine = {key: options.pop(key) for key in _ENGINE_OPTIONS if key in options}
    renderer_options = {key: options.pop(key) for key in _RENDERER_OPTIONS if key in options}
    tokenizer = renderer_options.pop("tokenizer", None)
    if base_url:
        if engine:
            raise ConfigError(
                f"vllm policy: {', '.join(sorted(engine))} apply to the offline engine, not to --base-url"
            )
        from .server import VLLMServerSampler

        sampler: Any = VLLMServerSampler(model, base_url, **server)
        if tokenizer is None or isinstance(tokenizer, str):
            tokenizer = load_tokenizer(tokenizer or model)
    else:
        if server:
            raise ConfigError(f"vllm policy: {', '.join(sorted(server))} apply to a server: add --base-url URL")
        from .engine import VLLMEngineSampler

        engine_args = engine.pop("engine_args", None)
        if engine_args is not None and not isinstance(engine_args, Mapping):
            raise ConfigError(
                "vllm policy: engine_args must be a JSON object, e.g. engine_args='{\"max_model_len\": 8192}'"
            )
        sampler = VLLMEngineSampler(model, engine_args=engine_args, **engine)
        if tokenizer is None:
            tokenizer = sampler.llm.get_tokenizer()
        elif isinstance(tokenizer, str):
            tokenizer = load_tokenizer(tokenizer)
    if "stop_token_ids" in renderer_options and renderer_options["stop_token_ids"] is not None:
        renderer_options["stop_token_ids"] = [int(token) for token in renderer_options["stop_token_ids"]]
    renderer = ChatTemplateRenderer(tokenizer, **renderer_options)
    options.setdefault("name", f"vllm:{model}")
    return TokenPolicy(sampler, renderer, **options)
