"""The conformance kit on every ``bfcl/*-v0`` env, on a seeded sample of each category's tasks.

The full oracle/null pass over all 4,441 tasks is ``benchmarks/bfcl_oracle.py`` (about half
a minute); CI plays a seeded sample per category through the rollout engine. The oracle
misses 1.0 on a handful of tasks whose possible answers BFCL's own checker rejects (listed
in the README); the sample leaves those out, and ``test_bfcl_oracle.py`` checks the list.
"""

from __future__ import annotations

import random
from typing import ClassVar

from rolloutgym_bfcl import CATEGORIES, GROUND_TRUTH_REJECTED
from rolloutgym_testing import EnvConformanceTests

SAMPLE = 6


class _BfclConformance(EnvConformanceTests):
    sample: ClassVar[int] = SAMPLE

    def task_ids(self) -> list[str]:
        from rolloutgym.registry import task_id

        items = self.registry().tasks(self.env_id)
        ids = [
            task_id(item, index)
            for index, item in enumerate(items)
            if str(task_id(item, index)) not in GROUND_TRUTH_REJECTED
        ]
        return random.Random(f"conformance-{self.env_id}").sample(ids, min(self.sample, len(ids)))


def _conformance_class(category: object) -> type:
    name = "Test" + "".join(part.capitalize() for part in category.name.split("-"))  # type: ignore[attr-defined]
    attributes = {"env_id": category.env_id, "__doc__": f"Conformance of {category.env_id} on {SAMPLE} seeded tasks."}  # type: ignore[attr-defined]
    if category.kind == "irrelevance":  # type: ignore[attr-defined]
        # Calling nothing is the right answer there: the null policy scores 1.
        attributes["min_score"] = 1.0
    return type(name, (_BfclConformance,), attributes)


for _category in CATEGORIES:
    _class = _conformance_class(_category)
    globals()[_class.__name__] = _class
del _category, _class
