"""Where a command writes: the one check of an output path, made before any computation, and
the one way a file is replaced.

:func:`check_output` refuses, in one line naming the option, the path and what the option
takes: a folder that does not exist, is not a folder or cannot be written in; a name or path
longer than the file system allows; a symbolic link, a special file, or a folder where a file
is wanted (a file where a folder is); and an output that is one of the command's inputs (the
same path, a hard link to it or a symbolic link to it; for a folder, an input inside it).
:func:`replace_file` writes a temporary file beside the output and renames it over the output
once complete, with the mode and owner of the file it replaces.

Light imports only: ``specmodel point`` imports this module and starts fast.
"""

from __future__ import annotations

import contextlib
import os
import signal
import stat
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, TypeVar

from specmodel.errors import SpecModelError
from specmodel.structured_input import excerpt

T = TypeVar("T")

#: Folders of the kernel's pseudo file systems: nothing is written there.
PSEUDO_FOLDERS = ("/proc", "/sys", "/dev")

#: The attributes of parsed options that name input files, and how the command line names them.
INPUT_OPTIONS = {
    "files": "FILE",
    "log": "--log",
    "metrics": "--metrics",
    "bench": "--bench",
    "load": "--load",
    "engine_profile": "--engine-profile",
    "hardware_file": "--hardware-file",
    "table": "--table",
    "config": "--config",
    "calibration": "--calibration",
}

#: Bytes of an output's name kept in the name of its temporary file or folder (which adds about
#: 15): the name of a long output still fits.
NAME_ROOM = 100

#: Bytes a temporary file's path may add to its output's (``.``, the random part, ``.tmp``).
TEMPORARY_EXTRA = 16


def shown(path: Path | str) -> str:
    """A path as a message names it: quoted, cut to 200 characters."""
    return excerpt(str(path), 200)


def check_output(
    path: Path, option: str, takes: str, *, folder: bool = False, inputs: Iterable[tuple[str, Any]] = (),
    inside: int = TEMPORARY_EXTRA, parents: bool = False,
) -> None:  # fmt: skip
    """Refuse ``path`` as ``option``'s output (``takes``: what the option takes, as a refusal
    says it) unless it can be written: its folder exists (``parents``: or the nearest one above
    it that does, the writer making the rest), is a folder and may be written in, its names and
    path fit the file system (``inside``: bytes the longest path written below or beside it
    adds), nothing or a regular file (``folder``: a real folder) is there, and it is none of
    ``inputs`` (option, path) (:func:`check_not_input`)."""
    where = f"{option} {shown(path)}"
    absolute = Path(os.path.abspath(path))
    names, parent = [absolute.name], absolute.parent
    while parents and not os.path.lexists(parent) and parent != parent.parent:
        names, parent = [parent.name, *names], parent.parent
    _check_folder(parent, where)
    _check_length(absolute, names, parent, where, inside)
    check_not_input(path, option, inputs, folder=folder)  # first: a link to an input names the input
    check_existing(path, option, takes, folder=folder)


def _check_folder(parent: Path, where: str) -> None:
    """Refuse a ``parent`` folder that is missing, is not a folder, or cannot be written in."""
    try:
        info = os.stat(parent)
    except FileNotFoundError:
        raise SpecModelError(f"{where}: the folder {shown(parent)} does not exist") from None
    except OSError as exc:
        raise SpecModelError(f"{where}: the folder {shown(parent)} cannot be used: {exc.strerror}") from None
    if not stat.S_ISDIR(info.st_mode):
        raise SpecModelError(f"{where}: {shown(parent)} is a file, not a folder")
    real = os.path.realpath(parent)
    pseudo = any(real == p or real.startswith(p + "/") for p in PSEUDO_FOLDERS)
    if pseudo or not os.access(parent, os.W_OK | os.X_OK):
        raise SpecModelError(f"{where}: cannot write in the folder {shown(parent)}")


def _limit(folder: Path, name: str, default: int) -> int:
    """``os.pathconf(folder, name)``, or ``default`` where the system does not say."""
    try:
        return os.pathconf(folder, name)
    except (OSError, ValueError):
        return default


def _check_length(absolute: Path, names: list[str], folder: Path, where: str, inside: int) -> None:
    """Refuse any of ``names`` (those to make in ``folder``) longer than its file system allows
    (``PC_NAME_MAX``), or a path ``absolute`` that, with ``inside`` bytes more, is longer than
    ``PC_PATH_MAX``."""
    name_max = _limit(folder, "PC_NAME_MAX", 255)
    path_max = _limit(folder, "PC_PATH_MAX", 4096)
    name = max(len(os.fsencode(n)) for n in names)
    whole = len(os.fsencode(str(absolute)))
    if name > name_max:
        raise SpecModelError(f"{where}: a name is too long ({name} bytes; the file system allows {name_max})")
    if whole + inside >= path_max:
        raise SpecModelError(
            f"{where}: the path is too long ({whole} bytes, and {inside} more are written below or beside it; "
            f"the system allows {path_max - 1})"
        )


def check_existing(path: Path, option: str, takes: str, *, folder: bool = False) -> None:
    """Refuse what is at ``path`` if it may not be replaced: a symbolic link, a FIFO, device or
    socket, a folder where a file is wanted or a file where a folder is; nothing there is fine."""
    where = f"{option} {shown(path)}"
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return
    except OSError as exc:
        raise SpecModelError(f"{where}: {exc.strerror or exc}") from None
    if stat.S_ISLNK(mode):
        raise SpecModelError(f"{where} is a symbolic link; refusing to replace it (give {takes})")
    if folder and not stat.S_ISDIR(mode):
        raise SpecModelError(f"{where} is a file, not a folder; refusing to replace it (give {takes})")
    if not folder and stat.S_ISDIR(mode):
        raise SpecModelError(f"{where} is a folder; give {takes}")
    if not folder and not stat.S_ISREG(mode):
        raise SpecModelError(f"{where} is not a regular file (a FIFO, device or socket); refusing to replace it")


def command_inputs(args: Any) -> list[tuple[str, Any]]:
    """The input files of parsed options ``args``: (option, path) for each of
    :data:`INPUT_OPTIONS` given (every file of one that takes several)."""
    found: list[tuple[str, Any]] = []
    for name, option in INPUT_OPTIONS.items():
        value = getattr(args, name, None)
        found += [(option, path) for path in (value if isinstance(value, list) else [value]) if path is not None]
    return found


def check_not_input(path: Path, option: str, inputs: Iterable[tuple[str, Any]], *, folder: bool = False) -> None:
    """Refuse an output ``path`` that is one of ``inputs`` (option, path): the same file (the
    same device and inode: the same path, a hard link, a symbolic link to it) or, for a
    ``folder``, the folder or a file inside it."""
    try:
        out = os.stat(path)
    except OSError:
        return  # nothing there yet: no input is it
    real = os.path.realpath(path)
    for given, name in inputs:
        if name is None:
            continue  # an option not given
        try:
            info = os.stat(name)
        except (OSError, ValueError):
            continue  # a missing input is its reader's to refuse
        within = folder and os.path.realpath(name).startswith(real.rstrip("/") + "/")
        if (info.st_dev, info.st_ino) == (out.st_dev, out.st_ino) or within:
            what = "holds" if within else "is the same file as"
            raise SpecModelError(
                f"{option} {shown(path)} {what} the input {given} {shown(name)}; refusing to replace an input "
                f"(write the output {'elsewhere' if folder else 'to another file'})"
            )


def replace_file(out: Path, write: Callable[[Path], T], option: str, takes: str) -> T:
    """``write(tmp)`` a temporary file beside ``out``, give it the mode and owner of the file
    it replaces (else the umask's mode), and rename it over ``out`` once complete, unless
    something other than a regular file appeared at ``out`` meanwhile (refused). The temporary
    file is removed on any failure, Ctrl-C or SIGTERM. Returns what ``write`` returned; an
    OSError (a full disk) is the caller's to word."""
    import tempfile

    folder = out.parent if str(out.parent) else Path(".")
    fd, name = tempfile.mkstemp(prefix=f".{out.name[:NAME_ROOM]}.", suffix=".tmp", dir=folder)
    os.close(fd)
    tmp = Path(name)
    previous = _hold_sigterm()
    try:
        result = write(tmp)
        with open(tmp, "rb") as written:
            os.fsync(written.fileno())
        take_mode(tmp, out)
        check_existing(out, option, takes)  # it may have changed while the output was computed
        os.replace(tmp, out)
        return result
    finally:
        _release_sigterm(previous)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)


def take_mode(tmp: Path, out: Path) -> None:
    """Give ``tmp`` the mode of the regular file ``out`` it will replace (and its owner and
    group where the process may set them), or else the umask's mode for a new file."""
    try:
        old = os.stat(out)
    except FileNotFoundError:
        mask = os.umask(0)
        os.umask(mask)
        os.chmod(tmp, 0o666 & ~mask)
        return
    os.chmod(tmp, stat.S_IMODE(old.st_mode))
    mine = os.stat(tmp)
    if (old.st_uid, old.st_gid) != (mine.st_uid, mine.st_gid):
        with contextlib.suppress(PermissionError):
            os.chown(tmp, old.st_uid, old.st_gid)


def _raise_interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


def _hold_sigterm() -> list[Any]:
    """Turn SIGTERM into KeyboardInterrupt (so that the temporary file is removed); returns the
    handler to put back, as a list (empty where signals cannot be set: not the main thread)."""
    try:
        return [signal.signal(signal.SIGTERM, _raise_interrupt)]
    except ValueError:
        return []


def _release_sigterm(previous: list[Any]) -> None:
    for handler in previous:
        signal.signal(signal.SIGTERM, handler)


__all__ = ["check_existing", "check_not_input", "check_output", "command_inputs", "replace_file", "take_mode"]
