"""Shared fixtures: the repository root, a built site, a local server and a browser."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import settings

from benchmarks.common import free_port, serve
from tests.site_builds import build_env, mkdocs_build, once, project_copy

# Property tests run the same examples on every machine (CI included) and are not timed:
# performance is measured by the benchmarks, not by deadlines.
settings.register_profile("specmodel", deadline=None, derandomize=True)
settings.load_profile("specmodel")

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(__file__).resolve().parent / "data"
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]


@pytest.fixture(autouse=True)
def _catalogue_as_shipped():
    """Every test starts and ends with the catalogue as shipped: a model or card a test adds
    (from a config.json, a card file, a quantized variant) is forgotten after it, so that no
    other test in the same process sees it."""
    from specmodel.model.specs import added_architectures, added_hardware

    yield
    added_architectures().clear()
    added_hardware().clear()


@pytest.fixture(scope="session")
def root() -> Path:
    return ROOT


@pytest.fixture(scope="session")
def shared(tmp_path_factory) -> Path:
    """A folder every process of this test session sees, and no other session: under pytest-xdist,
    one named for the run beside the workers' own temporary folders. What is built once for the
    whole session lives there."""
    base = tmp_path_factory.getbasetemp()
    run = os.environ.get("PYTEST_XDIST_TESTRUNUID")
    if run is None:
        return base
    shared = base.parent / f"shared-{run}"
    shared.mkdir(exist_ok=True)
    return shared


@pytest.fixture(scope="session")
def site_url(shared) -> str:
    """The address the session's site is built for (its canonical links name it); the site's own
    links are relative, so each process serves it at a port of its own (:func:`site_server`)."""

    def choose(path: Path) -> None:
        path.write_text(f"http://127.0.0.1:{free_port()}/")

    return once(shared, "site-url", choose).read_text()


@pytest.fixture(scope="session")
def figures_run(shared) -> subprocess.CompletedProcess:
    """``build_figures.py --out <folder>`` for the default configuration, run once per test session;
    the tests that read its files take :func:`generated`."""

    def make(path: Path) -> None:
        path.mkdir()
        run = subprocess.run([sys.executable, "build_figures.py", "--out", str(path / "generated")], cwd=ROOT,
                             capture_output=True, text=True, env=build_env())  # fmt: skip
        (path / "stdout").write_text(run.stdout)
        (path / "stderr").write_text(run.stderr)
        (path / "returncode").write_text(str(run.returncode))

    path = once(shared, "figures", make)
    result = subprocess.CompletedProcess(
        ["build_figures.py"], int((path / "returncode").read_text()), (path / "stdout").read_text(),
        (path / "stderr").read_text(),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-4000:]
    return result


@pytest.fixture(scope="session")
def generated(shared, figures_run) -> Path:
    """The generated folder of the default configuration, built once per test session (read only)."""
    return shared / "figures" / "generated"


@pytest.fixture(scope="session")
def site_project(shared, generated) -> Path:
    """A copy of the project's docs, hooks and mkdocs.yml with the default generated folder in it."""
    return once(shared, "project", lambda path: project_copy(path, generated=generated))


@pytest.fixture(scope="session")
def built_site(shared, site_project, site_url) -> Path:
    """The whole site for the default configuration, built once per test session."""

    def make(path: Path) -> None:
        result = mkdocs_build(site_project, path, site_url)
        assert result.returncode == 0, result.stderr[-4000:]

    return once(shared, "site", make)


@pytest.fixture(scope="session")
def site_server(built_site):
    """The built site served on localhost at a port of this process; yields its URL."""
    with serve(built_site, free_port()) as url:
        yield url


@pytest.fixture(scope="session")
def browser():
    """Debian's Chromium driven by Playwright (Playwright's own browser download is not used)."""
    if not shutil.which(CHROMIUM) and not Path(CHROMIUM).exists():
        pytest.fail(f"Chromium not found at {CHROMIUM}: install Debian's chromium (make test does) or set CHROMIUM")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()
