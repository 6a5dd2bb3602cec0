"""Shared fixtures: the repository root, a built site, a local server and a browser."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from hypothesis import settings

from benchmarks.common import free_port, serve

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


@pytest.fixture(scope="session")
def root() -> Path:
    return ROOT


def build_site(site_dir: Path, site_url: str = "http://127.0.0.1:8000/") -> subprocess.CompletedProcess:
    """build_figures.py, then ``mkdocs build --strict`` into ``site_dir`` for ``site_url``."""
    env = {
        **os.environ,
        "NO_MKDOCS_2_WARNING": "1",
        "SITE_URL": site_url,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    }
    figures = subprocess.run([sys.executable, "build_figures.py"], cwd=ROOT, capture_output=True, text=True, env=env)
    assert figures.returncode == 0, figures.stderr
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site_dir)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=env,
    )


@pytest.fixture(scope="session")
def site_url() -> str:
    """Where the test server will serve the site: the site is built for this address (its
    canonical links), though its own links are relative and work anywhere."""
    return f"http://127.0.0.1:{free_port()}/"


@pytest.fixture(scope="session")
def built_site(tmp_path_factory, site_url) -> Path:
    """The whole site, built once per test session."""
    site = tmp_path_factory.mktemp("site")
    result = build_site(site, site_url)
    assert result.returncode == 0, result.stderr[-4000:]
    return site


@pytest.fixture(scope="session")
def site_server(built_site, site_url):
    """The built site served on localhost at its site_url; yields that URL."""
    with serve(built_site, urlsplit(site_url).port):
        yield site_url


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
