# MRC offload model. `make run` runs the demo, `make test` the suite; both
# create the virtual environment (.venv) on first use.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
SHELL_VENV := .venv-shell
GRPC   ?= 127.0.0.1:50001

.PHONY: all build test run bench shell clean

all: build

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	touch $@

# Compile every P4 program into bmv2_configs/build/ (skipped, with a note,
# when p4c-bm2-ss is absent: the committed JSON and P4Info are used).
build: $(VENV)/.installed
	$(PY) -m testbed.toolchain

test: $(VENV)/.installed $(SHELL_VENV)/.installed
	$(PY) -m pytest

run: $(VENV)/.installed
	$(PY) -m testbed.switch_demo

bench: $(VENV)/.installed
	$(PY) -m bench

# p4runtime-shell needs protobuf < 3.21: it gets an environment of its own.
$(SHELL_VENV)/.installed:
	$(PYTHON) -m venv $(SHELL_VENV)
	$(SHELL_VENV)/bin/pip install --quiet p4runtime-shell
	touch $@

# Open p4runtime-shell on a running switch (GRPC=host:port), with the
# P4Info read from the device.
shell: $(SHELL_VENV)/.installed
	$(SHELL_VENV)/bin/python -m p4runtime_sh --grpc-addr $(GRPC) --device-id 1 --election-id 0,1

clean:
	rm -rf $(VENV) $(SHELL_VENV) .pytest_cache build *.egg-info /tmp/mrc-bmv2
	find . -name __pycache__ -prune -exec rm -rf {} +
