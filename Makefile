# Quick start: `make demo` and `make test`. Both create .venv on first use.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
EXAMPLE := examples/livemath/livemath.skm

.PHONY: demo test setup bench docs clean

$(STAMP): pyproject.toml
	test -d $(VENV) || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	touch $(STAMP)

setup: $(STAMP)

demo: $(STAMP)
	@echo "== parse + check $(EXAMPLE)"
	$(BIN)/skillc check $(EXAMPLE)
	@echo "== format check"
	$(BIN)/skillc fmt --check $(EXAMPLE)
	@echo "== summary"
	$(BIN)/skillc show $(EXAMPLE)

test: $(STAMP)
	$(BIN)/python -m pytest

bench: $(STAMP)
	$(BIN)/python bench/parse.py
	$(BIN)/python bench/check_scaling.py

docs: $(STAMP)
	$(BIN)/skillc explain --markdown > docs/diagnostics.md

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache .hypothesis
