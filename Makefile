# specmodel: two commands on a fresh machine.
#   make serve   build the figures and the site, then serve it at http://127.0.0.1:8000
#   make test    run every test (model, CLI, site build, browser tests in Chromium)
#
# Every target runs the project's own virtual environment (.venv), whatever the caller's PATH
# or active virtual environment: the venv's bin folder goes first on PATH, VIRTUAL_ENV names
# it, and the repository is on PYTHONPATH (the site builder, sitebuild/, is not installed).

PYTHON ?= python3
# The interpreter that creates the venv, found on the caller's PATH before it is changed below.
HOST_PYTHON := $(shell command -v $(PYTHON))
VENV   ?= .venv
BIN    := $(CURDIR)/$(VENV)/bin
STAMP  := $(VENV)/.installed
HOST   ?= 127.0.0.1:8000

export NO_MKDOCS_2_WARNING = 1
export VIRTUAL_ENV := $(CURDIR)/$(VENV)
export PATH := $(BIN):$(PATH)
export PYTHONPATH := $(CURDIR)

.PHONY: install chromium test test-fast lint bare serve site figures readme fit bench clean lock

$(STAMP): pyproject.toml constraints.txt
	@test -n "$(HOST_PYTHON)" || { echo "$(PYTHON) not found: install Python 3.11+" >&2; exit 1; }
	test -x $(BIN)/python || env -u VIRTUAL_ENV $(HOST_PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet -c constraints.txt -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

# Debian's Chromium drives the browser tests (Playwright's own browser download does not work here).
chromium:
	@command -v chromium >/dev/null 2>&1 || { \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq chromium >/dev/null; }

# Every core (pytest-xdist); the tests that share refits in one process (xdist_group "fits").
PYTEST_ARGS ?= -n auto --dist loadgroup
test: install chromium
	$(BIN)/python -m pytest $(PYTEST_ARGS)

# The tests that neither build a site of their own nor refit the profile.
test-fast: install chromium
	$(BIN)/python -m pytest $(PYTEST_ARGS) -m "not slow"

# The quality gates: lint and format, types (specmodel, sitebuild, tools), the import layers
# (pyproject.toml), no import cycle anywhere in the repository, no function nothing calls.
lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/lint-imports
	$(BIN)/python tools/check_cycles.py
	$(BIN)/python tools/check_dead_code.py

# The package alone, as a user installs it: `pip install .` without extras (no pandas) in a
# fresh venv, outside the repository, runs `specmodel point` and `specmodel advise`.
BARE := $(CURDIR)/.venv-bare
bare:
	rm -rf $(BARE) && env -u VIRTUAL_ENV $(HOST_PYTHON) -m venv $(BARE)
	env -u PYTHONPATH $(BARE)/bin/python -m pip install --quiet -c constraints.txt .
	rm -rf build
	cd /tmp && env -u PYTHONPATH $(BARE)/bin/python -c "import importlib.util as u, sys; sys.exit(u.find_spec('pandas') is not None)"
	cd /tmp && env -u PYTHONPATH $(BARE)/bin/specmodel point --concurrency 64
	cd /tmp && env -u PYTHONPATH $(BARE)/bin/specmodel advise --log $(CURDIR)/tests/data/vllm/v1-current.log \
	  --drafter qwen3-0.6b --target qwen3-8b --hardware h100-sxm --tensor-parallel 1
	cd /tmp && env -u PYTHONPATH $(BARE)/bin/specmodel advise --hardware h100-sxm \
	  --log $(CURDIR)/tests/data/vllm-deployments/llama-3-70b-eagle-tp4.log
	cd /tmp && ! env -u PYTHONPATH $(BARE)/bin/specmodel sweep --out /tmp/bare-sweep.csv 2> $(BARE)/sweep.err
	grep -q "specmodel\[tables\]" $(BARE)/sweep.err
	rm -rf $(BARE)

figures: install
	$(BIN)/python build_figures.py

site: figures
	$(BIN)/mkdocs build --strict

serve: figures
	SITE_URL=http://$(HOST)/ $(BIN)/mkdocs serve --strict --dev-addr $(HOST)

readme: install
	$(BIN)/python tools/update_readme.py

# Refit the vllm engine profile to specmodel/data/measurements.csv (writes specmodel/data/engines.toml).
fit: install
	$(BIN)/python tools/fit_engine.py

bench: install chromium
	$(BIN)/python benchmarks/bench_grid.py
	$(BIN)/python benchmarks/bench_site.py
	$(BIN)/python benchmarks/bench_simulator.py
	$(BIN)/python benchmarks/bench_validation.py
	$(BIN)/python benchmarks/bench_advise_log.py

clean:
	rm -rf site docs/generated .pytest_cache

# Pin every package at the versions a fresh install resolves today (constraints.txt).
lock:
	rm -rf .venv-lock && env -u VIRTUAL_ENV $(HOST_PYTHON) -m venv .venv-lock
	.venv-lock/bin/python -m pip install --quiet -e '.[dev]'
	{ sed -n '1,3p' constraints.txt; .venv-lock/bin/python -m pip freeze --exclude-editable; } > constraints.txt.new
	mv constraints.txt.new constraints.txt && rm -rf .venv-lock
