# Two commands: `make run` starts the server (its data in ./boulanger-data), `make test` runs every test.
VENV ?= .venv
PYTHON ?= python3
BIN := $(VENV)/bin

.PHONY: run test lint system-deps clean

$(BIN)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $@

run: $(BIN)/.installed
	$(BIN)/boulanger serve $(ARGS)

system-deps:
	bash .ci/system-deps

# Test files are shared out to $(TEST_WORKERS) processes (pytest-xdist), each
# file's tests in one of them (the module's browser and servers started once),
# in collection order (tests/conftest.py puts the long files first). Four on
# two cores: the tests wait on browsers, servers and countdowns about as long
# as they compute.
TEST_WORKERS ?= 4
test: system-deps $(BIN)/.installed
	$(BIN)/pytest -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder $(ARGS)

lint: $(BIN)/.installed
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

clean:
	rm -rf $(VENV) test-artifacts .pytest_cache .mypy_cache .ruff_cache
