"""Fail if the library, the site builder or the tools define a function, method, class or
import that nothing uses (``make lint``), found by vulture.

The tests are not scanned: a function only a test calls is dead in the code it was written
for (move it next to the test, or delete it). What is called from outside Python code (an
MkDocs hook, a library callback, the notebook page, a user of the public API) is listed in
:data:`USED_ELSEWHERE` with the reason; pydantic validators are called by pydantic.
"""

from __future__ import annotations

import sys
from pathlib import Path

import vulture

ROOT = Path(__file__).resolve().parents[1]
#: Everything that is not a test: the package, the site builder, hooks, tools, benchmarks.
SCANNED = ("specmodel", "sitebuild", "hooks", "tools", "benchmarks", "build_figures.py")
#: What vulture reports here: code, not data (a record's field read by no code is still data).
KINDS = ("function", "method", "class", "property", "import", "unreachable_code")
#: Decorators whose functions a library calls.
CALLED_BY_DECORATOR = ("@field_validator", "@model_validator", "@contextmanager", "@cache")

#: Names used from outside the scanned Python code, and by what.
USED_ELSEWHERE = {
    "on_config": "MkDocs hook (mkdocs.yml: hooks)",
    "on_page_markdown": "MkDocs hook",
    "on_post_page": "MkDocs hook",
    "on_post_build": "MkDocs hook",
    "log_message": "http.server.SimpleHTTPRequestHandler override (benchmarks' quiet server)",
    "show": "sitebuild.notebook.show: the notebook page (docs/notebook.ipynb) draws its figure with it",
    "sentences": "sitebuild.claims.prose.sentences: the notebook page (docs/notebook.ipynb) prints claims with it",
    "with_constants": "public API: Settings.with_constants, documented in specmodel/__init__.py",
    "parse_log": "public API: a vLLM log held in memory (specmodel.vllm.logs)",
    "counters_from_log": "public API: the counters of records from parse_log",
    "deployment_from_log": "public API: what a vLLM log held in memory states of its deployment (vllm.engine_args)",
    "mtp_parameters": "the MTP module's own count, checked against DeepSeek-V3's published 11.5B (tests)",
    "__getattr__": "module attribute hook (PEP 562): specmodel.__version__, read when asked",
    "throughput_speedup": "Evaluation readout read by name (specmodel.measurements.SPEEDUP_DEFINITIONS, readouts)",
}


def unused(paths: list[str]) -> list[vulture.core.Item]:
    """Vulture's findings of :data:`KINDS` in ``paths`` but the names of :data:`USED_ELSEWHERE`."""
    scan = vulture.Vulture(ignore_decorators=list(CALLED_BY_DECORATOR))
    scan.scavenge(paths)
    return [
        item
        for item in scan.get_unused_code(min_confidence=60)
        if item.typ in KINDS and item.name not in USED_ELSEWHERE
    ]


def main() -> int:
    found = unused([str(ROOT / p) for p in SCANNED])
    for item in found:
        where = Path(item.filename).resolve().relative_to(ROOT)
        print(f"{where}:{item.first_lineno}: unused {item.typ} {item.name!r}", file=sys.stderr)
    print(f"dead code in {', '.join(SCANNED)}: {len(found)} unused functions, methods, classes or imports")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
