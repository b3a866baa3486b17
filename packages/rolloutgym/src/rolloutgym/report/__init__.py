"""Self-contained HTML reports of run files and training logs (``rolloutgym report``, ``rolloutgym view``).

    from rolloutgym.report import build_report
    result = build_report(["runs/shop.jsonl"], "shop.html")
    result = build_report(["trained/digits/training_log.jsonl"])  # curves, one plot per metric

The report needs the ``report`` extra (``pip install 'rolloutgym[report]'``, for matplotlib),
imported only when a report is built.
"""

from ._collect import RunDigest
from .build import ReportResult, build_report, build_training_report, default_report_path
from .serve import ReportServer

__all__ = [
    "ReportResult",
    "ReportServer",
    "RunDigest",
    "build_report",
    "build_training_report",
    "default_report_path",
]
