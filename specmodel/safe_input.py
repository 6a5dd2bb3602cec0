"""Reading what a user hands us, within bounds: files of limited size read whole, logs of any
size streamed line by line, records validated with one-line errors; structured text (YAML,
TOML, JSON) is :mod:`specmodel.structured_input`'s.

Every reader here raises :class:`~specmodel.errors.SpecModelError` with one line that names
the input and never echoes more than a short excerpt of it. Every file is opened by
:func:`open_input`, without blocking: only a regular file is read (a FIFO, a device or a
socket is refused at once). A gzip-compressed file (found by its
first bytes, whatever its name) is read decompressed, within the same limits, the decompressed
size counted; ``-`` (standard input) is copied once to a temporary file (:func:`standard_input`)
that every reader then takes as a file.
"""

from __future__ import annotations

import dataclasses
import gzip
import io
import os
import shutil
import stat
import sys
import tempfile
import typing
import zlib
from collections.abc import Hashable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Protocol, TypeVar

from specmodel.errors import SpecModelError
from specmodel.records import field_hints, validate
from specmodel.structured_input import excerpt as excerpt  # re-exported: every reader's messages use it
from specmodel.structured_input import load_toml_text, load_yaml_text

#: Largest configuration or table file read whole (bytes): far above any real one.
MAX_TEXT_BYTES = 1 << 20


_Record = TypeVar("_Record")


#: The first bytes of a gzip stream: such an input is read decompressed, whatever its name.
GZIP_MAGIC = b"\x1f\x8b"

#: Most bytes a gzip-compressed input that is streamed (a log) may decompress to; one that is read
#: whole keeps its reader's own limit, counted on the decompressed bytes. Past it: a gzip bomb.
MAX_GUNZIPPED_BYTES = 1 << 32

#: Most bytes read from standard input (``-``), copied to a temporary file before it is read.
MAX_STANDARD_INPUT_BYTES = 1 << 32

#: The name standard input is given on the command line, and the temporary copy's name and folder.
STANDARD_INPUT = "-"
_STDIN_FOLDER, _STDIN_NAME = "specmodel-stdin-", "standard-input"


def input_name(path: str | Path) -> str:
    """The name a user gave an input: ``-`` for the copy of standard input, else the path.

    >>> input_name("runs/a.json")
    'runs/a.json'
    """
    p = Path(path)
    return STANDARD_INPUT if p.name == _STDIN_NAME and p.parent.name.startswith(_STDIN_FOLDER) else str(path)


def path_text(path: str | Path, limit: int = 120) -> str:
    """A file's path as a message names it: quoted, its end kept if it is long (the name
    matters most); standard input as ``'-' (standard input)``.

    >>> path_text("/tmp/" + "d" * 200 + "/vllm.log", 30)
    "'...dddddddddddddddd/vllm.log'"
    """
    text = input_name(path)
    if text == STANDARD_INPUT:
        return "'-' (standard input)"
    return repr(text) if len(text) <= limit else repr("..." + text[-(limit - 5) :])


def read_limited_text(path: str | Path, where: str, limit: int = MAX_TEXT_BYTES) -> str:
    """The text of ``path`` (UTF-8, at most ``limit`` bytes, read in chunks), or a one-line error
    naming ``where`` if it is missing, not a regular file (:func:`open_input`: a folder, a FIFO,
    a device), unreadable, larger than the limit, empty, binary (NUL bytes) or not UTF-8."""
    chunks: list[bytes] = []
    size = 0
    with _opened(path, where, limit) as handle:
        while chunk := handle.read(min(_CHUNK, limit + 1 - size) or 1):
            if (nul := chunk.find(b"\x00")) >= 0:
                raise _binary(where, size + nul)
            chunks.append(chunk)
            size += len(chunk)
            if size > limit:
                raise SpecModelError(f"{where} is larger than {limit:,} bytes; is it the right file?")
    data = b"".join(chunks)
    if not data.strip():
        raise SpecModelError(f"{where} is empty")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise SpecModelError(f"{where} line {line}: not UTF-8 text (byte {exc.start}); is it a binary file?") from None


#: Longest log line parsed (bytes): a line holding a marker must be shorter; any other
#: line is skipped whatever its length (a request logged with its prompt can be long).
MAX_LINE_BYTES = 64 * 2**10
_CHUNK = 2**20


class _Readable(Protocol):
    def read(self, size: int = -1, /) -> bytes: ...


class _Gunzipped:
    """A gzip stream read decompressed: a one-line error if it is corrupt or cut short, or once
    it has given more than ``limit`` bytes (a gzip bomb is refused by what it decompresses to)."""

    def __init__(self, handle: Any, where: str, limit: int) -> None:
        self._file = gzip.GzipFile(fileobj=handle, mode="rb")
        self._where, self._limit, self._size = where, limit, 0

    def read(self, size: int = -1, /) -> bytes:
        try:
            chunk = self._file.read(min(size, self._limit + 1 - self._size) if size > 0 else self._limit + 1)
        except (OSError, EOFError, zlib.error) as exc:
            raise SpecModelError(f"{self._where} is not a readable gzip file: {exc}") from None
        self._size += len(chunk)
        if self._size > self._limit:
            raise SpecModelError(
                f"{self._where} decompresses to more than {self._limit:,} bytes; is it the right file?"
            )
        return chunk


#: How every input file is opened: read-only, never waiting (a FIFO with no writer opens at once,
#: to be refused), never becoming the process's controlling terminal.
_OPEN_FLAGS = os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC


def open_input(path: str | Path, where: str) -> io.BufferedReader:
    """``path`` opened for reading bytes, if it is a regular file: opened without blocking
    (:data:`_OPEN_FLAGS`) and checked by ``fstat``, so that a FIFO, a device (/dev/zero, /dev/tty),
    a socket or a folder is one line naming ``where`` (the option and the file), at once, as is a
    missing or unreadable file. Every file a user names is opened here."""
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except ValueError:  # a NUL byte in the name, which a TOML or JSON string may hold
        raise SpecModelError(f"{where}: a file's name cannot hold a NUL byte") from None
    except OSError as exc:
        raise _open_error(path, where, exc) from None
    try:
        _check_regular(os.fstat(fd).st_mode, where)
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


#: What a file that is not a regular file is, by the type bits of its mode, as a message names it.
_KINDS = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def _check_regular(mode: int, where: str) -> None:
    """Refuse anything but a regular file: one line naming ``where`` and what it is."""
    if stat.S_ISREG(mode):
        return
    kind = next((name for test, name in _KINDS if test(mode)), "a special file")
    raise SpecModelError(f"{where} is {kind}, not a regular file; give a file")


def _open_error(path: str | Path, where: str, exc: OSError) -> SpecModelError:
    """The one line for a file that could not be opened: missing (a relative path in a working
    folder that was removed says so), not a regular file (a socket, a terminal without one:
    found by ``stat``), or unreadable."""
    if isinstance(exc, FileNotFoundError):
        gone = not os.path.isabs(path) and working_folder_gone()
        return SpecModelError(f"{where}: no such file" + (" (the working folder no longer exists)" if gone else ""))
    try:
        _check_regular(os.stat(path).st_mode, where)
    except SpecModelError as refused:
        return refused
    except OSError:
        pass
    return SpecModelError(f"{where} cannot be read: {exc.strerror or exc}")


def working_folder_gone() -> bool:
    """Whether the process's working folder has been removed (relative paths then name nothing)."""
    try:
        os.getcwd()
    except FileNotFoundError:
        return True
    return False


@contextmanager
def _opened(path: str | Path, where: str, limit: int = MAX_GUNZIPPED_BYTES) -> Iterator[_Readable]:
    """``path`` opened for reading bytes (:func:`open_input`), decompressed if it is gzip (to at
    most ``limit`` bytes); a one-line error if it cannot be read (also while it is read)."""
    with open_input(path, where) as handle:
        try:
            yield _Gunzipped(handle, where, limit) if handle.peek(2)[:2] == GZIP_MAGIC else handle
        except OSError as exc:
            raise SpecModelError(f"{where} cannot be read: {exc.strerror or exc}") from None


def sha256_of(path: str | Path, where: str) -> str:
    """The SHA-256 checksum of ``path``'s bytes as stored (a gzip file's compressed bytes), hex."""
    import hashlib  # reports and fits only: not on every command's start

    digest = hashlib.sha256()
    with open_input(path, where) as handle:
        try:
            while chunk := handle.read(_CHUNK):
                digest.update(chunk)
        except OSError as exc:
            raise SpecModelError(f"{where} cannot be read: {exc.strerror or exc}") from None
    return digest.hexdigest()


@contextmanager
def standard_input(where: str, limit: int = MAX_STANDARD_INPUT_BYTES) -> Iterator[Path]:
    """Standard input copied to a temporary file (removed afterwards), so that it can be read
    as a file, and more than once; a one-line error naming ``where`` if it is a terminal,
    larger than ``limit`` bytes or, unless gzip, holds a NUL byte (/dev/zero fails at once)."""
    stream = sys.stdin.buffer if sys.stdin is not None and hasattr(sys.stdin, "buffer") else None
    if stream is None or _is_terminal(stream):
        raise SpecModelError(f"{where}: standard input is a terminal or closed; pipe the file in, or name it")
    folder = tempfile.mkdtemp(prefix=_STDIN_FOLDER)
    try:
        path = Path(folder) / _STDIN_NAME
        with open(path, "wb") as copy:
            _copy_limited(stream, copy, where, limit)
        yield path
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _is_terminal(stream: Any) -> bool:
    try:
        return os.isatty(stream.fileno())
    except (OSError, ValueError):  # an in-memory stream
        return False


def _copy_limited(stream: Any, copy: Any, where: str, limit: int) -> None:
    """Copy ``stream`` to ``copy``, refusing more than ``limit`` bytes and a NUL in plain text."""
    size, compressed = 0, None
    try:
        while chunk := stream.read(_CHUNK):
            compressed = chunk[:2] == GZIP_MAGIC if compressed is None else compressed
            if not compressed and (nul := chunk.find(b"\x00")) >= 0:
                raise _binary(where, size + nul)
            size += len(chunk)
            if size > limit:
                raise SpecModelError(f"{where}: standard input is larger than {limit:,} bytes")
            copy.write(chunk)
    except OSError as exc:
        raise SpecModelError(f"{where}: standard input cannot be read: {exc.strerror or exc}") from None


def _binary(where: str, offset: int) -> SpecModelError:
    return SpecModelError(f"{where} is a binary file (NUL byte at offset {offset}), not text")


def marker_lines(path: str | Path, where: str, markers: tuple[bytes, ...]) -> Iterator[tuple[int, bytes]]:
    """``(line number, line without its end)`` of every line of ``path`` that holds one of
    ``markers``, found by scanning the bytes a block at a time (memory bounded by the block
    and :data:`MAX_LINE_BYTES`, whatever the file's size; no line is split unless it holds
    a marker). One-line errors, naming ``where`` (the option and the file): missing, unreadable, empty,
    not a regular file (:func:`open_input`), binary (a NUL byte), or a line with a marker that is longer
    than MAX_LINE_BYTES."""
    keep = max(map(len, markers)) - 1
    tail = markers[0]  # the end all markers share (b" metrics:"), to find them in one search
    for marker in markers:
        while not marker.endswith(tail):
            tail = tail[1:]
    needles = [tail] if tail else list(markers)
    number, offset, pending, skipping, blank = 1, 0, b"", False, True
    with _opened(path, where) as handle:
        while chunk := handle.read(_CHUNK):
            if (nul := chunk.find(b"\x00")) >= 0:
                raise _binary(where, offset + nul)
            offset += len(chunk)
            blank = blank and not chunk.strip()
            if skipping:  # in a line too long to hold a marker: find its end
                end = chunk.find(b"\n")
                _no_marker(pending + chunk[: end if end >= 0 else len(chunk)], markers, where, number)
                if end < 0:
                    pending = (pending + chunk)[-keep:]
                    continue
                skipping, pending, chunk, number = False, b"", chunk[end + 1 :], number + 1
            buffer = pending + chunk
            last = buffer.rfind(b"\n") + 1
            hits, number = _hits(buffer, last, markers, needles, number, where)
            yield from hits
            pending = buffer[last:]
            if len(pending) > MAX_LINE_BYTES:
                _no_marker(pending, markers, where, number)
                skipping, pending = True, pending[-keep:]
    if pending and not skipping:  # a last line without a line break
        yield from _hits(pending + b"\n", len(pending) + 1, markers, needles, number, where)[0]
    if blank:
        raise SpecModelError(f"{where} is empty")


def _no_marker(text: bytes, markers: tuple[bytes, ...], where: str, number: int) -> None:
    for marker in markers:
        if marker in text:
            raise SpecModelError(
                f"{where} line {number} holds {marker.decode()!r} but is longer than {MAX_LINE_BYTES:,} bytes; "
                "vLLM's metrics lines are far shorter: is the file a log?"
            )


def _hits(
    buffer: bytes, end: int, markers: tuple[bytes, ...], needles: list[bytes], number: int, where: str
) -> tuple[list[tuple[int, bytes]], int]:
    """The lines of ``buffer[:end]`` (whole lines, the first numbered ``number``) that hold a
    marker (found by searching ``needles``), in order, each at most MAX_LINE_BYTES long;
    and the number of the line at ``end``."""
    starts = []
    for needle in needles:
        at = buffer.find(needle, 0, end)
        while at >= 0:
            if any((k := at + len(needle) - len(m)) >= 0 and buffer.startswith(m, k) for m in markers):
                starts.append(buffer.rfind(b"\n", 0, at) + 1)
                at = buffer.find(needle, buffer.find(b"\n", at), end)  # the next line
            else:
                at = buffer.find(needle, at + 1, end)
    hits, counted = [], 0
    for start in sorted(set(starts)):
        number += buffer.count(b"\n", counted, start)
        counted, stop = start, buffer.find(b"\n", start)
        _no_marker(b"" if stop - start <= MAX_LINE_BYTES else buffer[start:stop], markers, where, number)
        hits.append((number, buffer[start:stop].rstrip(b"\r")))
    return hits, number + buffer.count(b"\n", counted, end)


def validated_records(records: Iterable[dict[str, Any]], record_type: type[_Record], where: str) -> list[_Record]:
    """Each CSV record (numbered from line 2, after the header) validated as ``record_type``;
    the first bad one is one line naming the line, the field, the value and what is wrong."""
    from pydantic import ValidationError

    rows = []
    for number, record in enumerate(records, start=2):
        try:
            rows.append(validate(record_type, record))
        except ValidationError as exc:
            err = exc.errors()[0]
            field = ".".join(str(x) for x in err["loc"])
            raise SpecModelError(f"{where} line {number}: {field} {excerpt(err.get('input'))}: {err['msg']}") from None
    return rows


#: pydantic's error types for a name a record does not have (a model's, a dataclass's).
_UNKNOWN_NAME = ("extra_forbidden", "unexpected_keyword_argument")


def validated(model: type[_Record], data: Any, where: str) -> _Record:
    """``model`` (a record, :mod:`specmodel.records`, or a pydantic model) validated from
    ``data``; every problem in one line (an unknown name lists the allowed ones), each value as
    a short excerpt."""
    from pydantic import ValidationError

    try:
        return validate(model, data)
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            loc = ".".join(str(x) for x in err["loc"]) or where
            if err["type"] in _UNKNOWN_NAME:
                problems.append(f"unknown setting {excerpt(loc)}; allowed: {_allowed_at(model, loc)}")
            else:
                problems.append(f"{excerpt(loc, 80)[1:-1]}: {err['msg']} (got {excerpt(err.get('input'))})")
        raise SpecModelError(f"{where}: " + "; ".join(problems)) from None
    except SpecModelError as exc:
        raise SpecModelError(f"{where}: {exc}") from None


def _field_types(model: Any) -> dict[str, Any]:
    """The fields of a record or a pydantic model, with their types; {} for anything else."""
    if dataclasses.is_dataclass(model):
        return field_hints(typing.cast(Hashable, model))
    return {name: f.annotation for name, f in getattr(model, "model_fields", {}).items()}


def _allowed_at(model: Any, loc: str) -> str:
    """The names allowed where ``loc`` (``section.name``) was found unknown."""
    parts = loc.split(".")
    if len(parts) == 1:
        return ", ".join(_field_types(model))
    return ", ".join(_field_types(_field_types(model)[parts[0]]))


def load_config_file(path: Path, where: str) -> dict[str, Any]:
    """A TOML (``.toml``) or YAML (``.yaml``/``.yml``) file of settings, as a table (an empty file:
    an empty table), within the bounds of :mod:`specmodel.structured_input`; a one-line error
    for anything else."""
    text = read_limited_text(path, where)
    suffix = path.suffix.lower()
    if suffix not in (".toml", ".yaml", ".yml"):
        raise SpecModelError(f"{where}: unknown format {excerpt(suffix or '(none)')}; allowed: .toml, .yaml, .yml")
    data = load_toml_text(text, where) if suffix == ".toml" else load_yaml_text(text, where)
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise SpecModelError(f"{where} must be a table of settings, got {type(data).__name__}")
    return data
