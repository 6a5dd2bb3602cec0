"""``specmodel sweep``: the default grid, evaluated a chunk at a time and written to a CSV or
Parquet file that appears only once complete.

Chunks keep the peak memory flat however large the grid (:meth:`specmodel.grid.SweepPlan.frames`):
each is converted to an Arrow table and appended, as a row group of a Parquet file
(``pyarrow.parquet.ParquetWriter``) or as rows of a CSV file (``pyarrow.csv.CSVWriter``).
The file is the one pandas writes for the whole table at once (the same columns, order
and values; CSV numbers in the shortest form that reads back to the same double).
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import os
import signal
import stat
import sys
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from specmodel.cli.options import scenario_fields
from specmodel.errors import SpecModelError
from specmodel.model.drafters import check_declared_head
from specmodel.model.settings import Settings
from specmodel.safe_input import excerpt

SWEEP_FORMATS = (".csv", ".parquet")


def write_atomically(frames: Any, out: Path) -> int:
    """Write ``frames`` (a DataFrame, or an iterable of DataFrames with the same columns) to
    ``out`` (CSV or Parquet by extension; a string as it is) via a temporary file in the same folder, renamed
    into place only once complete, with the mode (and, where allowed, owner) of the file it
    replaces or else the umask's; the temporary file is removed on any failure, Ctrl-C or
    SIGTERM. Returns the rows written."""
    fd, tmp = tempfile.mkstemp(prefix=f".{out.name}.", dir=out.parent)
    os.close(fd)
    previous = signal.signal(signal.SIGTERM, _raise_interrupt)
    try:
        if isinstance(frames, str):  # a page of text (advise --report)
            rows = 0
            Path(tmp).write_text(frames, encoding="utf-8")
        elif hasattr(frames, "to_csv"):  # one table, written as pandas writes it
            rows = len(frames) if hasattr(frames, "__len__") else 0
            frames.to_csv(tmp, index=False) if out.suffix == ".csv" else frames.to_parquet(tmp, index=False)
        else:
            rows = _write_chunks(frames, Path(tmp), out.suffix)
        _take_mode(Path(tmp), out)
        _refuse_special(out)  # it may have changed while the grid was computed
        os.replace(tmp, out)
        return rows
    finally:
        signal.signal(signal.SIGTERM, previous)
        if os.path.exists(tmp):
            os.unlink(tmp)


def _write_chunks(frames: Iterable[Any], path: Path, suffix: str) -> int:
    """Append each DataFrame of ``frames`` to ``path``: a Parquet row group, or CSV rows
    after one header. Returns the rows written."""
    import pyarrow as pa  # type: ignore[import-untyped]

    closing: list[Any] = []  # the writer, then the file it writes to
    schema: Any = None
    rows = 0
    try:
        for frame in frames:
            table = pa.Table.from_pandas(frame, preserve_index=False)
            table = csv_table(table) if suffix == ".csv" else table
            if schema is None:
                schema = table.schema
                closing = _csv_writer(path, table) if suffix == ".csv" else _parquet_writer(path, schema)
            closing[0].write_table(table if table.schema == schema else table.cast(schema))
            rows += table.num_rows
    finally:
        for item in closing:
            item.close()
    return rows


def _parquet_writer(path: Path, schema: Any) -> list[Any]:
    """A ``pyarrow.parquet.ParquetWriter`` to ``path``: one row group per table written."""
    import pyarrow.parquet as pq  # type: ignore[import-untyped]

    return [pq.ParquetWriter(str(path), schema)]


def _csv_writer(path: Path, table: Any) -> list[Any]:
    """A ``pyarrow.csv.CSVWriter`` appending to ``path`` after a header line written as
    pandas writes it (names quoted only where they need it), and the file it writes to."""
    import pyarrow as pa
    import pyarrow.csv as pacsv  # type: ignore[import-untyped]

    with open(path, "w", newline="", encoding="utf-8") as f:
        csv.writer(f, lineterminator="\n").writerow(table.schema.names)
    sink = pa.OSFile(str(path), mode="a")
    options = pacsv.WriteOptions(include_header=False, quoting_style=_quoting(table))
    return [pacsv.CSVWriter(sink, table.schema, write_options=options), sink]


def csv_table(table: Any) -> Any:
    """``table`` with booleans and floats as text, as pandas writes them in a CSV file:
    ``True``/``False``, a float that Arrow would print as an integer with ``.0``, a one-digit
    exponent with two (``2.5e-07``), and an exponent from 1e-4 down (``4.1e-05``, where Arrow
    writes ``0.000041``). Both print the shortest text that reads back to the same double."""
    import pyarrow as pa
    import pyarrow.compute as pc  # type: ignore[import-untyped]

    for i, field in enumerate(table.schema):
        if pa.types.is_boolean(field.type):
            text = pc.if_else(table.column(i), "True", "False")
        elif pa.types.is_floating(field.type):
            values = table.column(i)
            text = pc.cast(values, pa.string())
            if pc.any(pc.equal(pc.floor(values), values)).as_py():  # some may print as integers
                whole = pc.match_substring_regex(text, r"^-?[0-9]+$")
                text = pc.if_else(whole, pc.binary_join_element_wise(text, ".0", ""), text)
            if pc.any(pc.match_substring(text, "e")).as_py():
                text = pc.replace_substring_regex(text, r"e([-+])([0-9])$", r"e\10\2")  # \1, then 0
            if pc.any(pc.match_substring(text, "0.0000")).as_py():
                text = _small_as_exponent(text, pc)
        else:
            continue
        table = table.set_column(i, pa.field(field.name, pa.string()), text)
    return table.replace_schema_metadata(None)


def _small_as_exponent(text: Any, pc: Any) -> Any:
    """Arrow's ``0.0000412`` and ``0.000001`` as Python writes them, ``4.12e-05`` and ``1e-06``
    (Python uses an exponent below 1e-4, Arrow below 1e-6)."""
    for zeros, exponent in (("0000", "05"), ("00000", "06")):
        text = pc.replace_substring_regex(text, rf"^(-?)0\.{zeros}([1-9])([0-9]+)$", rf"\1\2.\3e-{exponent}")
        text = pc.replace_substring_regex(text, rf"^(-?)0\.{zeros}([1-9])$", rf"\1\2e-{exponent}")
    return text


def _quoting(table: Any) -> str:
    """``none`` (plain text, as pandas writes it) unless a text value holds a comma, a quote
    or a line break, which need quotes."""
    import pyarrow as pa
    import pyarrow.compute as pc

    for column, field in zip(table.columns, table.schema):
        text = pa.types.is_string(field.type) or pa.types.is_large_string(field.type)
        if text and pc.any(pc.match_substring_regex(column, '[,"\r\n]')).as_py():
            return "needed"
    return "none"


def _take_mode(tmp: Path, out: Path) -> None:
    """Give ``tmp`` the mode of the regular file ``out`` it will replace (and its owner and
    group where the process may set them), or else the umask's mode for a new file."""
    try:
        old = out.stat()
    except FileNotFoundError:
        mask = os.umask(0)
        os.umask(mask)
        os.chmod(tmp, 0o666 & ~mask)
        return
    os.chmod(tmp, stat.S_IMODE(old.st_mode))
    if (old.st_uid, old.st_gid) != (os.getuid(), os.getgid()):
        with contextlib.suppress(PermissionError):
            os.chown(tmp, old.st_uid, old.st_gid)


def _raise_interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


def _refuse_special(out: Path) -> None:
    """Refuse an ``out`` that is a symbolic link, or exists and is not a regular file (a
    FIFO, a device, a socket): replacing it would lose what it is; and a path the system
    cannot name (too long, a folder that is a file)."""
    try:
        mode = out.lstat().st_mode
    except FileNotFoundError:
        return
    except OSError as exc:
        raise SpecModelError(f"--out {excerpt(str(out))}: {exc.strerror or exc}") from None
    if stat.S_ISLNK(mode):
        raise SpecModelError(f"--out {excerpt(str(out))} is a symbolic link; give the path of a regular file")
    if stat.S_ISDIR(mode):
        raise SpecModelError(f"--out {excerpt(str(out))} is a folder; give a file name ending in .csv or .parquet")
    if not stat.S_ISREG(mode):
        raise SpecModelError(f"--out {excerpt(str(out))} is not a regular file (a FIFO, device or socket); refusing")


def check_sweep_output(out: Path) -> None:
    """Refuse an output path before computing anything: a known extension, an existing
    folder that we may write in, and at the path itself nothing or a regular file (no
    folder, symbolic link, FIFO or device)."""
    if out.suffix not in SWEEP_FORMATS:
        raise SpecModelError(f"--out {excerpt(str(out))} has an unknown extension; allowed: {', '.join(SWEEP_FORMATS)}")
    _refuse_special(out)
    parent = out.parent
    if not parent.is_dir():
        raise SpecModelError(f"--out {excerpt(str(out))}: folder {excerpt(str(parent))} does not exist")
    if not os.access(parent, os.W_OK) or str(parent.resolve()).startswith(("/proc", "/sys", "/dev")):
        raise SpecModelError(f"--out {excerpt(str(out))}: cannot write in folder {excerpt(str(parent))}")


def run_sweep(args: argparse.Namespace, settings: Settings) -> str:
    from specmodel.grid import plan_sweep, require_table_modules  # pandas is only needed here

    out: Path = args.out
    check_sweep_output(out)
    require_table_modules(out.suffix)
    if out.suffix == ".csv":
        require_table_modules(".parquet")  # the CSV writer is pyarrow's too
    fields = {k: v for k, v in scenario_fields(args).items() if k not in ("concurrency", "context")}
    plan = plan_sweep(settings=settings, **fields)
    drafter = getattr(args, "drafter", None)
    if drafter is not None:  # the default grid prices a hypothetical MTP head; a drafter given must exist
        check_declared_head(drafter, plan.fields["target"] or settings.deployment.target)
    for note in plan.notes:
        print(f"specmodel: note: {note}", file=sys.stderr)
    try:
        rows = write_atomically(plan.frames(), out)
    except OSError as exc:
        raise SpecModelError(f"--out {excerpt(str(out))}: cannot write: {exc.strerror or exc}") from None
    return f"wrote {rows:,} scenarios to {out}"
