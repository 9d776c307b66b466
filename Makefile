# MRC offload model. `make run` runs the flagship simulation, `make test` the suite; both
# create the virtual environment (.venv) on first use.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
SHELL_VENV := .venv-shell
GRPC   ?= 127.0.0.1:50001
SCENARIO ?=
# The simulator's runs (make run, paper, bench) use the hot path compiled
# with mypyc (setup.py: the same source) where a C compiler is found (mypyc type-checks what
# the hot path imports: the stubs of PyYAML and protobuf, the Chakra reader's, come with mypy);
# COMPILE=0 runs it interpreted from .venv. A compiled build that fails
# says so in one line and runs interpreted (.venv-fast/compile.log says why).
FAST   := .venv-fast
COMPILE ?= $(if $(shell command -v cc 2>/dev/null),1,0)
# Any change to the package's sources rebuilds the compiled environment.
SOURCES := $(shell find mrc_wire sim_core switch_model nic_model mrc_host fabric_sim mrc_paper control_plane testbed scenarios \
             \( -name '*.py' -o -name '*.yaml' \) 2>/dev/null) setup.py pyproject.toml Makefile
# -P: not the checkout's sources from the working directory, the installed (compiled) package.
SIM_VENV := $(if $(filter 1,$(COMPILE)),$(FAST),$(VENV))
SIM_PY   := $(if $(filter 1,$(COMPILE)),$(FAST)/bin/python -P,$(PY))
# A value as one shell word, whatever it holds (spaces, quotes): $(call q,$(X));
# $(value X) keeps a `$` in a file name from being read as a make variable.
q = '$(subst ','"'"',$(1))'

.PHONY: all build test run paper demo bench shell clean fast capture

all: build

$(VENV)/.installed: pyproject.toml
	$(call q,$(PYTHON)) -m venv $(call q,$(VENV))
	$(call q,$(PY)) -m pip install --quiet --upgrade pip
	$(call q,$(PY)) -m pip install --quiet -e .
	touch $(call q,$@)

# The test extra (pytest) only for the tests: the simulator and the
# controller do not need it.
$(VENV)/.installed-test: $(VENV)/.installed
	$(call q,$(PY)) -m pip install --quiet -e '.[test]'
	touch $(call q,$@)

# The compiled simulator (a venv of its own: an editable .venv keeps reading
# the sources as they are edited). mypy provides mypyc.
$(FAST)/.installed: $(SOURCES)
	rm -rf $(call q,$(FAST))
	$(call q,$(PYTHON)) -m venv $(call q,$(FAST))
	@echo "building the compiled simulator in $(FAST) (a minute or two; pip's output in $(FAST)/install.log)"
	$(call q,$(FAST)/bin/python) -m pip install --quiet --upgrade pip setuptools 'mypy>=2.4,<3' types-PyYAML \
	  'types-protobuf>=6.30,<7' \
	  > $(call q,$(FAST)/install.log) 2>&1
	$(call q,$(FAST)/bin/python) -m pip install --quiet . >> $(call q,$(FAST)/install.log) 2>&1
	if MRC_COMPILE=1 $(call q,$(FAST)/bin/python) -m pip install --quiet --no-build-isolation --no-deps \
	     --force-reinstall . > $(call q,$(FAST)/compile.log) 2>&1; then \
	  echo "compiled the simulator's hot path ($(FAST))"; \
	else \
	  echo "mypyc build failed ($(FAST)/compile.log): the simulator runs interpreted"; \
	  touch $(call q,$(FAST)/interpreted); \
	fi
	touch $(call q,$@)

fast: $(FAST)/.installed

# Compile every P4 program into bmv2_configs/build/ (skipped, with a note,
# when p4c-bm2-ss is absent: the committed JSON and P4Info are used).
build: $(VENV)/.installed
	$(call q,$(PY)) -m testbed.build

# ruff and mypy first (configured in pyproject.toml), then the suite; the
# compiled build too, which tests/sim/test_compiled.py holds to the source.
test: $(VENV)/.installed-test $(SHELL_VENV)/.installed $(if $(filter 1,$(COMPILE)),$(FAST)/.installed)
	$(call q,$(PY)) -m ruff check .
	$(call q,$(PY)) -m mypy
	$(call q,$(PY)) -m pytest

# The main job: the flagship scenario on the timed fabric of reference
# models (scenarios/flagship.yaml), MRC against the single-path baseline.
run: $(SIM_VENV)/.installed
	$(SIM_PY) -m fabric_sim $(if $(value SCENARIO),$(call q,$(value SCENARIO)))

# The MRC paper's experiments (section 5.2) on the timed fabric, MRC against
# RoCE: one PNG per figure and the paper.md gallery in results/paper/
# (docs/paper.md). No BMv2 needed. SCALE=paper also runs Figs. 15-17 on
# the paper's 64 ranks, into results/paper-scale/ (about an hour on 2 cores).
SCALE ?= quick
paper: $(SIM_VENV)/.installed
	$(SIM_PY) -m mrc_paper --scale $(call q,$(SCALE))

# The single-switch demo on BMv2 (or the switch model where BMv2 is absent).
demo: $(VENV)/.installed
	$(call q,$(PY)) -m testbed.switch_demo

# A pcap of one transfer between two NIC models with a trim, a loss and a
# probe (testbed/capture.py): results/capture.pcap, for mrc_wire.dissect
# and Wireshark (wireshark/mrc.lua).
capture: $(VENV)/.installed
	$(call q,$(PY)) -m testbed.capture results/capture.pcap

# The benchmarks; the mutation run needs the test and bench extras (pytest, mutmut).
$(VENV)/.installed-bench: $(VENV)/.installed-test
	$(call q,$(PY)) -m pip install --quiet -e '.[test,bench]'
	touch $@

# The timed fabric is measured in both builds (bench/sim_scale.py): the compiled one is built first.
bench: $(VENV)/.installed-bench $(if $(filter 1,$(COMPILE)),$(FAST)/.installed)
	$(call q,$(PY)) -m bench

# p4runtime-shell needs protobuf < 3.21: it gets an environment of its own.
$(SHELL_VENV)/.installed:
	$(call q,$(PYTHON)) -m venv $(call q,$(SHELL_VENV))
	$(call q,$(SHELL_VENV)/bin/pip) install --quiet p4runtime-shell
	touch $(call q,$@)

# Open p4runtime-shell on a running switch (GRPC=host:port), with the
# P4Info read from the device.
shell: $(SHELL_VENV)/.installed
	$(call q,$(SHELL_VENV)/bin/python) -m p4runtime_sh --grpc-addr $(call q,$(GRPC)) --device-id 1 --election-id 0,1

clean:
	rm -rf $(call q,$(VENV)) $(call q,$(SHELL_VENV)) $(call q,$(FAST)) .pytest_cache build *.egg-info /tmp/mrc-bmv2 results
	find . -name __pycache__ -prune -exec rm -rf {} +
