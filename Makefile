# The one task runner. Every target bootstraps its own virtual environment from
# pyproject.toml, pinned by constraints.txt, so nothing depends on what was installed by hand.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
EXTRAS ?= dev,onnx

.PHONY: demo test check lint format typecheck bench clean

$(STAMP): pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -c constraints.txt -e '.[$(EXTRAS)]'
	touch $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/cairn demo --store $(CURDIR)/.cairn-demo/demo.db --fresh

test: $(STAMP)
	$(PY) -m pytest -q

lint: $(STAMP)
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/ruff check .

format: $(STAMP)
	$(VENV)/bin/ruff format .
	$(VENV)/bin/ruff check --fix .

typecheck: $(STAMP)
	$(VENV)/bin/mypy shared/cairn

check: lint typecheck test

bench: $(STAMP)
	$(PY) -m benchmarks.quality

clean:
	rm -rf $(VENV) .cairn-demo .pytest_cache .mypy_cache .ruff_cache build shared/*.egg-info
