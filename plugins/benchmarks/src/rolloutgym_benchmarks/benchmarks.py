"""Ready-made benchmarks: ``gsm8k()``, ``aime()``, ``make(name)`` and the task loaders of the registered envs.

Where the problems come from, in order: ``examples=`` (rows or :class:`MathExample` s),
``path=`` (a local file or folder), ``dataset=`` (a Hugging Face dataset id, loaded with
``datasets``), else the small sample set shipped in the package::

    gsm8k()                                   # 30 shipped GSM8K-style problems
    gsm8k(path="gsm8k/test.jsonl")            # a local copy of openai/gsm8k
    gsm8k(dataset="openai/gsm8k")             # the hub (config "main", split "test")

The registered environments ``bench/gsm8k-v0`` and ``bench/aime-v0`` use the shipped samples
unless ``ROLLOUTGYM_BENCH_GSM8K`` / ``ROLLOUTGYM_BENCH_AIME`` name a local path or ``hub``
(``hub:train`` for another split).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any

from rolloutgym.evals import Benchmark

from ._extract import DEFAULT_MAX_BOXED_ANSWERS, BoxedChoice
from ._loading import load_hub_rows, read_local_rows, sample_rows
from .envs import AIME_PROMPT_SUFFIX, GSM8K_PROMPT_SUFFIX, AIMEEnv, GSM8KEnv
from .examples import MathExample, row_to_example

__all__ = [
    "AIME_DATASET",
    "GSM8K_DATASET",
    "REGISTRY",
    "aime",
    "aime_examples",
    "aime_tasks",
    "gsm8k",
    "gsm8k_examples",
    "gsm8k_tasks",
    "make",
    "make_aime_env",
    "make_gsm8k_env",
]

GSM8K_DATASET = "openai/gsm8k"
AIME_DATASET = "MathArena/aime_2025"
GSM8K_SAMPLE = "gsm8k_sample.jsonl"
AIME_SAMPLE = "aime_sample.jsonl"
_AIME_QUESTION_KEYS = ("problem", "question")
_AIME_ANSWER_KEYS = ("answer", "ground_truth")

Rows = Iterable[MathExample | Mapping[str, Any]]


def _examples(
    rows: Rows,
    *,
    prefix: str,
    split: str | None,
    question_keys: tuple[str, ...],
    answer_keys: tuple[str, ...],
    source: str,
) -> list[MathExample]:
    return [
        row_to_example(
            row,
            prefix=prefix,
            question_keys=question_keys,
            answer_keys=answer_keys,
            split=split,
            where=f" {index} of {source}",
        )
        for index, row in enumerate(rows)
    ]


def _rows(
    examples: Rows | None,
    path: str | os.PathLike[str] | None,
    dataset: str | None,
    config: str | None,
    split: str,
    sample: str,
    fallback_splits: tuple[str, ...] = (),
) -> tuple[Rows, str, str | None]:
    """``(rows, source description, split used)`` from the first source given."""
    given = [
        name for name, value in (("examples", examples), ("path", path), ("dataset", dataset)) if value is not None
    ]
    if len(given) > 1:
        raise ValueError(f"give at most one of examples=, path= and dataset= (got {', '.join(given)})")
    if examples is not None:
        if isinstance(examples, str | bytes | Mapping):
            raise TypeError("examples must be a list of rows (mappings or MathExample); to read a file use path=...")
        return examples, "examples", None
    if path is not None:
        return read_local_rows(path, config=config, split=split), str(Path(path)), split
    if dataset is not None:
        rows, used = load_hub_rows(dataset, config, split, fallback_splits=fallback_splits)
        return rows, dataset, used
    return sample_rows(sample), f"sample:{sample}", None


def gsm8k_examples(
    examples: Rows | None = None,
    *,
    path: str | os.PathLike[str] | None = None,
    dataset: str | None = None,
    config: str = "main",
    split: str = "test",
) -> list[MathExample]:
    """GSM8K problems as :class:`MathExample` s (``question``; ``answer`` ends in ``#### <number>``)."""
    rows, source, used = _rows(examples, path, dataset, config, split, GSM8K_SAMPLE)
    return _examples(
        rows, prefix="gsm8k", split=used, question_keys=("question",), answer_keys=("answer",), source=source
    )


def aime_examples(
    examples: Rows | None = None,
    *,
    path: str | os.PathLike[str] | None = None,
    dataset: str | None = None,
    split: str = "test",
) -> list[MathExample]:
    """AIME problems as :class:`MathExample` s (``problem``/``question``; ``answer``/``ground_truth``)."""
    rows, source, used = _rows(
        examples, path, dataset, None, split, AIME_SAMPLE, fallback_splits=("train",) if split == "test" else ()
    )
    return _examples(
        rows, prefix="aime", split=used, question_keys=_AIME_QUESTION_KEYS, answer_keys=_AIME_ANSWER_KEYS, source=source
    )


def _benchmark(
    name: str, items: list[MathExample], make_env: Callable[[MathExample], Any], metadata: dict[str, Any]
) -> Benchmark:
    return Benchmark(name, items, make_env, metadata=metadata, item_id=lambda example: str(example.example_id))


def _source_name(examples: Rows | None, path: Any, dataset: str | None, sample: str) -> str:
    if examples is not None:
        return "examples"
    if path is not None:
        return str(path)
    return dataset if dataset is not None else f"sample:{sample}"


def gsm8k(
    examples: Rows | None = None,
    *,
    path: str | os.PathLike[str] | None = None,
    dataset: str | None = None,
    config: str = "main",
    split: str = "test",
    system_prompt: str | None = None,
    prompt_suffix: str = GSM8K_PROMPT_SUFFIX,
    boxed: BoxedChoice = "last",
    symbolic: bool = False,
    max_boxed_answers: int | None = DEFAULT_MAX_BOXED_ANSWERS,
) -> Benchmark:
    """The GSM8K benchmark (name ``"gsm8k"``): one :class:`GSM8KEnv` per problem.

    Args:
        examples: rows with ``question`` and ``answer`` (a number or a solution ending in ``#### N``).
        path: a local copy: ``.jsonl``/``.json``/``.csv``/``.parquet`` or a ``datasets`` folder.
        dataset: a Hugging Face dataset id such as ``"openai/gsm8k"`` (needs ``datasets`` and the network).
        config, split: the dataset configuration and split.
        system_prompt, prompt_suffix, boxed, symbolic, max_boxed_answers: passed to every
            :class:`GSM8KEnv` (``max_boxed_answers=None`` is rolloutlib's no-hedge-check behaviour).

    Raises:
        DatasetUnavailable: the hub is unreachable (at once, naming ``path=``).
        ValueError: a row has no question or answer.
    """
    items = gsm8k_examples(examples, path=path, dataset=dataset, config=config, split=split)

    def make_env(example: MathExample) -> GSM8KEnv:
        return GSM8KEnv(
            example,
            system_prompt=system_prompt,
            prompt_suffix=prompt_suffix,
            boxed=boxed,
            symbolic=symbolic,
            max_boxed_answers=max_boxed_answers,
        )

    source = _source_name(examples, path, dataset, GSM8K_SAMPLE)
    return _benchmark("gsm8k", items, make_env, {"dataset": source, "split": split, "task": "single_turn_math"})


def aime(
    examples: Rows | None = None,
    *,
    path: str | os.PathLike[str] | None = None,
    dataset: str | None = None,
    split: str = "test",
    system_prompt: str | None = None,
    prompt_suffix: str = AIME_PROMPT_SUFFIX,
    boxed: BoxedChoice = "last",
    max_boxed_answers: int | None = DEFAULT_MAX_BOXED_ANSWERS,
) -> Benchmark:
    """The AIME benchmark (name ``"aime"``): one :class:`AIMEEnv` per problem.

    Rows use ``problem`` or ``question`` and ``answer`` or ``ground_truth`` (an integer 0-999).
    ``dataset="MathArena/aime_2025"`` loads the hub copy (its split "train" when "test" is absent);
    the other arguments are as in :func:`gsm8k`.
    """
    items = aime_examples(examples, path=path, dataset=dataset, split=split)
    used = {item.split for item in items} if dataset is not None else {split}

    def make_env(example: MathExample) -> AIMEEnv:
        return AIMEEnv(
            example,
            system_prompt=system_prompt,
            prompt_suffix=prompt_suffix,
            boxed=boxed,
            max_boxed_answers=max_boxed_answers,
        )

    for example in items:  # fail at load time, not at the first episode, on an answer outside 0-999
        make_env(example)
    source = _source_name(examples, path, dataset, AIME_SAMPLE)
    split_used = used.pop() if len(used) == 1 else split
    return _benchmark("aime", items, make_env, {"dataset": source, "split": split_used, "task": "single_turn_math"})


REGISTRY: dict[str, Callable[..., Benchmark]] = {"aime": aime, "gsm8k": gsm8k}


def make(name: str, examples: Rows | None = None, **options: Any) -> Benchmark:
    """``make("gsm8k")`` / ``make("aime", path=...)``: a benchmark from :data:`REGISTRY` by name."""
    if name not in REGISTRY:
        raise ValueError(f"unknown benchmark {name!r}; choose from {sorted(REGISTRY)}")
    return REGISTRY[name](examples, **options)


def _from_environment(variable: str, loader: Callable[..., list[MathExample]]) -> list[MathExample]:
    setting = os.environ.get(variable, "").strip()
    if not setting:
        return loader()
    if setting == "hub" or setting.startswith("hub:"):
        split = setting.partition(":")[2] or "test"
        dataset = GSM8K_DATASET if loader is gsm8k_examples else AIME_DATASET
        return loader(dataset=dataset, split=split)
    return loader(path=setting)


@lru_cache(maxsize=8)
def _cached_tasks(variable: str, setting: str) -> tuple[MathExample, ...]:
    loader = gsm8k_examples if variable == "ROLLOUTGYM_BENCH_GSM8K" else aime_examples
    return tuple(_from_environment(variable, loader))


def gsm8k_tasks() -> list[MathExample]:
    """Tasks of ``bench/gsm8k-v0``: the shipped samples, or ``$ROLLOUTGYM_BENCH_GSM8K`` (a path or ``hub``)."""
    return list(_cached_tasks("ROLLOUTGYM_BENCH_GSM8K", os.environ.get("ROLLOUTGYM_BENCH_GSM8K", "")))


def aime_tasks() -> list[MathExample]:
    """Tasks of ``bench/aime-v0``: the shipped samples, or ``$ROLLOUTGYM_BENCH_AIME`` (a path or ``hub``)."""
    tasks = list(_cached_tasks("ROLLOUTGYM_BENCH_AIME", os.environ.get("ROLLOUTGYM_BENCH_AIME", "")))
    for example in tasks:
        AIMEEnv(example)  # an answer outside 0-999 fails here, naming the example
    return tasks


def make_gsm8k_env(task: MathExample | None = None, **options: Any) -> GSM8KEnv:
    """Factory behind ``bench/gsm8k-v0``: the first shipped sample problem when no task is given."""
    return GSM8KEnv(task if task is not None else gsm8k_tasks()[0], **options)


def make_aime_env(task: MathExample | None = None, **options: Any) -> AIMEEnv:
    """Factory behind ``bench/aime-v0``: the first shipped sample problem when no task is given."""
    return AIMEEnv(task if task is not None else aime_tasks()[0], **options)
