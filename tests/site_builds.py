"""Builds of the site for the tests: in a copy of what ``mkdocs build`` reads, so that builds in
several processes never write the repository's own docs/generated, and at most once per test
session for what many tests only read."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from filelock import FileLock

ROOT = Path(__file__).resolve().parents[1]


def build_env(site_url: str = "http://127.0.0.1:8000/") -> dict[str, str]:
    """The environment of a site build: the repository importable, the site built for ``site_url``."""
    return {
        **os.environ,
        "NO_MKDOCS_2_WARNING": "1",
        "SITE_URL": site_url,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    }


def project_copy(destination: Path, *, generated: Path | None = None) -> Path:
    """What ``mkdocs build`` reads (docs/ without its generated folder, hooks/, mkdocs.yml) copied to
    ``destination``, with ``generated`` copied in as docs/generated when given: a build there never
    touches the repository's own docs/generated, so builds in several processes cannot race."""
    shutil.copytree(ROOT / "docs", destination / "docs", ignore=shutil.ignore_patterns("generated"))
    shutil.copytree(ROOT / "hooks", destination / "hooks")
    shutil.copy(ROOT / "mkdocs.yml", destination / "mkdocs.yml")
    if generated is not None:
        shutil.copytree(generated, destination / "docs" / "generated")
    return destination


def mkdocs_build(project: Path, site_dir: Path | None = None, site_url: str = "http://127.0.0.1:8000/"):
    """``mkdocs build --strict`` of the project copy ``project`` (into its site/ or ``site_dir``)."""
    where = ["--site-dir", str(site_dir)] if site_dir is not None else []
    return subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", *where], cwd=project,
                          capture_output=True, text=True, env=build_env(site_url))  # fmt: skip


def once(shared: Path, name: str, make: Callable[[Path], object]) -> Path:
    """``shared / name``, made by ``make(path)`` by the first process of the session that asks
    for it (the others wait for it under a lock and reuse it); a failed make is not kept."""
    path, done = shared / name, shared / f"{name}.done"
    with FileLock(shared / f"{name}.lock"):
        if not done.exists():
            shutil.rmtree(path, ignore_errors=True)
            make(path)
            done.touch()
    return path
