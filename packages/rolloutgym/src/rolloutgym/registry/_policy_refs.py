"""A policy reference as a user may write it, made the one form the registry builds (``provider[:model]``).

The rollout SDK's README writes models as ``openai/gpt-4o-mini``: where the part before the first ``/`` is an
installed provider that takes a model, that is ``openai:gpt-4o-mini`` (the meaning is clear). Any other reference
whose provider is not installed (``together/deepseek-ai/DeepSeek-V3.1``, a bare ``Org/Model``) is refused with
the accepted forms, so a platform refuses it when the run is submitted, not on a worker minutes later.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rolloutgym_protocol.errors import PolicyNotFound

ACCEPTED_FORMS = "PROVIDER:MODEL (e.g. openai:gpt-4o-mini, hf:tiny, hf:Org/Model), a policy name (oracle, null), job:ID"


def normal_policy_reference(reference: str, providers: Mapping[str, Any]) -> str:
    """``reference`` in the form ``provider[:model]``: ``provider/model`` becomes ``provider:model`` when
    ``provider`` is installed and takes a model; unchanged otherwise (:func:`unknown_provider` words the refusal)."""
    if "/" not in reference.partition(":")[0]:  # provider[:model], or hf:Org/Model
        return reference
    head, _, rest = reference.partition("/")
    entry = providers.get(head)
    if entry is not None and getattr(entry.spec, "requires_model", False) and rest:
        return f"{head}:{rest}"
    return reference


def unknown_provider(reference: str, provider: str) -> PolicyNotFound | None:
    """The refusal of a ``provider/...`` reference whose provider is not installed (None for other references)."""
    if "/" not in provider:
        return None
    head = provider.partition("/")[0]
    hint = f"; for a Hugging Face model write hf:{reference}" if head[:1].isupper() or "-" in head else ""
    return PolicyNotFound(
        f"model {reference[:80]!r}: no policy provider '{head}' is installed here{hint}. "
        f"Accepted forms: {ACCEPTED_FORMS}"
    )
