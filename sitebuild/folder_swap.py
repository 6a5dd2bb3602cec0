"""Replacing one folder by another so that an interrupt can never lose both: an atomic
exchange where the system has one (Linux ``renameat2(RENAME_EXCHANGE)``), else two renames
undone if the second fails; SIGINT and SIGTERM held off meanwhile; a lock so that two builds
of one folder never step on each other; fresh hidden siblings to write into."""

from __future__ import annotations

import contextlib
import ctypes
import errno
import fcntl
import os
import secrets
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

#: The signals a swap holds off, and a build turns into :class:`Interrupted`.
HELD = (signal.SIGINT, signal.SIGTERM)


class Interrupted(KeyboardInterrupt):
    """SIGINT or SIGTERM during a build; ``written``: whether the new folder was already in place."""

    def __init__(self, signum: int = signal.SIGINT, written: bool = False) -> None:
        super().__init__(signum)
        self.signum, self.written = signum, written


@contextlib.contextmanager
def locked(folder: Path, wait: bool = True) -> Iterator[bool]:
    """An exclusive lock on ``folder`` (gone with the process); yields whether it was got."""
    fd = os.open(folder, os.O_RDONLY)
    try:
        with contextlib.suppress(BlockingIOError):
            fcntl.flock(fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
            yield True
            return
        yield False
    finally:
        os.close(fd)


@contextlib.contextmanager
def held_signals() -> Iterator[None]:
    """SIGINT and SIGTERM held off, then handled as usual when the block ends. Blocking them is
    not enough when other threads (a BLAS pool) may take a signal, so their handlers only
    note it meanwhile."""
    caught: list[int] = []
    previous: dict[int, Any] = {}
    with contextlib.suppress(ValueError):  # not the main thread: the signals are not ours to handle
        previous = {signum: signal.signal(signum, lambda signum, frame: caught.append(signum)) for signum in HELD}
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, HELD)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        handler = previous.get(caught[0]) if caught else None  # handled as it would have been
        if callable(handler):
            handler(caught[0], None)
        elif handler == signal.SIG_DFL:
            os.kill(os.getpid(), caught[0])


def fresh_sibling(destination: Path, kind: str) -> Path:
    """A new empty hidden folder beside ``destination``, of the mode ``mkdir`` gives (umask)."""
    while True:
        path = destination.parent / f".{destination.name}-{kind}-{secrets.token_hex(4)}"
        with contextlib.suppress(FileExistsError):
            path.mkdir()
            return path


def _exchange(a: Path, b: Path) -> None:
    """Swap two paths atomically (Linux ``renameat2(RENAME_EXCHANGE)``); OSError if unavailable."""
    try:
        renameat2 = ctypes.CDLL(None, use_errno=True).renameat2
    except (AttributeError, OSError) as exc:
        raise OSError(errno.ENOSYS, "renameat2 is not available") from exc
    at_fdcwd, rename_exchange = -100, 2
    if renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange) != 0:
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code))


def swap(staging: Path, destination: Path) -> Path | None:
    """Put ``staging`` in place of ``destination`` (the caller holds interrupts off); returns
    where the previous destination now is, or None. Atomic where the system can exchange two
    folders; otherwise two renames, undone if the second fails."""
    if not destination.exists():
        os.rename(staging, destination)
        return None
    try:
        _exchange(staging, destination)
        return staging
    except OSError as exc:
        if exc.errno not in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP):
            raise
    aside = fresh_sibling(destination, "old")
    os.rename(destination, aside)  # replaces the empty folder just made
    try:
        os.rename(staging, destination)
    except BaseException:
        os.rename(aside, destination)
        raise
    return aside
