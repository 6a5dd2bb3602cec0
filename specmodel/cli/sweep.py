"""``specmodel sweep``: the default grid, or the axes given (``--concurrency 8,16,32 --gamma 1-4``:
lists and inclusive ranges, :func:`parse_axis`), evaluated a chunk at a time and written to a
CSV or Parquet file that appears only once complete.

Chunks keep the peak memory flat however large the grid (:meth:`specmodel.grid.SweepPlan.frames`):
each is converted to an Arrow table and appended, as a row group of a Parquet file
(``pyarrow.parquet.ParquetWriter``) or as rows of a CSV file (``pyarrow.csv.CSVWriter``).
The file is the one pandas writes for the whole table at once (the same columns, order
and values; CSV numbers in the shortest form that reads back to the same double).
"""

from __future__ import annotations

import argparse
import csv
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from specmodel.cli.options import (
    decimal_number,
    deployment_options,
    engine_options,
    name_text,
    parallel_options,
    rates,
    scenario_fields,
    whole_number,
)
from specmodel.errors import SpecModelError
from specmodel.model.drafters import check_declared_head
from specmodel.model.scenario import AXES, GRID_AXIS_VALUES, PROFILES
from specmodel.model.settings import Settings
from specmodel.output_path import check_output, command_inputs, replace_file
from specmodel.safe_input import excerpt

SWEEP_FORMATS = (".csv", ".parquet")


#: What ``sweep --out`` takes, as its refusals say it.
SWEEP_TAKES = "a file name ending in .csv or .parquet"


def write_atomically(frames: Any, out: Path, option: str = "--out", takes: str = SWEEP_TAKES) -> int:
    """Write ``frames`` (a DataFrame, or an iterable of DataFrames with the same columns) to
    ``out`` (CSV or Parquet by extension; a string as it is) through
    :func:`specmodel.output_path.replace_file`: a temporary file in the same folder, renamed into
    place only once complete, with the mode and owner of the file it replaces; ``option`` and
    ``takes`` word a refusal. Returns the rows written."""

    def write(tmp: Path) -> int:
        if isinstance(frames, str):  # a page of text (advise --report)
            tmp.write_text(frames, encoding="utf-8")
            return 0
        if hasattr(frames, "to_csv"):  # one table, written as pandas writes it
            frames.to_csv(tmp, index=False) if out.suffix == ".csv" else frames.to_parquet(tmp, index=False)
            return len(frames) if hasattr(frames, "__len__") else 0
        return _write_chunks(frames, tmp, out.suffix)

    return replace_file(out, write, option, takes)


def _write_chunks(chunks: Iterable[Any], path: Path, suffix: str) -> int:
    """Append each chunk of ``chunks`` (a DataFrame, an Arrow table, or a dict of 1-d arrays, all
    with the same columns) to ``path``: a Parquet row group, or CSV rows after one header. The
    first chunk opens the file; each later one is formatted and written in a thread while the
    next is computed. Returns the rows written."""
    from concurrent.futures import Future, ThreadPoolExecutor

    sink = _TableSink(path, suffix)
    rows = 0
    pending: Future[None] | None = None
    try:
        with ThreadPoolExecutor(max_workers=1) as pool:
            for chunk in chunks:
                table = arrow_table(chunk, pandas_schema=sink.schema is None and suffix == ".parquet")
                if pending is not None:
                    pending.result()
                if sink.schema is None:
                    sink.write(table)
                else:
                    pending = pool.submit(sink.write, table)
                rows += table.num_rows
            if pending is not None:
                pending.result()
    finally:
        sink.close()
    return rows


class _TableSink:
    """Where the chunks go: a Parquet file's row groups, or a CSV file's rows after its header;
    opened by the first table written, whose schema the others are cast to."""

    def __init__(self, path: Path, suffix: str) -> None:
        self.path, self.csv = path, suffix == ".csv"
        self.schema: Any = None
        self.closing: list[Any] = []  # the writer, then the file it writes to

    def write(self, table: Any) -> None:
        table = csv_table(table) if self.csv else table
        if self.schema is None:
            self.schema = table.schema
            self.closing = _csv_writer(self.path, table) if self.csv else _parquet_writer(self.path, self.schema)
        self.closing[0].write_table(table if table.schema == self.schema else table.cast(self.schema))

    def close(self) -> None:
        for item in self.closing:
            item.close()


def arrow_table(chunk: Any, pandas_schema: bool = False) -> Any:
    """``chunk`` (a DataFrame, an Arrow table, or a dict of 1-d arrays) as the Arrow table
    ``pyarrow.Table.from_pandas`` makes of it: NaN as null, text as ``large_string``;
    ``pandas_schema``: with the pandas metadata too (as a Parquet file's schema holds it).
    A dict is converted without pandas (``pyarrow.array`` would import it)."""
    import pyarrow as pa  # type: ignore[import-untyped]

    if isinstance(chunk, pa.Table):
        return chunk
    if isinstance(chunk, dict) and not pandas_schema:
        return pa.table({name: _arrow_array(values, pa) for name, values in chunk.items()})
    if isinstance(chunk, dict):
        import pandas as pd

        chunk = pd.DataFrame(chunk)
    return pa.Table.from_pandas(chunk, preserve_index=False)


def _arrow_array(values: Any, pa: Any) -> Any:
    """One column as ``from_pandas`` converts it, built on the array's own buffers: text as
    ``large_string``, a float NaN as null, booleans packed in bits."""
    import numpy as np

    n = len(values)
    if values.dtype.kind in "US":
        return _arrow_text(values, pa)
    if values.dtype.kind not in "biuf":  # Python objects: as pyarrow infers them
        return pa.array(values, from_pandas=True)
    if values.dtype.kind == "b":
        return pa.Array.from_buffers(pa.bool_(), n, [None, pa.py_buffer(np.packbits(values, bitorder="little"))])
    values = np.ascontiguousarray(values)
    nan = np.isnan(values) if values.dtype.kind == "f" else np.zeros(0, dtype=bool)
    nulls = int(nan.sum())
    validity = pa.py_buffer(np.packbits(~nan, bitorder="little")) if nulls else None
    return pa.Array.from_buffers(
        pa.from_numpy_dtype(values.dtype), n, [validity, pa.py_buffer(values)], null_count=nulls
    )


def _arrow_text(values: Any, pa: Any) -> Any:
    """A text column, as its distinct values taken by index; a grid's text changes in runs
    (an axis broadcast), so the distinct values are found among the runs' first values."""
    import numpy as np

    n = len(values)
    change = np.ones(n, dtype=bool)
    np.not_equal(values[1:], values[:-1], out=change[1:])
    starts = np.flatnonzero(change)
    distinct, inverse = np.unique(values[starts], return_inverse=True)
    index = np.repeat(inverse.astype(np.int64), np.diff(np.append(starts, n)))
    data = [str(item).encode("utf-8") for item in distinct]
    offsets = np.cumsum([0] + [len(item) for item in data], dtype=np.int64)
    buffers = [None, pa.py_buffer(offsets), pa.py_buffer(b"".join(data))]
    dictionary = pa.Array.from_buffers(pa.large_string(), len(data), buffers)
    return dictionary.take(pa.Array.from_buffers(pa.int64(), n, [None, pa.py_buffer(index)]))


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
            text = _float_text(table.column(i).combine_chunks(), pa, pc)
        else:
            continue
        table = table.set_column(i, pa.field(field.name, pa.string()), text)
    return table.replace_schema_metadata(None)


def _float_text(values: Any, pa: Any, pc: Any) -> Any:
    """A float column as pandas writes it (:func:`_float_values_text`); a column with few
    distinct values (most of a grid's, which depend on a few axes: a guess from its first
    rows) formats each distinct value once, then takes them by index."""
    head = values.slice(0, _SAMPLE)
    if len(values) > _SAMPLE and 2 * pc.count_distinct(head).as_py() < len(head):
        encoded = pc.dictionary_encode(values)
        return _float_values_text(encoded.dictionary, pa, pc).take(encoded.indices)
    return _float_values_text(values, pa, pc)


#: Rows of a float column whose distinct values guess whether the column has few.
_SAMPLE = 4096


def _float_values_text(values: Any, pa: Any, pc: Any) -> Any:
    """A float column as pandas writes it. A whole number under 1e15 is its integer and ``.0``
    (cast as an integer, faster than as a float); Arrow's shortest text of any other number
    from 1e-3 to 1e15 is already Python's; the rest (tiny, huge, -0, NaN, infinite) take
    :func:`_pandas_text`, so only they pay for its regular expressions."""
    import numpy as np

    v = values.to_numpy(zero_copy_only=False)
    with np.errstate(invalid="ignore"):
        size = np.abs(v)
        whole = (v == np.floor(v)) & (size < 1e15) & ~((v == 0) & np.signbit(v))
        other = ~whole & ~((size >= 1e-3) & (size < 1e15))
    integers = pc.binary_join_element_wise(pc.cast(pa.array(v[whole].astype(np.int64)), pa.string()), ".0", "")
    if whole.all():
        return integers
    text = pc.cast(values, pa.string())
    if whole.any():
        text = pc.replace_with_mask(text, pa.array(whole), integers)
    if other.any():
        text = pc.replace_with_mask(text, pa.array(other), _pandas_text(text.filter(pa.array(other)), pc))
    return text


def _pandas_text(text: Any, pc: Any) -> Any:
    """Arrow's text of floats rewritten as Python writes them (see :func:`csv_table`)."""
    whole = pc.match_substring_regex(text, r"^-?[0-9]+$")
    text = pc.if_else(whole, pc.binary_join_element_wise(text, ".0", ""), text)
    text = pc.replace_substring_regex(text, r"e([-+])([0-9])$", r"e\10\2")  # \1, then 0
    return _small_as_exponent(text, pc)


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


def check_sweep_output(out: Path, inputs: Iterable[tuple[str, Any]] = ()) -> None:
    """Refuse an output path before computing anything: a known extension, and what
    :func:`specmodel.output_path.check_output` refuses (``inputs``: the command's input files)."""
    if out.suffix not in SWEEP_FORMATS:
        raise SpecModelError(f"--out {excerpt(str(out))} has an unknown extension; allowed: {', '.join(SWEEP_FORMATS)}")
    check_output(out, "--out", SWEEP_TAKES, inputs=inputs)


#: Most values one axis option may give (a range's included): more is a typing slip, not a sweep.
MAX_AXIS_VALUES = 10_000

#: The options that set a sweep's axes, and its cards and models, one row each: the axis, the
#: kind of its items (whole numbers take ranges), the metavar and what the axis is.
AXIS_OPTIONS = (
    ("concurrency", "whole", "B,...", "concurrent sequences"),
    ("context", "whole", "T,...", "prompt tokens per sequence"),
    ("gamma", "whole", "N,...", "draft tokens per iteration"),
    ("drafter", "name", "NAME,...", "drafters (default: every one that can serve the target)"),
    ("acceptance", "profile", "PROFILE,...", "acceptance profiles"),
    ("alpha", "decimal", "A,...", "acceptance of the first guess"),
    ("engine", "name", "NAME,...", "engine profiles"),
    ("tensor_parallel", "whole", "N,...", "GPUs the target is split over (default: those the card and model allow)"),
    ("hardware", "name", "NAME,...", "accelerators"),
    ("target", "name", "NAME,...", "target models"),
)


def parse_axis(text: str, kind: str) -> tuple[Any, ...]:
    """One axis option's values, in the order given: items separated by commas; whole numbers
    also as an inclusive range (``1-4``); names and profiles as they are. An empty, malformed
    or repeated item is refused, naming it.

    >>> parse_axis("8,16, 32", "whole"), parse_axis("1-4", "whole"), parse_axis("1,4-6", "whole")
    ((8, 16, 32), (1, 2, 3, 4), (1, 4, 5, 6))
    >>> parse_axis("0.6,0.75", "decimal"), parse_axis("ideal,vllm", "name")
    ((0.6, 0.75), ('ideal', 'vllm'))
    """
    values: list[Any] = []
    seen: set[Any] = set()
    for item in text.split(","):
        for value in _axis_item(item.strip(), kind, text):
            if value in seen:
                raise argparse.ArgumentTypeError(f"{excerpt(str(value))} is given twice in {excerpt(text)}")
            seen.add(value)
            values.append(value)
        if len(values) > MAX_AXIS_VALUES:
            raise argparse.ArgumentTypeError(f"{excerpt(text)} gives more than {MAX_AXIS_VALUES:,} values")
    return tuple(values)


def _axis_item(item: str, kind: str, text: str) -> list[Any]:
    """The values of one item of an axis option (a range gives several)."""
    if not item:
        raise argparse.ArgumentTypeError(f"an item of {excerpt(text)} is empty; give values separated by commas")
    what = {"whole": "a whole number or a range such as 1-4", "decimal": "a decimal number such as 0.75",
            "profile": f"one of {', '.join(PROFILES)}", "name": "a name"}[kind]  # fmt: skip
    try:
        if kind == "whole":
            return _whole_range(item)
        if kind == "profile" and item not in PROFILES:
            raise argparse.ArgumentTypeError(item)
        return [decimal_number(item) if kind == "decimal" else name_text(item)]
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(f"item {excerpt(item)} of {excerpt(text)} is not {what}") from None


def _whole_range(item: str) -> list[int]:
    """``4`` or the inclusive range ``1-4``; a range that runs backwards or past
    :data:`MAX_AXIS_VALUES` is refused."""
    low, dash, high = item.partition("-")
    if not dash or not low.strip():  # no range (or a negative number, refused by the model)
        return [whole_number(item)]
    first, last = whole_number(low), whole_number(high)
    if last < first or last - first >= MAX_AXIS_VALUES:
        raise argparse.ArgumentTypeError(item)
    return list(range(first, last + 1))


def _axis_type(kind: str) -> Any:
    """``parse_axis`` for ``kind``, as an argparse ``type``."""

    def parse(text: str) -> tuple[Any, ...]:
        return parse_axis(text, kind)

    return parse


def add_sweep_parser(sub: Any, settings: Settings) -> None:
    """``specmodel sweep``: its output, the measured acceptance, the engine and deployment
    options, and one option per axis (a list or range; an axis not given keeps the default
    grid's values)."""
    parser = sub.add_parser(
        "sweep", conflict_handler="resolve", help="evaluate the default grid and write it to a file",
        description="Evaluate the default grid (every concurrency, context, gamma, drafter, acceptance profile, "
        "alpha, engine and tensor-parallel degree), or the axes given, and write one row per scenario.",
    )  # fmt: skip
    parser.add_argument("--out", required=True, type=Path, help="output file, .csv or .parquet")
    parser.add_argument("--per-position", type=rates, metavar="U1,U2,...", default=None,
                        help="measured per-position acceptance for every scenario (replaces the acceptance and "
                        "alpha axes; gamma is its length)")  # fmt: skip
    parser.add_argument("--mean-acceptance-length", type=float, metavar="M", default=None,
                        help="measured mean acceptance length for every scenario (replaces the acceptance and alpha "
                        "axes; the gammas that cannot reach it, gamma + 1 <= M, are left out and named)")  # fmt: skip
    engine_options(parser, settings)
    deployment_options(parser, settings)
    parallel_options(parser, grid=True)
    for name, kind, metavar, what in AXIS_OPTIONS:  # replaces --engine, --hardware, --target, --tensor-parallel
        _axis_option(parser, name, kind, metavar, what, settings)
    parser.set_defaults(engine=None)  # --engine-profile's engine (specmodel.cli.options.with_engine_profile)


def _axis_option(parser: Any, name: str, kind: str, metavar: str, what: str, settings: Settings) -> None:
    """The option of axis ``name``, under every name the option it replaces had (its aliases)."""
    option = f"--{name.replace('_', '-')}"
    replaced = parser._option_string_actions.get(option)
    names = replaced.option_strings if replaced is not None else [option]
    default = "" if "(default" in what else f" (default: {_default_values(name, settings)})"
    ranges = " or range, 8,16,32 or 1-4" if kind == "whole" else ""
    column = f"; with more than one, a {name} column leads each row" if name in ("hardware", "target") else ""
    parser.add_argument(*names, dest=f"{name}_axis", type=_axis_type(kind), metavar=metavar, default=None,
                        help=f"{what}{default}; a comma-separated list{ranges}{column}")  # fmt: skip


def _default_values(name: str, settings: Settings) -> str:
    """The default grid's values of axis ``name``, as its help shows them."""
    if name in ("hardware", "target"):
        return str(getattr(settings.deployment, name))
    values = GRID_AXIS_VALUES[name]
    return f"{values[0]}..{values[-1]}" if name in ("concurrency", "context") else ", ".join(map(str, values))


def sweep_axes(args: argparse.Namespace) -> dict[str, list[Any]]:
    """The axes the options give (an axis left out keeps the default grid's values); with
    ``--engine-profile``, its engine is the engine axis, or must be among the ``--engine`` given."""
    axes = {name: list(values) for name in AXES if (values := getattr(args, f"{name}_axis", None)) is not None}
    key = getattr(args, "engine", None)  # set by --engine-profile
    if key is not None and key not in axes.setdefault("engine", [key]):
        raise SpecModelError(
            f"--engine {excerpt(','.join(axes['engine']))} leaves out the engine of --engine-profile, {key!r}; "
            "add it or leave --engine out"
        )
    return axes


def run_sweep(args: argparse.Namespace, settings: Settings) -> str:
    from specmodel.grid import require_table_modules

    out: Path = args.out
    check_sweep_output(out, command_inputs(args))
    require_table_modules(out.suffix)
    fields = {k: v for k, v in scenario_fields(args).items() if k not in (*AXES, "hardware", "target")}
    hardware = list(getattr(args, "hardware_axis", None) or [settings.deployment.hardware])
    targets = list(getattr(args, "target_axis", None) or [settings.deployment.target])
    plans = _plans(hardware, targets, sweep_axes(args), fields, settings)
    for note in dict.fromkeys(note for _, plan in plans for note in plan.notes):
        print(f"specmodel: note: {note}", file=sys.stderr)
    labels = tuple(name for name, given in (("hardware", hardware), ("target", targets)) if len(given) > 1)
    try:
        rows = write_atomically(_labelled_chunks(plans, labels), out)
    except OSError as exc:
        raise SpecModelError(f"--out {excerpt(str(out))}: cannot write: {exc.strerror or exc}") from None
    return f"wrote {rows:,} scenarios to {out}"


def _plans(
    hardware: list[str], targets: list[str], axes: dict[str, list[Any]], fields: dict[str, Any], settings: Settings
) -> list[tuple[dict[str, str], Any]]:
    """A checked plan (:func:`specmodel.grid.plan_sweep`) for each card and target, cards
    outermost; every drafter given must be one the target ships (:func:`check_declared_head`)."""
    from specmodel.grid import plan_sweep

    plans = []
    for card in hardware:
        for target in targets:
            for drafter in axes.get("drafter", ()):  # the default grid prices a hypothetical MTP head
                check_declared_head(drafter, target)
            given: dict[str, Any] = {**fields, **axes}
            plan = plan_sweep(hardware=card, target=target, settings=settings, **given)
            plans.append(({"hardware": card, "target": target}, plan))
    return plans


def _labelled_chunks(plans: list[tuple[dict[str, str], Any]], labels: tuple[str, ...]) -> Iterator[dict[str, Any]]:
    """The plans' columns a chunk at a time, led by a column for each of ``labels`` (the card,
    the target) that the sweep has more than one of."""
    import numpy as np

    for label, plan in plans:
        for columns in plan.column_chunks():
            rows = len(next(iter(columns.values())))
            yield {**{name: np.full(rows, label[name]) for name in labels}, **columns}
