"""Building a :class:`BuildContext` on a Docker Engine API endpoint: ``FROM`` lines mapped to local
images (``--image-map``), cached by the context's content hash, failures as one line with the log's tail."""

from __future__ import annotations

import hashlib
import io
import json
import re
import tarfile
import time
from collections.abc import Mapping
from pathlib import Path

from ._contract import LABEL, BuildContext, SandboxInfraError
from ._engine import EngineClient

__all__ = ["build_image", "map_from_lines", "parse_image_map", "prune_builds"]

BUILD_REPOSITORY = "localhost/rolloutgym-build"
_FROM = re.compile(r"^(\s*FROM\s+)((?:--\S+\s+)*)(\S+)(.*)$", re.IGNORECASE | re.MULTILINE)


def parse_image_map(values: str | list[str] | Mapping[str, str] | None) -> dict[str, str]:
    """``["python:3.11-slim=localhost/rolloutgym/bookworm-python", ...]`` (or one comma-separated string) as a dict."""
    if values is None:
        return {}
    if isinstance(values, Mapping):
        return {str(k): str(v) for k, v in values.items()}
    items = values.split(",") if isinstance(values, str) else list(values)
    mapped: dict[str, str] = {}
    for item in items:
        source, separator, target = item.strip().partition("=")
        if not separator or not source or not target:
            raise SandboxInfraError(
                f"--image-map {item!r}: give IMAGE=LOCAL_IMAGE, "
                "e.g. python:3.11-slim=localhost/rolloutgym/bookworm-python"
            )
        mapped[source] = target
    return mapped


def map_from_lines(dockerfile: str, image_map: Mapping[str, str]) -> tuple[str, list[str]]:
    """The Dockerfile with its ``FROM`` images mapped, and the images it needs (stage names left out)."""
    stages: set[str] = set()
    needed: list[str] = []

    def replace(match: re.Match[str]) -> str:
        image = match.group(3)
        target = image_map.get(image, image)
        alias = re.search(r"\bAS\s+(\S+)", match.group(4), re.IGNORECASE)
        if target.lower() not in stages and target != "scratch":
            needed.append(target)
        if alias:
            stages.add(alias.group(1).lower())
        return f"{match.group(1)}{match.group(2)}{target}{match.group(4)}"

    return _FROM.sub(replace, dockerfile), needed


def _context_tar(context: BuildContext, dockerfile_text: str) -> bytes:
    buffer = io.BytesIO()
    root = Path(context.path)
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        for path in sorted(root.rglob("*")):
            name = path.relative_to(root).as_posix()
            if name == context.dockerfile:
                continue
            archive.add(str(path), arcname=name, recursive=False)
        data = dockerfile_text.encode()
        info = tarfile.TarInfo(context.dockerfile)
        info.size, info.mode = len(data), 0o644
        archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def build_image(engine: EngineClient, context: BuildContext, *, owner: str) -> str:
    """The image of ``context``: found by its tag, or built now (the engine's log read to its end).

    The tag is a hash of the context's content, its image map and the ids of the base images it
    names: a rebuilt base image (``scripts/build_base_images.sh --force``) gives a new tag.

    Raises:
        SandboxInfraError: no Dockerfile, a ``FROM`` image missing locally (names ``--image-map``),
            or the build failed (the log's last lines).
    """
    dockerfile = Path(context.path) / context.dockerfile
    if not dockerfile.is_file():
        raise SandboxInfraError(f"{dockerfile}: no Dockerfile to build (a build context needs one)")
    text, needed = map_from_lines(dockerfile.read_text(encoding="utf-8", errors="replace"), context.image_map)
    hasher = hashlib.sha256(context.digest().encode())
    for image in needed:
        found = engine.image_id(image)
        hasher.update(f"\0{image}={found}".encode())
        if found is None:
            raise SandboxInfraError(
                f"{dockerfile}: the base image {image!r} is not on the engine at {engine.host} and nothing is pulled "
                f"offline: map it to a local image with --image-map {image}=localhost/rolloutgym/bookworm-python "
                "(built by scripts/build_base_images.sh), or pull it first"
            )
    tag = f"{BUILD_REPOSITORY}:{hasher.hexdigest()[:24]}"
    if engine.image_exists(tag):
        return tag
    labels = json.dumps({LABEL: "build", f"{LABEL}.digest": context.digest(), f"{LABEL}.owner": owner})
    params = {"t": tag, "dockerfile": context.dockerfile, "labels": labels, "rm": "1", "forcerm": "1", "pull": "0"}
    lines: list[str] = []
    failure: str | None = None
    with engine.stream(
        "POST",
        "/build",
        read_timeout=1800.0,
        params=params,
        content=_context_tar(context, text),
        headers={"Content-Type": "application/x-tar"},
    ) as response:
        if response.status_code != 200:
            response.read()
            failure = response.text.strip()[:500]
        else:
            for line in response.iter_lines():
                failure = _read_build_line(line, lines) or failure
    if failure is not None or not engine.image_exists(tag):
        tail = " | ".join(line for line in lines[-6:] if line.strip())[-900:]
        raise SandboxInfraError(f"{dockerfile}: the image did not build: {failure or 'no image came out'}; log: {tail}")
    return tag


def _read_build_line(line: str, lines: list[str]) -> str | None:
    if not line.strip():
        return None
    try:
        event = json.loads(line)
    except ValueError:
        lines.append(line)
        return None
    if not isinstance(event, dict):
        return None
    if event.get("error"):
        return str(event.get("error")).strip()
    text = event.get("stream")
    if isinstance(text, str):
        lines.extend(part for part in text.splitlines() if part.strip())
    return None


def prune_builds(engine: EngineClient, *, keep: int, min_age: float = 3600.0, labels: tuple[str, ...] = ()) -> int:
    """Remove the images this module built (label ``io.rolloutgym.sandbox=build``, and ``labels``)
    past the ``keep`` newest and older than ``min_age`` seconds; an image a container still uses is
    left (no force). The number removed."""
    wanted = [label.partition("=") for label in labels]  # filtered here: podman answers none for two label filters
    found = [
        image
        for image in engine.list_images(f"{LABEL}=build")
        if all((image.get("Labels") or {}).get(key) == value for key, _, value in wanted)
    ]
    builds = sorted(found, key=lambda image: int(image.get("Created") or 0))
    now = time.time()
    removed = 0
    for image in builds[: max(0, len(builds) - max(0, keep))]:
        if now - int(image.get("Created") or now) < min_age:
            continue
        if engine.remove_image(str(image["Id"]), force=False):
            removed += 1
    return removed
