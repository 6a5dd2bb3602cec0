"""What `specmodel point` imports: only what evaluating one scenario needs.

Start-up is a user's wait (``benchmarks/bench_startup.py`` prints it). The modules below are
each a few to tens of milliseconds of it and none is needed to price a scenario from the
packaged catalogues: pydantic validates what a user hands us (a config.json, a card, a
profile), numpy.ma comes with ``np.unique`` and ``np.quantile``, the rest serve other
commands.
"""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from specmodel.uncertainty import log_bounds

NOT_AT_START = ("pydantic", "pydantic_core", "numpy.ma", "yaml", "scipy", "pandas", "pyarrow", "prometheus_client")

PROBE = """
import contextlib, io, json, sys
from specmodel.cli import main
with contextlib.redirect_stdout(io.StringIO()):
    try:
        main(sys.argv[1:])
    except SystemExit as exit_:
        assert not exit_.code, exit_.code
print(json.dumps(sorted(m for m in sys.modules if m.split(".")[0] in {n.split(".")[0] for n in NAMES})))
"""


@pytest.mark.parametrize(
    "argv",
    [
        ["point"],
        ["point", "--json", "--concurrency", "64", "--engine", "vllm"],
        ["point", "--drafter", "ngram", "--target", "qwen3-30b-a3b", "--tensor-parallel-size", "2"],
    ],
)
def test_point_imports_no_validator_and_nothing_another_command_needs(argv):
    code = f"NAMES = {NOT_AT_START!r}\n" + PROBE
    done = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    loaded = set(json.loads(done.stdout.splitlines()[-1]))
    assert loaded.isdisjoint(NOT_AT_START), sorted(loaded & set(NOT_AT_START))


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("level", [0.5, 0.8, 0.9])
def test_the_interval_quantile_is_numpys_linear_quantile(seed, level):
    """:func:`specmodel.uncertainty.log_bounds` interpolates in the sorted magnitudes rather
    than calling ``np.quantile`` (which imports numpy.ma): the same number."""
    residuals = np.random.default_rng(seed).normal(0, 0.1, size=7 + 5 * seed)
    from specmodel.uncertainty import conformal_level

    expected = np.quantile(np.abs(residuals), conformal_level(level, residuals.size))
    assert log_bounds(residuals, level) == pytest.approx((-expected, expected), rel=1e-12)
