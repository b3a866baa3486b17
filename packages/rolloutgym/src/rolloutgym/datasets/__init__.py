"""Datasets: immutable sequences of items, and RL datasets that know how to build an env per item.

:class:`Dataset` is a frozen sequence with ``map``/``filter``/``take``/``with_metadata``.
:class:`RLDataset` adds ``make_env(item)`` and optional stable item ids. Both convert to and
from Hugging Face ``datasets`` (an optional dependency: the extra ``datasets``,
``pip install './packages/rolloutgym[datasets]'`` from a checkout); the library is imported only inside
:meth:`Dataset.from_hf` and :meth:`Dataset.to_hf`.

Batching, shuffling and repetition are left to the caller.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Self, TypeVar, overload

from ..install_hints import pip_install

__all__ = ["Dataset", "RLDataset"]

ItemT = TypeVar("ItemT")
EnvT = TypeVar("EnvT")


def _import_hf_datasets(caller: str) -> Any:
    try:
        import datasets as hf_datasets
    except ImportError as error:
        raise ImportError(
            f"{caller} needs the Hugging Face 'datasets' library, which is not installed; "
            f"install it with: {pip_install('rolloutgym', 'datasets')}"
        ) from error
    return hf_datasets


@dataclass(frozen=True, slots=True, init=False)
class Dataset(Sequence[ItemT], Generic[ItemT]):
    """An immutable sequence of items with metadata.

    ``items`` may be any iterable (it is stored as a tuple); ``metadata`` is copied to a dict.
    ``dataset[i]`` returns an item and ``dataset[a:b]`` a tuple of items. The transformations
    return new datasets of the same type with the same metadata.
    """

    items: tuple[ItemT, ...]
    metadata: dict[str, Any]

    def __init__(self, items: Iterable[ItemT] = (), metadata: Mapping[str, Any] | None = None) -> None:
        object.__setattr__(self, "items", tuple(items))
        object.__setattr__(self, "metadata", dict(metadata or {}))

    def __len__(self) -> int:
        return len(self.items)

    def __iter__(self) -> Iterator[ItemT]:
        return iter(self.items)

    @overload
    def __getitem__(self, index: int) -> ItemT: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[ItemT, ...]: ...

    def __getitem__(self, index: int | slice) -> ItemT | tuple[ItemT, ...]:
        return self.items[index]

    def item_id(self, index: int) -> str:
        """A stable id for the item at ``index``: its position as a string.

        Negative indices count from the end, as in ``dataset[index]``.

        Raises:
            IndexError: ``index`` is out of range.
        """
        length = len(self.items)
        if not -length <= index < length:
            raise IndexError(f"dataset index {index} out of range for {length} items")
        return str(index % length)

    def _with_items(self, items: Iterable[Any], metadata: Mapping[str, Any] | None = None) -> Self:
        return dataclasses.replace(
            self, items=tuple(items), metadata=dict(self.metadata if metadata is None else metadata)
        )

    def map(self, function: Callable[[ItemT], Any]) -> Self:
        """A new dataset of ``function(item)`` for every item."""
        return self._with_items(function(item) for item in self.items)

    def filter(self, predicate: Callable[[ItemT], Any]) -> Self:
        """A new dataset of the items for which ``predicate(item)`` is true."""
        return self._with_items(item for item in self.items if predicate(item))

    def take(self, limit: int | None) -> Self:
        """A new dataset of the first ``limit`` items (all of them when ``limit`` is None).

        Raises:
            ValueError: ``limit`` is negative.
        """
        if limit is None:
            return self._with_items(self.items)
        if limit < 0:
            raise ValueError(f"limit must be non-negative, got {limit}")
        return self._with_items(self.items[:limit])

    def with_metadata(self, **metadata: Any) -> Self:
        """A copy whose metadata is this metadata updated with ``metadata``."""
        return self._with_items(self.items, {**self.metadata, **metadata})

    @classmethod
    def from_hf(cls, hf_dataset: Any, *, metadata: Mapping[str, Any] | None = None, **fields: Any) -> Self:
        """Build a dataset whose items are the rows (dicts) of a Hugging Face dataset.

        Args:
            hf_dataset: a ``datasets.Dataset`` or ``datasets.IterableDataset`` (pick a split
                of a ``DatasetDict`` first, e.g. ``dataset_dict["test"]``).
            metadata: the new dataset's metadata. ``hf_dataset`` and ``hf_split`` are added
                when the Hugging Face dataset knows its name and split.
            **fields: further fields of ``cls``, e.g. ``make_env=`` for :class:`RLDataset`.

        Raises:
            ImportError: the ``datasets`` library is not installed.
            TypeError: ``hf_dataset`` is not a Hugging Face dataset.
        """
        hf_datasets = _import_hf_datasets(f"{cls.__name__}.from_hf")
        if isinstance(hf_dataset, hf_datasets.DatasetDict | hf_datasets.IterableDatasetDict):
            splits = ", ".join(repr(name) for name in hf_dataset)
            raise TypeError(f"from_hf needs one split, got a DatasetDict with splits {splits}; pass dataset[split]")
        if not isinstance(hf_dataset, hf_datasets.Dataset | hf_datasets.IterableDataset):
            raise TypeError(
                f"from_hf needs a datasets.Dataset or datasets.IterableDataset, got {type(hf_dataset).__name__}"
            )
        merged = dict(metadata or {})
        info = getattr(hf_dataset, "info", None)
        dataset_name = getattr(info, "dataset_name", None)
        if dataset_name:
            merged.setdefault("hf_dataset", dataset_name)
        if getattr(hf_dataset, "split", None) is not None:
            merged.setdefault("hf_split", str(hf_dataset.split))
        rows: list[Any] = [dict(row) for row in hf_dataset]
        return cls(rows, merged, **fields)

    def to_hf(self) -> Any:
        """Convert to a ``datasets.Dataset``; every item must be a mapping (one row).

        Metadata is not carried over.

        Raises:
            ImportError: the ``datasets`` library is not installed.
            TypeError: an item is not a mapping; ``map`` the items to dicts first.
        """
        hf_datasets = _import_hf_datasets(f"{type(self).__name__}.to_hf")
        rows = []
        for index, item in enumerate(self.items):
            if not isinstance(item, Mapping):
                raise TypeError(
                    f"to_hf needs every item to be a mapping (one row); item {index} is "
                    f"{type(item).__name__}. Use dataset.map(...) to turn items into dicts first"
                )
            rows.append(dict(item))
        return hf_datasets.Dataset.from_list(rows)


@dataclass(frozen=True, slots=True, init=False)
class RLDataset(Dataset[ItemT], Generic[ItemT, EnvT]):
    """A dataset whose items each define an environment.

    Args:
        items: the items (task descriptions, prompts, ...).
        metadata: dataset metadata.
        make_env: ``make_env(item) -> env``; required keyword.
        get_item_id: ``get_item_id(item) -> str``; without it an item's id is its index.

    Unlike rolloutlib 0.2.0, ``item_id`` works without ``get_item_id``, and ``map``,
    ``filter``, ``take``, ``with_metadata`` and ``from_hf`` return an ``RLDataset`` that keeps
    ``make_env`` and ``get_item_id`` (so ``map`` must produce items they accept).
    """

    make_env: Callable[[ItemT], Any]
    get_item_id: Callable[[ItemT], str] | None

    def __init__(
        self,
        items: Iterable[ItemT] = (),
        metadata: Mapping[str, Any] | None = None,
        *,
        make_env: Callable[[ItemT], Any],
        get_item_id: Callable[[ItemT], str] | None = None,
    ) -> None:
        if not callable(make_env):
            raise TypeError(f"make_env must be callable, got {type(make_env).__name__}")
        if get_item_id is not None and not callable(get_item_id):
            raise TypeError(f"get_item_id must be callable or None, got {type(get_item_id).__name__}")
        # Explicit base call: zero-argument super() breaks in slotted dataclasses.
        Dataset.__init__(self, items, metadata)
        object.__setattr__(self, "make_env", make_env)
        object.__setattr__(self, "get_item_id", get_item_id)

    def item_id(self, index: int) -> str:
        """``get_item_id(self[index])`` when configured, else the index as a string."""
        if self.get_item_id is None:
            return Dataset.item_id(self, index)
        return str(self.get_item_id(self[index]))
