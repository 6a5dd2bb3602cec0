"""Fail if any modules of the repository import each other in a cycle (``make lint``).

The import graph comes from grimp (the library import-linter is built on), which sees every
import, also those inside functions that hide a cycle from the interpreter. A cycle is a
strongly connected component of more than one module (Tarjan's algorithm), or a module that
imports itself; each is printed with one import chain around it.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable

import grimp

#: Every folder of Python in the repository (tests, tools and benchmarks as namespace packages).
PACKAGES = ("specmodel", "sitebuild", "tests", "tools", "benchmarks")


def strongly_connected(nodes: Iterable[str], edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of a directed graph (Tarjan 1972), iteratively.

    >>> sorted(map(sorted, strongly_connected("abc", {"a": {"b"}, "b": {"a"}, "c": {"a"}})))
    [['a', 'b'], ['c']]
    """
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    for root in nodes:
        if root in index:
            continue
        work = [(root, iter(sorted(edges.get(root, ()))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                out.append(component)
    return out


def cycles(graph: grimp.ImportGraph) -> list[list[str]]:
    """Every import cycle of ``graph``: its components of two or more modules, and modules
    that import themselves, each as a sorted list."""
    modules = sorted(graph.modules)
    edges = {m: set(graph.find_modules_directly_imported_by(m)) for m in modules}
    found = [sorted(c) for c in strongly_connected(modules, edges) if len(c) > 1]
    found += [[m] for m in modules if m in edges[m]]
    return sorted(found)


def main() -> int:
    graph = grimp.build_graph(*PACKAGES)
    found = cycles(graph)
    for component in found:
        first = component[0]
        back = [m for m in component if graph.direct_import_exists(importer=m, imported=first)]
        chain = graph.find_shortest_chain(importer=first, imported=back[0]) if back and back[0] != first else None
        shown = " -> ".join([*chain, first]) if chain else f"{first} -> {first}"
        print(f"import cycle among {', '.join(component)}: {shown}", file=sys.stderr)
    print(f"{len(graph.modules)} modules of {', '.join(PACKAGES)}: {len(found)} import cycles")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
