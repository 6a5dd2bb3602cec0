"""Serving-benchmark results (vLLM ``bench serve``, SGLang ``bench_serving``, measurement CSVs)
read as runs, and paired into measured speedups for ``specmodel fit-engine``."""

from specmodel.server_runs.pairing import Deployment, PlainTiming, paired_measurements, plain_timings
from specmodel.server_runs.runs import BenchRun, load_runs

__all__ = ["BenchRun", "Deployment", "PlainTiming", "load_runs", "paired_measurements", "plain_timings"]
