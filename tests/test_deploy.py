"""The Pages workflow cannot publish a broken article: it installs pinned versions, runs the
tests that guard the article before it builds and deploys, and never cancels a deploy."""

from __future__ import annotations

import re
import tomllib

import yaml

from tests.conftest import ROOT

WORKFLOW = ROOT / ".github" / "workflows" / "pages.yml"


def _pinned() -> dict[str, str]:
    lines = (ROOT / "constraints.txt").read_text().splitlines()
    pins = dict(line.split("==", 1) for line in lines if line and not line.startswith("#"))
    return {re.sub(r"[-_.]+", "-", k).lower(): v for k, v in pins.items()}


def test_every_dependency_is_pinned():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    wanted = [*project["dependencies"], *(d for deps in project["optional-dependencies"].values() for d in deps)]
    pins = _pinned()
    for requirement in wanted:
        name = re.sub(r"[-_.]+", "-", re.split(r"[<>=!~\[ ;]", requirement, maxsplit=1)[0]).lower()
        if name == project["name"]:  # an extra that includes another extra (dev: specmodel[tables])
            continue
        assert name in pins, f"{name} is not pinned in constraints.txt"


def test_the_workflow_tests_before_it_deploys_with_pinned_versions():
    workflow = yaml.safe_load(WORKFLOW.read_text())
    assert workflow["concurrency"]["cancel-in-progress"] is False
    steps = workflow["jobs"]["build"]["steps"]
    runs = [s.get("run", "") for s in steps]
    install = next(i for i, r in enumerate(runs) if "pip install" in r)
    assert "-c constraints.txt" in runs[install]
    tests = next(i for i, r in enumerate(runs) if "pytest" in r)
    build = next(i for i, r in enumerate(runs) if "mkdocs build" in r)
    upload = next(i for i, s in enumerate(steps) if "upload-pages-artifact" in s.get("uses", ""))
    assert install < tests < build < upload
    for guard in ("test_claims.py", "test_calibration.py", "test_site_numbers.py", "test_browser_claims.py"):
        assert guard in runs[tests], guard
    assert workflow["jobs"]["deploy"]["needs"] == "build"
    assert "-c constraints.txt" in (ROOT / "Makefile").read_text()
