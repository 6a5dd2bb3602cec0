"""Writing the generated folder without ever destroying a file the build did not create.

The build writes into a fresh hidden folder beside the destination and swaps it in only when
every file is written. It replaces a destination only if that is an empty folder or a folder
an earlier build wrote, which it recognises by the stamp file it leaves there
(:data:`STAMP`); anything else (a file, a folder of the user's) is refused before anything is
computed, and left as it was.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from specmodel.errors import SpecModelError
from specmodel.safe_input import excerpt

#: The file a build leaves in the folder it writes, to recognise that folder later.
STAMP = ".specmodel-build"
STAMP_TEXT = "Written by build_figures.py; the next build may replace this folder.\n"


def check_destination(destination: Path) -> None:
    """Raise unless ``destination`` may be written: absent, an empty folder, or a folder with
    the build's stamp."""
    where = f"--out {excerpt(str(destination), 200)}"
    if destination.is_symlink() or (destination.exists() and not destination.is_dir()):
        raise SpecModelError(f"{where} is a file, not a folder; refusing to replace it (give a folder to write into)")
    if destination.is_dir() and not (destination / STAMP).is_file() and any(destination.iterdir()):
        raise SpecModelError(f"{where} holds files that build_figures.py did not write; refusing to replace them "
                             "(give a new or empty folder, or one an earlier build wrote)")  # fmt: skip
    parent = destination.parent
    if parent.exists() and not parent.is_dir():
        raise SpecModelError(f"{where}: {excerpt(str(parent), 200)} is not a folder")


def write_tree(files: dict[str, str | bytes], destination: Path) -> None:
    """Write ``files`` (and the stamp) into a temporary sibling of ``destination`` and swap it
    in; the previous build's folder is moved aside into a folder of our own and removed."""
    check_destination(destination)
    destination.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{destination.name}-new-", dir=destination.parent))
    aside = None
    try:
        for rel, text in {**files, STAMP: STAMP_TEXT}.items():
            path = staging / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(text, bytes):
                path.write_bytes(text)
            else:
                path.write_text(text, encoding="utf-8")
        if destination.exists():
            aside = Path(tempfile.mkdtemp(prefix=f".{destination.name}-old-", dir=destination.parent))
            destination.rename(aside / "previous")
        staging.rename(destination)
    finally:
        if staging.exists():
            shutil.rmtree(staging)
        if aside is not None:
            shutil.rmtree(aside)
