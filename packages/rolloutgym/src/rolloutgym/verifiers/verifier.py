"""``Verifier``: weighted verifier primitives, a pass threshold and a scoring mode.

A verifier config is ``{"primitives": [{"name", "type", "weight"?, ...params}], "threshold"?,
"scoring"?}``. The Score's value is the weighted fraction of passing primitives
(``scoring="weighted"``, the SDK's) or 1/0 by ``passed`` (``scoring="binary"``); ``passed``
means every primitive passed, or, with a ``threshold``, that the weighted fraction reached
it. Components are named by primitive and explain themselves; the feedback lists every
failed check.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rolloutgym_protocol import Score, attribution_of
from rolloutgym_protocol.errors import ConfigError, EnvFileError, did_you_mean

from .context import VerifierContext

__all__ = ["DEFAULT_VERIFIER", "Verifier", "VerifierCheck", "build_verifier", "validate_verifier"]

DEFAULT_VERIFIER: dict[str, Any] = {
    "primitives": [
        {"name": "ground_truth", "type": "ground_truth_match"},
        {"name": "answered", "type": "final_answer"},
    ],
    "scoring": "binary",
}
"""What templates use when an environment has no verifier: the hidden ground truth holds
and the agent gave a final answer."""

_CONFIG_KEYS = {"primitives", "threshold", "scoring"}
_RESERVED = {"name", "type", "weight"}


@dataclass(frozen=True)
class VerifierCheck:
    """One configured primitive: its name, type, weight and grader."""

    name: str
    type: str
    weight: float
    grader: Any


class Verifier:
    """Scores a :class:`VerifierContext` with weighted primitives.

    Build one with :func:`build_verifier`.
    """

    def __init__(
        self, checks: Sequence[VerifierCheck], *, threshold: float | None = None, scoring: str = "weighted"
    ) -> None:
        if not checks:
            raise ConfigError("a verifier needs at least one primitive")
        self.checks = tuple(checks)
        self.threshold = threshold
        self.scoring = scoring

    @property
    def requires_judge(self) -> bool:
        """Whether a primitive (``llm_judge``) needs a judge policy."""
        return any(getattr(check.grader, "requires_judge", False) for check in self.checks)

    def score(self, context: VerifierContext) -> Score:
        """Grade every primitive and combine them."""
        components: dict[str, Score] = {}
        total = passed_weight = 0.0
        failures = []
        all_passed = True
        for check in self.checks:
            result = check.grader(context)
            if not isinstance(result, Score):
                result = Score.from_value(result)
            components[check.name] = result
            threshold = result.metadata.get("threshold", 1.0) if check.type == "llm_judge" else 1.0
            ok = result.value >= threshold - 1e-12
            total += check.weight
            if check.type == "llm_judge":
                passed_weight += check.weight * result.value
            elif ok:
                passed_weight += check.weight
            if not ok:
                all_passed = False
                failures.append(f"[{check.name}] {result.feedback or 'failed'}")
        fraction = passed_weight / total if total > 0 else (1.0 if all_passed else 0.0)
        passed = all_passed if self.threshold is None else fraction >= self.threshold - 1e-12
        value = (1.0 if passed else 0.0) if self.scoring == "binary" else fraction
        if failures:
            feedback = (
                f"{'passed' if passed else 'failed'}: {len(self.checks) - len(failures)}/{len(self.checks)} checks "
                "passed. " + " ".join(failures)
            )
        else:
            feedback = f"passed: all {len(self.checks)} checks passed"
        metadata = {
            "passed": passed,
            "fraction": round(fraction, 6),
            "scoring": self.scoring,
            "threshold": self.threshold,
        }
        if not passed:
            lifted = _component_attribution(components)
            if lifted is not None:
                metadata["attribution"] = lifted
        return Score(value, components, metadata, feedback=feedback)

    __call__ = score

    def __repr__(self) -> str:
        return (
            f"Verifier({[check.name for check in self.checks]}, threshold={self.threshold}, scoring={self.scoring!r})"
        )


def _weight(value: Any, where: str) -> float:
    if isinstance(value, bool):
        raise EnvFileError(f"{where}.weight: must be a number, got {value!r}")
    try:
        weight = float(value)
    except (TypeError, ValueError):
        raise EnvFileError(f"{where}.weight: must be a number, got {value!r}") from None
    if not math.isfinite(weight) or weight < 0:
        raise EnvFileError(f"{where}.weight: must be finite and >= 0, got {value!r}")
    return weight


def build_verifier(config: Mapping[str, Any] | None, *, registry: Any = None, path: str = "verifier") -> Verifier:
    """Build a :class:`Verifier` from a config (``None``: :data:`DEFAULT_VERIFIER`).

    Primitive types are looked up among the graders plugins register (``rolloutgym_graders``).

    Raises:
        EnvFileError: a malformed config, an unknown primitive type, bad parameters; each
            message gives the path (``verifier.primitives[1].type: ...``).
    """
    from ..registry import get_registry, import_entry_point

    if config is None:
        config = DEFAULT_VERIFIER
    if not isinstance(config, Mapping):
        raise EnvFileError(
            f"{path}: a verifier must be a JSON object {{'primitives': [...]}}, got {type(config).__name__}"
        )
    unknown = sorted(set(config) - _CONFIG_KEYS)
    if unknown:
        raise EnvFileError(
            f"{path}: unknown field(s) {', '.join(map(repr, unknown))}; known: primitives, threshold, scoring"
        )
    primitives = config.get("primitives")
    if not isinstance(primitives, list) or not primitives:
        raise EnvFileError(
            f"{path}.primitives: a verifier needs a non-empty list of primitives (an empty one would pass everything)"
        )
    threshold = config.get("threshold")
    if threshold is not None:
        if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not 0 <= threshold <= 1:
            raise EnvFileError(f"{path}.threshold: must be a number from 0 to 1, got {threshold!r}")
        threshold = float(threshold)
    scoring = config.get("scoring", "weighted")
    if scoring not in ("weighted", "binary"):
        raise EnvFileError(f"{path}.scoring: must be 'weighted' or 'binary', got {scoring!r}")
    registry = registry or get_registry()
    graders = registry.grader_specs()
    checks = []
    errors = []
    names: set[str] = set()
    for index, item in enumerate(primitives):
        where = f"{path}.primitives[{index}]"
        try:
            if not isinstance(item, Mapping):
                raise EnvFileError(f"{where}: a primitive must be an object {{'name', 'type', ...}}")
            name, type_name = item.get("name"), item.get("type")
            if not isinstance(name, str) or not name.strip():
                raise EnvFileError(f"{where}.name: required (a non-empty string)")
            if name in names:
                raise EnvFileError(f"{where}.name: duplicate primitive name {name!r}")
            names.add(name)
            if not isinstance(type_name, str) or type_name not in graders:
                known = sorted(graders)
                raise EnvFileError(
                    f"{where}.type: unknown primitive type {type_name!r}.{did_you_mean(str(type_name), known)} "
                    f"Known: {', '.join(known) or 'none (is rolloutgym installed with its entry points?)'}"
                )
            weight = _weight(item.get("weight", 1), where)
            params = {key: value for key, value in item.items() if key not in _RESERVED}
            build = import_entry_point(graders[type_name].spec.entry_point, what=f"verifier primitive {type_name}")
            try:
                grader = build(**params)
            except (ConfigError, TypeError, ValueError) as exc:
                raise EnvFileError(f"{where} ({type_name}): {exc}") from None
            checks.append(VerifierCheck(name, type_name, weight, grader))
        except EnvFileError as exc:
            errors.append(str(exc))
    if errors:
        raise EnvFileError(errors[0] if len(errors) == 1 else f"{len(errors)} problems:\n  " + "\n  ".join(errors))
    return Verifier(checks, threshold=threshold, scoring=scoring)


def validate_verifier(config: Mapping[str, Any], *, registry: Any = None, path: str = "verifier") -> None:
    """Raise :class:`EnvFileError` when :func:`build_verifier` would."""
    build_verifier(config, registry=registry, path=path)


def _component_attribution(components: dict[str, Score]) -> dict[str, Any] | None:
    """The first non-agent attribution a failing check carries (a judge that could not decide), as a dict."""
    for component in components.values():
        found = attribution_of(component)
        if found is not None and found.party != "agent":
            return found.to_dict()
    return None
