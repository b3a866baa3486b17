"""Training-data exporters: ``rolloutgym export RUN --format tokens|sft|dpo|hf|tinker``.

Each is a function ``export(run, out_path, **options) -> Path`` registered through the
``rolloutgym_exporters`` hook (see :mod:`rolloutgym.export.plugin`).
"""

from ._common import conversation, group_advantages
from .chat import export_dpo, export_sft
from .hf import export_hf
from .tokens import export_tinker, export_tokens

__all__ = [
    "conversation",
    "export_dpo",
    "export_hf",
    "export_sft",
    "export_tinker",
    "export_tokens",
    "group_advantages",
]
