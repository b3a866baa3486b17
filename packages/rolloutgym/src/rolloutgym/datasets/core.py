"""rolloutlib 0.2.0 compatibility: the names of ``rolloutlib.datasets.core``, from ``rolloutgym.datasets``."""

from rolloutgym.datasets import (
    Dataset,
    RLDataset,
)

__all__ = [
    "Dataset",
    "RLDataset",
]
