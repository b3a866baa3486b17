"""mkdocs hook: links from docs/ to files elsewhere in the repository (a plugin's README,
benchmarks/README.md) are checked on disk and shown as repository paths.

mkdocs can only link pages inside ``docs/``; without this hook such links would be reported
as missing. A link whose file does not exist in the repository is still reported (a warning,
which ``mkdocs build --strict`` turns into a failure).
"""

from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import Any

log = logging.getLogger("mkdocs.hooks.rolloutgym")
_LINK = re.compile(r"\[([^\]]*)\]\(([^)\s#]+)(#[^)]*)?\)")


def on_page_markdown(markdown: str, *, page: Any, config: Any, files: Any) -> str:
    docs_dir = Path(config["docs_dir"]).resolve()
    root = docs_dir.parent
    source = (docs_dir / page.file.src_path).parent

    def replace(match: re.Match[str]) -> str:
        text, target = match.group(1), match.group(2)
        if re.match(r"^[a-z]+:", target):
            return match.group(0)
        resolved = (source / target).resolve()
        if resolved.is_relative_to(docs_dir):
            return match.group(0)  # mkdocs checks links inside docs/ itself
        if not resolved.exists():
            log.warning("%s links to %s, which does not exist in the repository", page.file.src_path, target)
            return match.group(0)
        return f"{text} (`{resolved.relative_to(root).as_posix()}` in the repository)"

    return _LINK.sub(replace, markdown)
