"""Benchmark: reading a long vLLM log for ``specmodel advise --log``.

Writes a 1,000,000-line log to a temporary folder (mostly the lines a vLLM server prints
around its metrics: engine throughput, request access lines, a long prompt line now and
then; one line in 50 a "SpecDecoding metrics" line, in the current layout and the older
ones, some behind a container prefix or in a Markdown row), then times
:func:`specmodel.vllm.logs.load_log` (best of several runs) and reports its peak memory:
Python allocations under tracemalloc, and the peak resident memory of a fresh process that
only reads the log, against one that only imports the package. Target (issue: bounded
input): about 1 s, and memory that does not grow with the log (the reader keeps running
sums only, never the lines).

    python benchmarks/bench_advise_log.py
    python benchmarks/bench_advise_log.py --lines 5000000   # memory stays flat
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

from specmodel.vllm.counters import SpecDecodeCounters
from specmodel.vllm.log_line import format_log_message
from specmodel.vllm.logs import load_log

TARGET_S = 1.0
PREFIX = "(APIServer pid=2236552) INFO 09-09 11:51:35 [metrics.py:96] "
OTHER = (
    "(APIServer pid=2236552) INFO 09-09 11:51:35 [loggers.py:127] Engine 000: Avg prompt throughput: 1638.2 tokens/s, "
    "Avg generation throughput: 1190.4 tokens/s, Running: 8 reqs, Waiting: 0 reqs, GPU KV cache usage: 1.9%, "
    "Prefix cache hit rate: 0.0%\n",
    '(APIServer pid=2236552) INFO:     127.0.0.1:53412 - "POST /v1/completions HTTP/1.1" 200 OK\n',
    "(APIServer pid=2236552) INFO 09-09 11:51:36 [logger.py:41] Received request cmpl-5e1c: prompt: '"
    + "lorem ipsum " * 40
    + "', params: SamplingParams(n=1, temperature=0.0, max_tokens=256)\n",
)


def write_log(path: Path, lines: int, every: int) -> int:
    """The log; returns the number of SpecDecoding lines in it."""
    message = format_log_message(SpecDecodeCounters(100, 400, 161, (75, 48, 26, 12)), 10.0)
    old = message.replace("SpecDecoding metrics: ", "SpecDecoding metrics: Draft acceptance rate: 40.2%, ")
    old = old.split(", Avg Draft")[0].replace(
        ", Accepted throughput: 16.10 tokens/s, Drafted throughput: 40.00 tokens/s", ""
    )
    metrics = (PREFIX + message + "\n", "vllm-1  | " + PREFIX + message + "\n", "| 11:51 | `" + old + "` |\n")
    count = 0
    with path.open("w", encoding="utf-8") as out:
        for i in range(lines):
            if i % every == every - 1:
                out.write(metrics[count % len(metrics)])
                count += 1
            else:
                out.write(OTHER[i % 7 // 3] if i % 97 else OTHER[2])
    return count


def peak_rss_kib(code: str) -> int:
    """Peak resident memory (KiB) of a fresh Python running ``code``."""
    probe = f"import resource\n{code}\nprint(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)"
    return int(subprocess.run([sys.executable, "-c", probe], check=True, capture_output=True, text=True).stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=1_000_000, help="lines in the log")
    parser.add_argument("--every", type=int, default=50, help="one SpecDecoding line in this many")
    parser.add_argument("--repeats", type=int, default=3, help="timed runs; the best is reported")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "vllm.log"
        count = write_log(path, args.lines, args.every)
        size = path.stat().st_size / 2**20
        print(f"log                  {args.lines:,} lines, {count:,} SpecDecoding lines, {size:.1f} MiB")
        times = []
        for _ in range(args.repeats):
            start = time.perf_counter()
            counters = load_log(path)
            times.append(time.perf_counter() - start)
        print(f"counters             {counters.num_drafts:,.0f} drafts, {counters.num_accepted_tokens:,.0f} accepted")
        mark = "ok" if min(times) <= TARGET_S else "SLOW"
        print(f"load_log             {min(times):.3f} s (best of {args.repeats}; target about {TARGET_S:.0f} s) {mark}")
        tracemalloc.start()
        load_log(path)
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        print(f"peak Python memory   {peak / 2**10:,.0f} KiB (tracemalloc, during load_log)")
        base = peak_rss_kib("import specmodel.vllm.logs")
        rss = peak_rss_kib(f"from specmodel.vllm.logs import load_log\nload_log({str(path)!r})")
        print(f"peak resident memory {rss / 2**10:,.1f} MiB reading the log, {base / 2**10:,.1f} MiB importing only "
              f"(+{(rss - base) / 2**10:,.1f} MiB)")  # fmt: skip


if __name__ == "__main__":
    main()
