"""One notation that the docs and the code share: the table of specmodel/data/notation.toml
(:mod:`specmodel.notation`) is the model page's notation table (``{{ table:notation }}``,
:mod:`sitebuild.notation`), and the model's docstrings write its symbols, not letters of
their own that mean something else in it."""

from __future__ import annotations

import ast
import re
from collections import Counter
from dataclasses import fields
from pathlib import Path

import pytest

from sitebuild.notation import notation_table
from specmodel.errors import SpecModelError
from specmodel.model import constants
from specmodel.model.scenario import Scenario
from specmodel.model.specs import Architecture
from specmodel.notation import notation, parse_notation

ROOT = Path(__file__).resolve().parents[1]
MODEL_PAGE = ROOT / "docs" / "model.md"

#: Letters the code once used for the engines' parameters, which the notation gives other
#: meanings (N query heads, K KV heads, V vocabulary, D hidden size, L layers) -> what to
#: write instead.
CLASHES = {
    r"\bS = gamma\b": "gamma (``speculative_num_steps`` = gamma)",
    r"\bS [-+] 1\b": "gamma - 1, gamma + 1",
    r"\bK = ``tree_topk``": "w (``speculative_eagle_topk`` = w)",
    r"\bN = ``verify_tokens``": "Q_v (``speculative_num_draft_tokens`` = Q_v)",
    r"\bK [=>] 1\b": "w = 1 (a chain), w > 1",
    r"\bK\^2|\(K - 1\)|\bK kept\b|\bK candidates\b|top-K\b": "w",
    r"\bV = gamma \+ 1|\bV - 1\b|\bV positions\b|\(V, ": "Q_v",
    r"\bN GPUs\b|\bover N\b|\bN > 1\b|/ N``|#: N, GPUs|or N$": "N_g",
    r"#: K, candidates|#: V, positions": "w, Q_v",
    r"\bw_D\b|w_\(D|\bw_L\b": "w_1..w_gamma, w_j",
    r"\bC = K\b|\(Q_d, P\)": "the formula itself (C and P mean other things)",
}


def docstrings(source: str) -> list[tuple[int, str]]:
    """(line, text) of every docstring of a module, and of its ``#:`` attribute comments."""
    found = [(1, ast.get_docstring(ast.parse(source), clean=False) or "")]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            found.append((node.lineno, ast.get_docstring(node, clean=False) or ""))
    found += [(i, line[line.index("#:") :]) for i, line in enumerate(source.splitlines(), 1) if "#:" in line]
    return found


def clashes(source: str) -> list[str]:
    """Each use of a clashing letter in ``source``'s docstrings: ``line: pattern -> advice``."""
    return [
        f"{line}: {pattern!r} (write {advice})"
        for line, text in docstrings(source)
        for pattern, advice in CLASHES.items()
        if re.search(pattern, text, flags=re.M)
    ]


def test_the_symbols_are_unique():
    symbols = [s for row in notation() for s in row.symbols]
    assert len(symbols) >= 20 and {"N", "K", "V", "w", "Q_v", "N_g", r"\gamma"} <= set(symbols)
    assert [s for s, n in Counter(symbols).items() if n > 1] == []


def test_a_symbol_given_twice_is_refused():
    row = "[[row]]\nsymbol = '\\(N, w\\)'\nmeaning = 'm'\nunit = ''\n"
    with pytest.raises(SpecModelError, match="more than once: N"):
        parse_notation(row + row.replace("w\\)", "Q_v\\)"))
    with pytest.raises(SpecModelError, match="not symbols of"):
        parse_notation(row + "code = { K = 'num_key_value_heads' }\n")


def test_each_code_name_is_a_name_in_the_code():
    names = {f.name for f in fields(Scenario)} | {f.name for f in fields(Architecture)} | set(vars(constants))
    named = {(s, n) for row in notation() for s, n in row.code.items()}
    assert {("w", "tree_topk"), ("Q_v", "verify_tokens"), ("N_g", "tensor_parallel")} <= named
    assert sorted(n for _, n in named if n not in names) == []


def test_the_model_page_shows_the_generated_table_and_no_table_of_its_own():
    page = MODEL_PAGE.read_text(encoding="utf-8")
    section = page.split("## Notation", 1)[1].split("\n## ", 1)[0]
    assert "{{ table:notation }}" in section
    assert "| symbol |" not in page
    symbols_by_hand = [line for line in page.splitlines() for row in notation() if line.startswith(f"| {row.symbol} |")]
    assert symbols_by_hand == []


def test_the_generated_table_has_every_row_and_the_code_names_it_showed():
    lines = notation_table().splitlines()
    assert lines[:2] == ["| symbol | meaning | unit |", "| --- | --- | --- |"]
    assert [line.split(" | ")[0] for line in lines[2:]] == [f"| {row.symbol}" for row in notation()]
    for name in ("concurrency", "context", "num_speculative_tokens", "tensor_parallel", "tree_topk", "verify_tokens"):
        assert f"`{name}`" in notation_table()
    architecture = next(line for line in lines if line.startswith(r"| \(L, D, N, K, H, F, V\)"))
    assert architecture.endswith(" | |")  # no unit: an empty cell, as the page wrote it by hand


@pytest.mark.parametrize("path", sorted((ROOT / "specmodel" / "model").glob("*.py")), ids=lambda p: p.name)
def test_the_model_docstrings_write_the_notation(path):
    assert clashes(path.read_text(encoding="utf-8")) == []


def test_the_clash_check_sees_the_old_letters():
    old = "\n".join([
        '"""``speculative_num_steps`` S = gamma, ``speculative_eagle_topk`` K = ``tree_topk``,',
        '``speculative_num_draft_tokens`` N = ``verify_tokens``; widths w_1..w_D."""',
        "def f():",
        '    """Split over N GPUs."""',
        "tensor_parallel: int  #: N, GPUs the target is split over",
    ])  # fmt: skip
    assert len(clashes(old)) == 6
    assert clashes('"""gamma = ``speculative_num_steps``, w, Q_v, over N_g GPUs, w_1..w_gamma."""') == []
