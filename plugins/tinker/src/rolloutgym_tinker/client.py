"""Creating Tinker clients with a deadline and errors that say what to do.

The Tinker SDK blocks indefinitely when it cannot reach its service (no network, a
firewall) while a client is being created. Every creation here has a deadline, and the
service's address is probed first so that an offline machine fails in seconds.
"""

from __future__ import annotations

import os
from typing import Any

from rolloutgym.install_hints import pip_install
from rolloutgym_protocol.errors import PolicyError

from ._deadline import run_with_deadline, unreachable

__all__ = ["DEFAULT_CLIENT_DEADLINE", "create_sampling_client", "import_tinker", "service_url"]

DEFAULT_CLIENT_DEADLINE = 60.0
_PROBE_SECONDS = 10.0


def import_tinker() -> Any:
    """Import the Tinker SDK, or raise :class:`PolicyError` saying how to install it."""
    try:
        import tinker
    except ImportError as exc:
        raise PolicyError(
            f"the tinker policy needs the Tinker SDK ({exc}): {pip_install('rolloutgym-tinker')}"
        ) from None
    return tinker


def service_url(base_url: str | None = None) -> str:
    """The Tinker API URL: ``base_url``, else ``$TINKER_BASE_URL``, else the SDK's default."""
    tinker = import_tinker()
    try:
        from tinker.lib.base_url import resolve_base_url
    except ImportError:  # older SDKs
        return (
            base_url or os.environ.get("TINKER_BASE_URL") or str(tinker.__dict__.get("DEFAULT_BASE_URL", ""))
        ).rstrip("/")
    return resolve_base_url(base_url)


def create_sampling_client(
    model: str | None,
    *,
    model_path: str | None = None,
    api_key: str | None = None,
    base_url: str | None = None,
    deadline: float = DEFAULT_CLIENT_DEADLINE,
    service_client_class: Any = None,
) -> Any:
    """A ``tinker.SamplingClient`` for a base model or a saved checkpoint, created within ``deadline`` seconds.

    Args:
        model: the base model (``"Qwen/Qwen3-8B"``); optional when ``model_path`` is given.
        model_path: a ``tinker://...`` sampler checkpoint (a fine-tuned model).
        api_key: the Tinker API key (default ``$TINKER_API_KEY``).
        base_url: the Tinker API URL (default ``$TINKER_BASE_URL``, else the SDK's).
        deadline: seconds creation may take.
        service_client_class: ``tinker.ServiceClient`` unless given.

    Raises:
        PolicyError: no API key, the service is unreachable, creation passed its deadline,
            or the service refused (unknown model, bad key).
    """
    tinker = import_tinker()
    key = api_key or os.environ.get("TINKER_API_KEY")
    if not key:
        raise PolicyError(
            "the tinker policy needs a Tinker API key: set TINKER_API_KEY (or run 'tinker auth login'), "
            "or pass --policy-arg api_key=KEY"
        )
    url = service_url(base_url)
    problem = unreachable(url, min(deadline, _PROBE_SECONDS))
    if problem is not None:
        raise PolicyError(
            f"cannot reach the Tinker service at {url}: {problem}. Check the network (a proxy or firewall?) "
            "or set TINKER_BASE_URL / --policy-arg base_url=URL."
        )
    factory = service_client_class or tinker.ServiceClient
    target = model_path or model

    def create() -> Any:
        service = factory(api_key=key, base_url=url)
        return service.create_sampling_client(model_path=model_path, base_model=None if model_path else model)

    try:
        return run_with_deadline(
            create,
            seconds=deadline,
            what=f"creating a Tinker sampling client for {target!r} at {url}",
            hint=(
                "The service accepted a connection but did not answer: check the network and the API key, "
                "or allow more time with --policy-arg client_deadline=SECONDS."
            ),
        )
    except PolicyError:
        raise
    except Exception as exc:  # the SDK's own errors: bad key, unknown model, HTTP errors
        raise PolicyError(
            f"Tinker refused to create a sampling client for {target!r}: {type(exc).__name__}: {str(exc)[:400]}"
        ) from None
