# Vigil — developer tasks. `make test` is what CI runs (via .ci/run).

SHELL := /bin/bash
VENV  := .venv
PY    := $(VENV)/bin/python
VIGIL := $(VENV)/bin/vigil
# test workers (pytest-xdist): 2 on this project's 2-core machines; `make test TEST_WORKERS=0` runs in one process
TEST_WORKERS ?= 2

.DEFAULT_GOAL := help
.PHONY: help setup run check test bench clean

help:
	@echo "make setup   install Chromium/fonts if missing, create .venv, pip install -e .[test]"
	@echo "make run     open the Vigil window on the bundled demo shop (needs a display; see README)"
	@echo "make check   ruff, mypy and the import-layer contracts (import-linter); run first by make test"
	@echo "make test    the checks, then the test suite (headless, QT_QPA_PLATFORM=offscreen)"
	@echo "make bench   run the snapshot benchmark"
	@echo "make clean   remove .venv and caches"

setup:
	bash scripts/setup.sh

run: setup
	$(VIGIL) gui --demo

# fast (seconds): style and bugs (ruff), types (mypy, engine/ and gui/), and that every import goes down the
# layers with no circle (import-linter: the contracts in pyproject.toml)
check: setup
	$(VENV)/bin/ruff check
	$(VENV)/bin/mypy
	$(VENV)/bin/lint-imports

test: export QT_QPA_PLATFORM = offscreen
test: check
	$(PY) -m pytest -q -n $(TEST_WORKERS) --dist loadgroup tests

bench: setup
	$(VIGIL) bench snapshot

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache build dist
	find . -path ./.git -prune -o \( -name __pycache__ -o -name "*.egg-info" \) -type d -prune -exec rm -rf {} +
