# Two commands on a fresh machine with only python3: `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

$(BIN)/toolkit: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $@

# the team workspace's environment: DuckDB 1.5.5 with the DuckLake, PostgreSQL and httpfs extensions'
# wheels (the `team` extra; DuckDB downloads no extension here), and a local S3 server for its tests
TEAM := .venv-team
TEAM_BIN := $(TEAM)/bin

$(TEAM_BIN)/toolkit: pyproject.toml
	$(PYTHON) -m venv $(TEAM)
	$(TEAM_BIN)/python -m pip install --quiet --upgrade pip
	$(TEAM_BIN)/python -m pip install --quiet -e '.[dev,team-tests]'
	touch $@

.PHONY: setup setup-team postgres demo lab test lint type-baseline bench test-browser test-dates test-compat
setup: $(BIN)/toolkit

setup-team: $(TEAM_BIN)/toolkit

# Debian's PostgreSQL for the team tests (each starts one of its own on 127.0.0.1); without root and
# without it, those tests are skipped and say so
postgres:
	@ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || \
		(DEBIAN_FRONTEND=noninteractive apt-get install -y postgresql >/dev/null 2>&1 || \
		 (apt-get update >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y postgresql >/dev/null)) || \
		echo "no PostgreSQL: the team tests will be skipped"

demo: setup
	$(BIN)/toolkit demo --out demo-output

# the notebooks in JupyterLab, from the clone: the `lab` extra once, then `jupyter lab` until Ctrl-C
# (LAB_OPTIONS passes it more, e.g. LAB_OPTIONS=--no-browser on a machine without one)
$(BIN)/jupyter-lab: $(BIN)/toolkit
	$(BIN)/python -m pip install --quiet -e '.[dev,lab]'
	touch $@

lab: setup $(BIN)/jupyter-lab
	$(BIN)/jupyter lab notebooks/ $(LAB_OPTIONS)

lint: setup
	$(BIN)/ruff check toolkit tests benchmarks

# mypy's errors per room of toolkit/ written to tests/system/type_errors.json, which the suite holds
# each room to (tests/system/test_types.py): run it when a room has fewer, and commit the file
type-baseline: setup
	$(BIN)/python tests/system/test_types.py

# everything on the main DuckDB, then the team workspace and the storage's own tests on the team's
TEAM_TESTS := tests/team tests/glance/test_mcp.py tests/workspace/test_workspace.py tests/workspace/test_workspace_lifecycle.py tests/storage/test_workspace_export.py tests/storage/test_history.py tests/storage/test_snapshot_storage.py
test: setup setup-team postgres
	$(BIN)/ruff check toolkit tests benchmarks
	$(BIN)/python -m pytest -n 2 -q
	$(TEAM_BIN)/python -m pytest -n 2 -q -p no:cacheprovider $(TEAM_TESTS)

bench: setup
	$(BIN)/python -m pip install --quiet -e '.[dev,bench]'
	$(BIN)/python benchmarks/sandbox_throughput.py
	$(BIN)/python benchmarks/workspace_io.py
	$(BIN)/python benchmarks/fetch.py

# Not part of `make test`: JupyterLab driven by Debian's chromium through Playwright (issue 19). Playwright's
# own browser download does not work offline, so the system chromium is used.
test-browser: setup
	command -v chromium >/dev/null || (apt-get update && apt-get install -y chromium)
	$(BIN)/python -m pip install --quiet -e '.[dev,browser]'
	TOOLKIT_BROWSER_TEST=1 $(BIN)/python -m pytest -q -p no:xdist tests/browser

# Not part of `make test`: the suite under Debian's faketime at dates around year ends and leap days,
# so that no test depends on the day it runs (a seed date once matched today's timestamp).
DATES ?= 2026-12-31T23:30:00 2027-02-28T23:30:00 2027-11-24T12:00:00
test-dates: setup
	command -v faketime >/dev/null || (apt-get update && apt-get install -y faketime)
	for date in $(DATES); do \
		echo "== $$date"; faketime -f "@$$(echo $$date | tr T ' ')" $(BIN)/python -m pytest -n 2 -q -p no:cacheprovider || exit 1; \
	done

# Not part of `make test`: the demo's snapshots opened by the DuckDBs a colleague may have, each from
# PyPI in a venv of its own (.venv-duckdb-<version>): snapshots are written in the oldest storage that
# holds their types, and the manifest says which DuckDB opens them (issue 40)
COMPAT_DUCKDB ?= 1.1.3 1.4.5 1.5.6 2.0.1
test-compat: setup
	for v in $(COMPAT_DUCKDB); do \
		test -x .venv-duckdb-$$v/bin/python || ($(PYTHON) -m venv .venv-duckdb-$$v && \
			.venv-duckdb-$$v/bin/python -m pip install --quiet duckdb==$$v) || exit 1; \
	done
	TOOLKIT_COMPAT_DUCKDB="$(COMPAT_DUCKDB)" $(BIN)/python -m pytest -q -p no:xdist -p no:cacheprovider -rA tests/compat
