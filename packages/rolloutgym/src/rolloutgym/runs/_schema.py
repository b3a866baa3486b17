"""Pydantic models that validate run-file lines and point at the field that is wrong."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, field_validator
from rolloutgym_protocol import from_jsonable
from rolloutgym_protocol.attribution import ATTRIBUTION_KEY, Attribution

FORMAT_VERSION = 1


def _tagged(value: Any) -> Any:
    return from_jsonable(value) if isinstance(value, dict) else value


# A float, or a non-finite one in its tagged form ({"$float": "nan"}, see rolloutgym_protocol.jsonvalues).
TaggedFloat = Annotated[float, BeforeValidator(_tagged)]


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow")


class ScoreModel(_Open):
    value: float
    components: dict[str, ScoreModel] = Field(default_factory=dict)
    metadata: dict[str, Any] = Field(default_factory=dict)
    feedback: str | None = None

    @field_validator("metadata")
    @classmethod
    def _attribution(cls, metadata: dict[str, Any]) -> dict[str, Any]:
        """``metadata.attribution``, when present, names a known party and a reason (see the protocol)."""
        if metadata.get(ATTRIBUTION_KEY) is not None:
            Attribution.from_dict(from_jsonable(metadata[ATTRIBUTION_KEY]))
        return metadata


class StepModel(_Open):
    observation: Any
    action: Any
    reward: TaggedFloat
    next_observation: Any
    terminated: bool
    truncated: bool
    info: dict[str, Any] = Field(default_factory=dict)
    policy_info: dict[str, Any] = Field(default_factory=dict)
    policy_tokens: list[int] | None = None
    policy_logprobs: list[TaggedFloat] | None = None
    policy_stop_reason: str | None = None
    observation_tokens: list[int] | None = None


class TrajectoryModel(_Open):
    initial_observation: Any
    steps: list[StepModel]
    initial_info: dict[str, Any] = Field(default_factory=dict)
    terminated: bool
    truncated: bool
    metadata: dict[str, Any] = Field(default_factory=dict)
    stop_reason: str | None = None


class ErrorModel(_Open):
    error_type: str
    error_message: str
    where: str = "engine"
    member: int | None = None


class GroupLineSchema(_Open):
    kind: Literal["group"]
    task_index: int
    item_id: str
    item: Any = None
    trajectories: list[TrajectoryModel]
    scores: list[ScoreModel]
    errors: list[ErrorModel] = Field(default_factory=list)
    metadata: dict[str, Any] = Field(default_factory=dict)


class EnvInfo(_Open):
    id: str
    version: int | None = None
    source: str = "registry"
    plugin: str | None = None
    plugin_version: str | None = None
    replayable: bool = False


class HeaderLine(_Open):
    kind: Literal["header"]
    format_version: int
    run_id: str
    created_at: str
    env: EnvInfo
    policy: str
    num_rollouts: int = Field(ge=1)
    seed: int | None = None
    tasks: list[str]
    task_indices: list[int]
    options: dict[str, Any] = Field(default_factory=dict)
    versions: dict[str, str | None] = Field(default_factory=dict)
    pass_threshold: float = 1.0
