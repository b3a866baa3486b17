"""What every verifier primitive is: a :class:`PrimitiveGrader` over validated parameters.

The primitives themselves are in :mod:`rolloutgym.verifiers.primitives` (the deterministic
checks) and :mod:`rolloutgym.verifiers._judge` (``llm_judge``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError
from rolloutgym_protocol import Score
from rolloutgym_protocol.errors import ConfigError

from ..validation import format_errors
from .context import VerifierContext

__all__ = ["PrimitiveGrader"]


class _Params(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class PrimitiveGrader:
    """A criterion grader built from a primitive's parameters.

    ``grader(context, criterion=None)`` returns a Score; ``requires_judge`` says whether it
    needs ``context.judge``.
    """

    requires_judge = False

    def __init__(self, type_name: str, params: BaseModel, evaluate: Callable[[Any, VerifierContext], Score]) -> None:
        self.type_name = type_name
        self.params = params
        self._evaluate = evaluate

    def __call__(self, context: VerifierContext, criterion: Any = None) -> Score:
        return self._evaluate(self.params, context)

    def __repr__(self) -> str:
        return f"{self.type_name}({self.params.model_dump()})"


def _build(model: type[_Params], type_name: str, params: Mapping[str, Any]) -> Any:
    try:
        return model.model_validate(dict(params))
    except ValidationError as exc:
        raise ConfigError(
            "; ".join(format_errors(exc, "", model)).replace("unknown field", "unknown parameter")
        ) from None


def _passed(ok: bool, feedback: str, **metadata: Any) -> Score:
    return Score(1.0 if ok else 0.0, metadata=metadata, feedback=feedback)
