# Two commands: `make demo` and `make test`. Each sets everything up on a fresh machine and is
# idempotent: the install stamp depends on pyproject.toml, so a second run skips what is done.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.cworld-installed
SERVERS_STAMP := .cworld/servers/.installed
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export LITELLM_LOCAL_MODEL_COST_MAP := True
export TOKENIZERS_PARALLELISM := false

.PHONY: setup test demo lint bench clean servers

setup: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q -U pip
	$(PY) -m pip install -q torch==2.13.0
	$(PY) -m pip install -q -e '.[dev]'
	touch $(STAMP)

servers: $(STAMP)
	$(VENV)/bin/cworld servers install

test: setup
	$(PY) -m pytest

lint: setup
	$(VENV)/bin/ruff check cworld tests benchmarks
	$(VENV)/bin/mypy cworld

demo: setup
	bash scripts/demo.sh

bench: setup
	$(PY) benchmarks/run_all.py

clean:
	rm -rf .cworld
