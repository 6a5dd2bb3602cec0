"""``specmodel sweep``: the default grid, evaluated and written to a CSV or Parquet file that
appears only once complete."""

from __future__ import annotations

import argparse
import os
import signal
import tempfile
from pathlib import Path
from typing import Any

from specmodel.cli.options import scenario_fields
from specmodel.errors import SpecModelError
from specmodel.model.settings import Settings
from specmodel.safe_input import excerpt

SWEEP_FORMATS = (".csv", ".parquet")


def write_atomically(frame: Any, out: Path) -> None:
    """Write ``frame`` to ``out`` (CSV or Parquet by extension) via a temporary file in the
    same folder, renamed into place only once complete; the temporary file is removed on
    any failure, Ctrl-C or SIGTERM."""
    fd, tmp = tempfile.mkstemp(prefix=f".{out.name}.", dir=out.parent)
    os.close(fd)
    previous = signal.signal(signal.SIGTERM, _raise_interrupt)
    try:
        if out.suffix == ".csv":
            frame.to_csv(tmp, index=False)
        else:
            frame.to_parquet(tmp, index=False)
        mask = os.umask(0)
        os.umask(mask)
        os.chmod(tmp, 0o666 & ~mask)
        os.replace(tmp, out)
    finally:
        signal.signal(signal.SIGTERM, previous)
        if os.path.exists(tmp):
            os.unlink(tmp)


def _raise_interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


def check_sweep_output(out: Path) -> None:
    """Refuse an output path before computing anything: a known extension, an existing
    folder that we may write in, and no folder at the path itself."""
    if out.suffix not in SWEEP_FORMATS:
        raise SpecModelError(f"--out {excerpt(str(out))} has an unknown extension; allowed: {', '.join(SWEEP_FORMATS)}")
    if out.is_dir():
        raise SpecModelError(f"--out {excerpt(str(out))} is a folder; give a file name ending in .csv or .parquet")
    parent = out.parent
    if not parent.is_dir():
        raise SpecModelError(f"--out {excerpt(str(out))}: folder {excerpt(str(parent))} does not exist")
    if not os.access(parent, os.W_OK) or str(parent.resolve()).startswith(("/proc", "/sys", "/dev")):
        raise SpecModelError(f"--out {excerpt(str(out))}: cannot write in folder {excerpt(str(parent))}")


def run_sweep(args: argparse.Namespace, settings: Settings) -> str:
    from specmodel.grid import require_table_modules, sweep  # pandas is only needed here

    out: Path = args.out
    check_sweep_output(out)
    require_table_modules(out.suffix)
    fields = {k: v for k, v in scenario_fields(args).items() if k not in ("concurrency", "context")}
    frame = sweep(settings=settings, **fields)
    try:
        write_atomically(frame, out)
    except OSError as exc:
        raise SpecModelError(f"--out {excerpt(str(out))}: cannot write: {exc.strerror or exc}") from None
    return f"wrote {len(frame):,} scenarios to {out}"
