# specmodel: two commands on a fresh machine.
#   make serve   build the figures and the site, then serve it at http://127.0.0.1:8000
#   make test    run every test (model, CLI, site build, browser tests in Chromium)

PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
HOST   ?= 127.0.0.1:8000
export NO_MKDOCS_2_WARNING = 1

.PHONY: install chromium test serve site figures readme bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

# Debian's Chromium drives the browser tests (Playwright's own browser download does not work here).
chromium:
	@command -v chromium >/dev/null 2>&1 || { \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq chromium >/dev/null; }

test: install chromium
	$(BIN)/python -m pytest

figures: install
	$(BIN)/python build_figures.py

site: figures
	$(BIN)/mkdocs build --strict

serve: figures
	SITE_URL=http://$(HOST)/ $(BIN)/mkdocs serve --strict --dev-addr $(HOST)

readme: install
	$(BIN)/python tools/update_readme.py

bench: install chromium
	$(BIN)/python benchmarks/bench_grid.py
	$(BIN)/python benchmarks/bench_site.py
	$(BIN)/python benchmarks/bench_simulator.py

clean:
	rm -rf site docs/generated .pytest_cache
