# Two commands on a fresh machine with only python3: `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

$(BIN)/toolkit: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $@

.PHONY: setup demo test lint bench test-browser test-dates
setup: $(BIN)/toolkit

demo: setup
	$(BIN)/toolkit demo --out demo-output

lint: setup
	$(BIN)/ruff check toolkit tests benchmarks

test: setup
	$(BIN)/ruff check toolkit tests benchmarks
	$(BIN)/python -m pytest -n 2 -q

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
