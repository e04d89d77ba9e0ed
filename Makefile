# Two commands on a fresh machine with only python3: `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

$(BIN)/toolkit: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $@

.PHONY: setup demo test lint bench
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
