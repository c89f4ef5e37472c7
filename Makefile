# agent-sandbox — every target creates or reuses .venv and installs what it needs.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml | cksum | cut -d' ' -f1)

AGENT ?= dfsdt
MODEL ?= noisy-reference
SUITE ?= scenarios/default
SEED ?= 0
AGENTS ?= react dfsdt react@4
RUN ?=
ARGS ?=

.PHONY: setup test lint format run compare replay eval serve validate bench replays clean

setup: $(STAMP)

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	@rm -f $(VENV)/.installed-* && touch $@

test: lint
	$(BIN)/python -m pytest -q $(ARGS)

lint: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

format: setup
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

run: setup
	$(BIN)/sandbox run --suite $(SUITE) --agent $(AGENT) --model $(MODEL) --seed $(SEED) $(ARGS)

compare: setup
	$(BIN)/sandbox compare --agents "$(shell echo $(AGENTS) | tr ' ' ',')" --suite $(SUITE) --model $(MODEL) --seed $(SEED) $(ARGS)

replay: setup
	@test -n "$(RUN)" || (echo "usage: make replay RUN=runs/<id>" >&2; exit 2)
	$(BIN)/sandbox replay $(RUN) $(ARGS)

eval: setup
	@test -n "$(RUN)" || (echo "usage: make eval RUN=runs/<id>" >&2; exit 2)
	$(BIN)/sandbox eval $(RUN) $(ARGS)

serve: setup
	$(BIN)/sandbox serve $(SUITE) $(ARGS)

validate: setup
	$(BIN)/python -m mock_tools validate $(ARGS)

bench: setup
	$(BIN)/python -m bench $(ARGS)

# Regenerate the committed regression fixtures (after a deliberate change of the default suite).
replays: setup
	rm -rf replays/react-noisy-default replays/dfsdt-noisy-default
	$(BIN)/sandbox run --suite scenarios/default --agent react --model noisy-reference:0.3 --seed 0 --out replays --run-id react-noisy-default --no-plots
	$(BIN)/sandbox run --suite scenarios/default --agent dfsdt --model noisy-reference:0.3 --seed 0 --out replays --run-id dfsdt-noisy-default --no-plots

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache
