"""Benchmark: how long a user waits for ``specmodel point`` and for a sweep's file.

* ``specmodel point`` as a whole process (interpreter start, imports, parsing, the model,
  printing); target under 0.15 s;
* ``import specmodel`` alone, and the heaviest modules ``specmodel point`` imports
  (``python -X importtime``), to show where the start-up goes;
* ``specmodel sweep`` of the default grid (1,126,400 scenarios) to Parquet and to CSV;
  targets: Parquet under 3 s, CSV within 2x of Parquet.

Each figure is the best of ``--repeat`` runs (another process may be using the cores).
Figures, not assertions.

    python benchmarks/bench_startup.py
    python benchmarks/bench_startup.py --repeat 10 --only point,import
    python benchmarks/bench_startup.py --root /tmp/old-src   # the same on another source tree
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CASES = ("point", "import", "parquet", "csv")


def _environment(root: Path) -> dict[str, str]:
    """The environment of a run on ``root``: bytecode written and reused, as an installed
    package has it (a stale ``.pyc`` recompiled at every start is no start-up of ours)."""
    env = {**os.environ, "PYTHONPATH": str(root)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def _run(argv: list[str], root: Path) -> float:
    """Seconds ``argv`` took as a process on the source tree ``root`` (raises if it failed)."""
    env = _environment(root)
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=root, env=env, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed: {done.stderr.strip()[-300:]}")
    return seconds


def best(argv: list[str], root: Path, repeat: int) -> float:
    """The shortest of ``repeat`` runs of ``argv``."""
    return min(_run(argv, root) for _ in range(repeat))


def heaviest_imports(root: Path, count: int = 8) -> list[tuple[str, float]]:
    """The top-level imports of ``specmodel point`` that take longest, with their milliseconds
    (cumulative, from ``python -X importtime``)."""
    env = _environment(root)
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "specmodel", "point"], cwd=root, env=env,
                          capture_output=True, text=True, check=False)  # fmt: skip
    found = []
    for line in done.stderr.splitlines():
        match = re.match(r"import time:\s+\d+ \|\s+(\d+) \| ( *)(\S+)", line)
        if match and len(match.group(2)) <= 2:  # the package's and its first level's imports
            found.append((match.group(3), int(match.group(1)) / 1000))
    return sorted(found, key=lambda item: -item[1])[:count]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=ROOT, help="source tree to measure (default: this one)")
    parser.add_argument("--repeat", type=int, default=5, help="runs of each case; the best is shown (default: 5)")
    parser.add_argument("--only", default=",".join(CASES), help=f"cases, comma-separated: {', '.join(CASES)}")
    args = parser.parse_args()
    cases = args.only.split(",")
    python = sys.executable
    print(f"source tree          {args.root}")
    print(f"cores available      {os.cpu_count()}; load average {os.getloadavg()[0]:.1f}; best of {args.repeat}")
    if "point" in cases:
        point = best([python, "-m", "specmodel", "point"], args.root, args.repeat)
        print(f"{'specmodel point, whole process':36s}{point:8.3f} s   target < 0.15 s")
    if "import" in cases:
        bare = best([python, "-c", "pass"], args.root, args.repeat)
        imported = best([python, "-c", "import specmodel"], args.root, args.repeat)
        print(f"{'python -c pass':36s}{bare:8.3f} s")
        print(f"{'python -c (import specmodel)':36s}{imported:8.3f} s")
        for name, ms in heaviest_imports(args.root):
            print(f"  import {name:28s}{ms:8.1f} ms")
    sweeps = {}
    with tempfile.TemporaryDirectory() as folder:
        for fmt in ("parquet", "csv"):
            if fmt in cases:
                out = str(Path(folder) / f"grid.{fmt}")
                sweeps[fmt] = best([python, "-m", "specmodel", "sweep", "--out", out], args.root, args.repeat)
                target = "target < 3 s" if fmt == "parquet" else "target <= 2x Parquet"
                print(f"{'default sweep, ' + fmt + ' (whole process)':36s}{sweeps[fmt]:8.2f} s   {target}")
    if {"parquet", "csv"} <= sweeps.keys():
        print(f"{'CSV over Parquet':36s}{sweeps['csv'] / sweeps['parquet']:8.2f}x")


if __name__ == "__main__":
    main()
