# Two commands: `make demo` and `make test`. Each sets everything up on a fresh machine and is
# idempotent: the install stamp depends on pyproject.toml, so a second run skips what is done. Only
# `make test` builds the local model (local-llm: 4 to 40 minutes the first time); the demo never uses it.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.cworld-installed
SYSTEM_STAMP := $(VENV)/.system-packages
SERVERS_STAMP := .cworld/servers/.cworld-installed
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export LITELLM_LOCAL_MODEL_COST_MAP := True
export TOKENIZERS_PARALLELISM := false

.PHONY: setup test demo lint bench clean servers local-llm

setup: $(STAMP) $(SYSTEM_STAMP) $(SERVERS_STAMP)

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q -U pip
	$(PY) -m pip install -q torch==2.13.0
	$(PY) -m pip install -q -e '.[dev,inspect,ray,openenv,verifiers]'
	# verifiers pins mcp==2.0.0 and openai<3 (cworld needs mcp 2.3): its other requirements come with the
	# extra above, verifiers itself without them (docs/harnesses.md)
	$(PY) -m pip install -q --no-deps verifiers==0.4.0
	touch $(STAMP)

$(SYSTEM_STAMP): $(STAMP)
	bash scripts/ensure_system_packages.sh
	touch $(SYSTEM_STAMP)

# Real MCP servers (npm packages and per-server venvs) into the default workspace; idempotent.
$(SERVERS_STAMP): $(STAMP) registry/servers.yaml
	$(VENV)/bin/cworld servers install
	touch $(SERVERS_STAMP)

servers: $(SERVERS_STAMP)

# The local model server (SmolLM2 + a portable llama.cpp build, compiled once into .cworld/wheels; seconds
# when done). A failed build is one line here and fails tests/test_local_model.py with that line.
local-llm: $(STAMP)
	-$(VENV)/bin/cworld llm install-local

# The tests (the local model's among them), after the style and type checks that CI holds every change to.
test: setup local-llm lint
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
