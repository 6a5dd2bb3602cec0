"""The shape of the code: small functions, settings passed (never looked up),
a pinned public API, and the plotly.js the site ships matching the Python package."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import specmodel

ROOT = Path(__file__).resolve().parents[1]
SOURCES = sorted(p for package in ("specmodel", "sitebuild") for p in (ROOT / package).rglob("*.py"))
#: A module is as long as its concept needs; a function's branching is limited by ruff (C901,
#: pyproject.toml) and its length here.
MAX_FUNCTION_LINES = 60


def _rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


@pytest.mark.parametrize("path", SOURCES, ids=_rel)
def test_functions_are_small(path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    long = [
        f"{node.name} ({node.end_lineno - node.lineno + 1} lines)"
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES
    ]
    assert long == [], f"{_rel(path)}: {long}"


@pytest.mark.parametrize("path", SOURCES, ids=_rel)
def test_settings_are_passed_not_looked_up(path):
    text = path.read_text(encoding="utf-8")
    assert not re.search(r"\b(constants|deployment|current)\(\)", text), "formulas take the settings as arguments"
    assert "ContextVar" not in text and "global " not in text, f"{_rel(path)} keeps state outside its arguments"


def _empty_container(value: ast.expr | None) -> bool:
    """``{}``, ``[]``, ``set()``, ``dict()``... : a container made empty, to be filled later."""
    if isinstance(value, ast.Dict):
        return not value.keys
    if isinstance(value, ast.List | ast.Set):
        return not value.elts
    makers = ("dict", "list", "set", "defaultdict", "OrderedDict", "deque")
    return isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id in makers


@pytest.mark.parametrize("path", SOURCES, ids=_rel)
def test_no_module_level_mutable_state(path):
    """A module never keeps a container it fills as it runs (a cache among them): a cache is
    memoised on a function (functools.cache) or passed in."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    state = [ast.unparse(node).split("=")[0].strip() for node in tree.body
             if isinstance(node, ast.Assign | ast.AnnAssign) and _empty_container(node.value)]  # fmt: skip
    assert state == [], f"{_rel(path)} keeps module-level state: {state}"


def test_the_state_rule_sees_a_cache_and_spares_a_table():
    found = [_empty_container(ast.parse(code).body[0].value) for code in  # type: ignore[attr-defined]
             ("_FITS: dict[str, int] = {}", "_SEEN = set()", "TABLE = {'a': 1}", "NAMES = ('a',)")]  # fmt: skip
    assert found == [True, True, False, False]


def test_the_public_api_is_pinned():
    assert sorted(specmodel.__all__) == [
        "AXES", "Constants", "Deployment", "Evaluation", "PROFILES", "Scenario", "ScenarioGrid", "Settings",
        "SpecModelError", "default_scenario", "drafter_names", "evaluate", "evaluate_per_position",
    ]  # fmt: skip
    for name in specmodel.__all__:
        assert getattr(specmodel, name) is not None


def test_the_vendored_plotly_js_is_the_one_plotly_writes_for():
    from plotly.offline import get_plotlyjs_version

    bundle = ROOT / "docs" / "assets" / "vendor" / "plotly" / "plotly-cartesian.min.js"
    shipped = re.search(r"plotly\.js \(cartesian - minified\) v(\d+\.\d+\.\d+)", bundle.read_text()[:500])
    assert shipped, "the vendored bundle's banner names its version"
    assert shipped.group(1) == get_plotlyjs_version()
    vendor_readme = (ROOT / "docs" / "assets" / "vendor" / "README.md").read_text()
    assert f"| {get_plotlyjs_version()} |" in vendor_readme


def test_the_site_builder_is_not_installed_with_the_package():
    config = (ROOT / "pyproject.toml").read_text()
    assert 'include = ["specmodel*"]' in config
    assert not (ROOT / "specmodel" / "site").exists()
