"""Benchmark: the sweep's time and peak memory, and the cohort's cost in the generated tokens.

Each case runs in a subprocess of its own and reports its wall time and its peak resident
memory (``resource.getrusage(RUSAGE_SELF).ru_maxrss``), so cases do not pollute each other:

* ``specmodel sweep`` over the default grid, to CSV and to Parquet; targets: Parquet under
  3 s, CSV within 2x of Parquet;
* the same for a grid ten times the default (100 alphas instead of 10), which must run in
  about the same memory (written a chunk at a time);
* one point at 65,536 generated tokens (Llama-3.1-8B, whose context holds them), with the
  article's roofline (``ideal``) and with vLLM's engine as a cohort (the smooth overlap, summed
  iteration by iteration over the window); target under 1 s;
* the default grid evaluated (no file) at 256 and at 4,096 generated tokens; target: the
  second within 3x the first.

Figures, not assertions: the machine's load moves them, so each case shows the best of
``--repeat`` runs. ``benchmarks/bench_startup.py`` times the same sweeps as whole processes,
and ``specmodel point``'s start-up.

    python benchmarks/bench_grid.py
    python benchmarks/bench_grid.py --root /tmp/old-src   # the same cases on another source tree
    python benchmarks/bench_grid.py --only point,g256
    python benchmarks/bench_grid.py --only parquet,csv --repeat 5
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: The ten-times grid: 100 alphas, 0.500 to 0.995 (the default has 10).
WIDE_ALPHAS = [round(0.5 + 0.005 * i, 3) for i in range(100)]
POINT = {"target": "llama-3.1-8b", "drafter": "llama-3.2-1b", "context": 1024, "generated_tokens": 65_536}


def _sweep_cli(out: Path, *extra: str) -> None:
    from specmodel.cli import main

    if main(["sweep", "--out", str(out), *extra]) != 0:
        raise SystemExit("sweep failed")


def _wide(out: Path) -> None:
    from specmodel import grid

    if hasattr(grid, "plan_sweep"):  # written a chunk at a time
        from specmodel.cli.sweep import write_atomically

        write_atomically(grid.plan_sweep(alpha=WIDE_ALPHAS).frames(), out)
    else:  # older trees: the whole table at once
        grid.sweep(alpha=WIDE_ALPHAS).to_parquet(out, index=False)


def _point(engine: str) -> None:
    from specmodel import evaluate

    batching = {"batching": "cohort", "concurrency": 64} if engine == "vllm" else {}
    evaluate(engine=engine, **POINT, **batching)


def _grid(generated: int) -> None:
    from specmodel import evaluate
    from specmodel.grid import grid_mesh

    evaluate(**grid_mesh(), generated_tokens=generated)


def run_case(name: str, folder: Path) -> None:
    """One case, in this process; prints ``{"seconds", "peak_mib"}``."""
    cases = {
        "csv": lambda: _sweep_cli(folder / "grid.csv"),
        "parquet": lambda: _sweep_cli(folder / "grid.parquet"),
        "wide-parquet": lambda: _wide(folder / "wide.parquet"),
        "point": lambda: _point("ideal"),
        "point-vllm": lambda: _point("vllm"),
        "g256": lambda: _grid(256),
        "g4096": lambda: _grid(4096),
    }
    for module in ("specmodel.cli", "specmodel.grid"):  # importing is not the case's time
        importlib.import_module(module)

    start = time.perf_counter()
    cases[name]()
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    print(json.dumps({"seconds": seconds, "peak_mib": peak}))


CASES = ("csv", "parquet", "wide-parquet", "point", "point-vllm", "g256", "g4096")
LABELS = {
    "csv": "default sweep, CSV",
    "parquet": "default sweep, Parquet",
    "wide-parquet": "10x grid, Parquet",
    "point": "point, G = 65,536 (ideal)",
    "point-vllm": "point, G = 65,536 (vllm cohort)",
    "g256": "default grid, G = 256",
    "g4096": "default grid, G = 4,096",
}


def measure(name: str, root: Path) -> dict[str, float]:
    """``name`` in a fresh interpreter on the source tree ``root``."""
    env = {**os.environ, "PYTHONPATH": str(root)}
    with tempfile.TemporaryDirectory() as folder:
        done = subprocess.run(
            [sys.executable, __file__, "--case", name, "--folder", folder],
            cwd=root,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
    if done.returncode != 0:
        return {"error": done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "failed"}  # type: ignore[dict-item]
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=ROOT, help="source tree to measure (default: this one)")
    parser.add_argument("--only", default=",".join(CASES), help=f"cases, comma-separated: {', '.join(CASES)}")
    parser.add_argument("--repeat", type=int, default=1, help="runs of each case; the best is shown (default: 1)")
    parser.add_argument("--case", help=argparse.SUPPRESS)
    parser.add_argument("--folder", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.case:
        run_case(args.case, args.folder)
        return
    print(f"source tree          {args.root}")
    print(f"cores available      {os.cpu_count()}; load average {os.getloadavg()[0]:.1f}")
    results = {}
    for name in args.only.split(","):
        results[name] = r = min(
            (measure(name, args.root) for _ in range(args.repeat)), key=lambda m: m.get("seconds", float("inf"))
        )
        shown = r.get("error") or f"{r['seconds']:8.2f} s   peak {r['peak_mib']:7.0f} MiB"
        print(f"{LABELS[name]:33s}{shown}", flush=True)
    if {"g256", "g4096"} <= results.keys() and "error" not in results["g256"] and "error" not in results["g4096"]:
        ratio = results["g4096"]["seconds"] / results["g256"]["seconds"]
        print(f"{'G = 4,096 over G = 256':33s}{ratio:8.2f}x  target <= 3x")
    if {"csv", "parquet"} <= results.keys() and "error" not in results["csv"] and "error" not in results["parquet"]:
        ratio = results["csv"]["seconds"] / results["parquet"]["seconds"]
        met = "met" if results["parquet"]["seconds"] < 3 else "missed"
        print(f"{'Parquet target':33s}{met} (< 3 s)")
        print(f"{'CSV over Parquet':33s}{ratio:8.2f}x  target <= 2x")
    if "point" in results and "error" not in results["point"]:
        print(f"{'point target':33s}{'met' if results['point']['seconds'] < 1 else 'missed'} (< 1 s)")


if __name__ == "__main__":
    main()
