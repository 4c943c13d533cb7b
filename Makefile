# The README's commands. Every target sets up .venv from the project's own files first.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.ember-installed
# The cpu build renders its elementwise loops from the runtime's expression table.
CPU_SOURCES := $(wildcard devices/cpu/ember_cpu/csrc/*) devices/cpu/ember_cpu/_build.py \
	devices/cpu/ember_cpu/_render.py runtime/ember/plugins/expressions.py \
	runtime/ember/plugins/ops.py $(wildcard runtime/ember/plugins/kernels/*.h) \
	devices/cpu/setup.py devices/cpu/pyproject.toml
OPENCL_PACKAGE := devices/opencl/pyproject.toml
CUDA_PACKAGE := devices/cuda/pyproject.toml

.PHONY: setup demo test lint typecheck pytest bench clean

setup: $(STAMP)

$(STAMP): pyproject.toml setup.py runtime/ember/_cstorage.c runtime/ember/_cdispatch.c runtime/ember/_cslots.h $(CPU_SOURCES) $(OPENCL_PACKAGE) $(CUDA_PACKAGE) plugins/ember-numpy/pyproject.toml \
	plugins/ember-fused/pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	$(BIN)/python -m pip install --quiet -e devices/cpu
	# The OpenCL device with PoCL, a CPU OpenCL runtime from PyPI, so it runs everywhere.
	$(BIN)/python -m pip install --quiet -e 'devices/opencl[pocl]'
	# The CUDA device on CuPy and NVRTC: without a GPU it reports itself unavailable, and
	# the tests compile every one of its programs.
	$(BIN)/python -m pip install --quiet -e 'devices/cuda[cuda13]'
	# The reference device in NumPy, the template for plugin authors (docs/plugins/).
	$(BIN)/python -m pip install --quiet --no-deps -e plugins/ember-numpy
	# A kernel package as a third party ships one (docs/plugins/writing-kernels.md).
	$(BIN)/python -m pip install --quiet --no-deps -e plugins/ember-fused
	touch $@

# `make demo DEVICE=opencl` (or EMBER_DEVICE=opencl make demo) trains on another device.
demo: setup
	$(BIN)/python -m ember demo $(if $(DEVICE),--device $(DEVICE))

lint: setup
	$(BIN)/ruff format --check .
	$(BIN)/ruff check .

typecheck: setup
	$(BIN)/mypy

# One session: tests/, the conformance kit ember.testing on every installed device, and the
# docs' examples (testpaths in pyproject.toml). EMBER_TEST_DEVICES=cpu narrows the devices.
pytest: setup
	$(BIN)/pytest -n 2 -q

test: lint typecheck pytest

bench: setup
	$(BIN)/python -m pip install --quiet -e '.[bench]'
	$(BIN)/python -m benchmarks

clean:
	rm -rf $(VENV) build devices/cpu/build devices/cpu/ember_cpu/_kernels*.so \
		devices/opencl/build devices/cuda/build runtime/ember/_c*.so
