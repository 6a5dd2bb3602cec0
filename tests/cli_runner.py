"""``specmodel`` run in process, for the command-line tests."""

from __future__ import annotations

import contextlib
import io

from specmodel.cli import main


def cli(*argv: str) -> tuple[int, str, str]:
    """Exit status, stdout and stderr of ``specmodel ARGV`` run in process (an argparse usage
    error's ``SystemExit`` gives its status)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = main(list(argv))
        except SystemExit as exc:
            status = int(exc.code or 0)
    return status, out.getvalue(), err.getvalue()
