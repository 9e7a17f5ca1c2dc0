# iowatt — public targets: up, down, test, lint, fmt, engine, ui, client, migrate, bench, deps.
# Everything a target needs beyond Python 3.11, Node 20 and gcc is installed by `make deps`.
SHELL := /bin/bash
VENV := .venv
BIN := $(VENV)/bin
# test processes: twice the cores of the 2-core budget machine (docs/testing.md: the suite mostly
# waits on real services, so two processes left the CPU idle more than half the time)
PYTEST_WORKERS ?= 4
# processes for the engine's test builds (make test-builds)
BUILD_JOBS ?= $(shell nproc)
# Python writes its bytecode caches (and pytest its rewritten test modules): with
# PYTHONDONTWRITEBYTECODE set, every test process and every server, worker and agent the tests
# start compiled the same modules again
unexport PYTHONDONTWRITEBYTECODE

.PHONY: FORCE help up down test test-py test-ui lint fmt engine ui client migrate bench deps deps-run deps-system deps-system-run deps-py deps-py-run deps-ui deps-ui-run deps-test-tools lock

help:
	@echo "make up      start the platform (API+UI :8000, worker, beat, agent) and a first benchmark"
	@echo "make down    stop it (data stays in .iowatt/)"
	@echo "             a second instance: IOWATT_STATE_DIR=DIR IOWATT_API_PORT=.. IOWATT_PG_PORT=.. IOWATT_REDIS_PORT=.. make up|down"
	@echo "make test    every test (engine, server, worker, agent, end-to-end, UI unit, browser)"
	@echo "make lint | fmt | engine | ui | client | migrate | bench"
	@echo "make fuzz    the engine's parsers under libFuzzer (FUZZ_SECONDS per target, default 600)"
	@echo "make agent-dist  the agent for hosts without Python or a compiler: dist/agent/ (tarball, .deb, .rpm)"
	@echo "make agent-dist-check  that bundle run in a Debian 11 root file system (glibc 2.31)"
	@echo "make nvme-purge-check  the PTS purge done by the agent's code on QEMU's emulated NVMe device"

# everything: what the platform needs to run and the test tools (make test)
deps: deps-system deps-py deps-ui deps-test-tools
# what the platform needs to run (make up): no fio, sysbench, MariaDB, libfaketime, OIDC test
# provider, ... (scripts/install-system-deps.sh lists both), no pytest, Hypothesis, linters, ...
# (requirements/run.txt against requirements/dev.txt)
deps-run: deps-system-run deps-py-run deps-ui-run

deps-system:
	@bash scripts/install-system-deps.sh all

deps-system-run:
	@bash scripts/install-system-deps.sh run

# Python: every third-party package from the lock, hash-checked (requirements/*.txt are exported
# from uv.lock by `make lock`; docs/adr/0004-dependencies.md): `make up` (deps-py-run) what the platform
# runs, requirements/run.txt (the server's and the agent's requirements, the agent's TPC-H extra
# included); `make test` and the other developer targets (deps-py) requirements/dev.txt, every
# package of the lock (the tests', linters' and release's tools too); then this repository's projects
# editable, without their dependencies and built by their locked backends (no build isolation: flit_core
# for the agent, the libraries and the client, setuptools for the server; ADR 0050). The server's in
# setuptools' `compat` editable mode: the repository's directory on sys.path, as flit_core's editable
# installs put theirs, instead of the import finder setuptools writes by default, which every Python
# process of the virtualenv imported at start (pathlib, re and more: ~13 ms of CPU a start, a `python -c
# pass` 14 with the plain path against 28; the suite starts hundreds, many small: the fake engines
# and meters the agent's tests run) (docs/testing.md § Session 25: the processes the tests start).
# pip installs the locked uv alone (its lines of requirements/dev.txt, with their hashes); uv
# installs the rest from its cache (pip took 44 CPU-s and, without a cache of its own, 4 minutes of
# downloads on a clean clone; uv 8). The bytecode is compiled once, here, in parallel, except the
# packages' own test suites and the tools neither the platform nor the tests import (pip,
# setuptools, mypy, mypyc, graphql, pygments' lexers; 32 -> 28 CPU-s at load 10-14, two alternating
# pairs; whatever imports one of them compiles it then) (docs/testing.md § Session 13), and what no
# process of a whole `make test` read (the bytecode files' access times after a clean clone's run):
# schemathesis and hypothesis (pytest plugins: test processes import pytest's rewritten copies),
# fontTools' font-building packages, wcwidth's grapheme tables, SQLAlchemy's testing kit and other
# dialects, numpy.distutils, the SBOM tools (23.2 -> 18.1 CPU-s; docs/testing.md § Session 21).
COMPILEALL_SKIP := site-packages/(.+/tests?/|(pip|setuptools|_distutils_hack|mypy|mypyc|graphql)/|pygments/lexers/|$\
	(schemathesis|hypothesis|cyclonedx|cyclonedx_py|packageurl|boolean|license_expression)/|$\
	fontTools/(ttLib/tables|varLib|feaLib|ufoLib|subset|cffLib|otlLib|colorLib|designspaceLib|merge|mtiLib|voltLib|svgLib|t1Lib|qu2cu|cu2qu)/|$\
	wcwidth/table_grapheme_overrides/|sqlalchemy/(testing|dialects/(mysql|oracle|mssql|sqlite))/|numpy/distutils/)
# The interpreter is scripts/venv-python.sh's choice (the distribution's Python 3.11 when there is
# one: built with PGO and LTO, ~14 % less CPU for the suite's in-process tests than a source build;
# ADR 0048), written to $(VENV)/.interpreter only when it changes, so a virtualenv made from another
# interpreter is made again and an unchanged one is left alone.
deps-py-run: $(VENV)/.installed-run
deps-py: $(VENV)/.installed
FORCE:
$(VENV)/.interpreter: FORCE
	@p=$$(bash scripts/venv-python.sh) && mkdir -p $(VENV) && \
	  { [ "$$(cat $@ 2>/dev/null)" = "$$p" ] || echo "$$p" > $@; }
VENV_INPUTS := $(VENV)/.interpreter requirements/build.txt pyproject.toml agent/pyproject.toml \
	client/pyproject.toml libs/energy/pyproject.toml libs/policy/pyproject.toml libs/workload/pyproject.toml
# $(1): the third-party packages' requirements file (uv itself comes from requirements/dev.txt's lines:
# the installer, as pip is)
define venv_install
	@p=$$(cat $(VENV)/.interpreter); \
	  if ! grep -qx "executable = $$p" $(VENV)/pyvenv.cfg 2>/dev/null; then \
	    echo "$$p -m venv --clear $(VENV)"; "$$p" -m venv --clear $(VENV) && echo "$$p" > $(VENV)/.interpreter; fi
	awk '/^uv==/ {p = 1} p {print} p && !/\\$$/ {exit}' requirements/dev.txt > $(VENV)/uv-requirement.txt
	$(BIN)/python -m pip install -q --require-hashes --only-binary :all: --no-deps -r $(VENV)/uv-requirement.txt
	$(BIN)/uv pip install -q --python $(BIN)/python --require-hashes --only-binary :all: \
		-r requirements/build.txt -r $(1)
	$(BIN)/uv pip install -q --python $(BIN)/python --no-deps --no-build-isolation \
		--config-settings-package iowatt-server:editable_mode=compat \
		-e libs/energy -e libs/workload -e libs/policy -e . -e agent -e client
	$(BIN)/uv pip check -q --python $(BIN)/python
	$(BIN)/python -m compileall -qq -j0 -x '$(COMPILEALL_SKIP)' $(VENV)/lib || true  # a cache only
endef
$(VENV)/.installed-run: $(VENV_INPUTS) requirements/run.txt
	$(call venv_install,requirements/run.txt)
	@touch $@
# dev.txt holds every package of run.txt: the platform's set is in too
$(VENV)/.installed: $(VENV_INPUTS) requirements/dev.txt
	$(call venv_install,requirements/dev.txt)
	@touch $@ $(VENV)/.installed-run

# After changing a pin in a pyproject.toml: resolve uv.lock again and export the requirements files
# (LOCK_ARGS=--upgrade moves every unpinned, transitive package to its newest release as well).
lock: deps-py
	$(BIN)/uv lock $(LOCK_ARGS)
	$(BIN)/uv export --frozen --no-emit-workspace -q --only-group build -o requirements/build.txt
	$(BIN)/uv export --frozen --no-emit-workspace -q --all-packages --all-extras --all-groups -o requirements/dev.txt
	$(BIN)/uv export --frozen --no-emit-workspace -q --package iowatt-server -o requirements/server.txt
	$(BIN)/uv export --frozen --no-emit-workspace -q --package iowatt-agent -o requirements/agent.txt
	$(BIN)/uv export --frozen --no-emit-workspace -q --package iowatt-server --package iowatt-agent \
		--extra tpch -o requirements/run.txt

# --prefer-offline: the lock names every package's exact version and integrity hash, so npm takes
# them from its cache without asking the registry whether its metadata is stale (npm ci of the UI:
# 19-20 -> 14 CPU-s; a package missing from the cache is still downloaded)
# The UI: `make up` (deps-ui-run) installs its dependencies, what the built UI runs and the build's
# tools (vite, its React plugin, tsc and the types it checks), without devDependencies (vitest,
# jsdom, testing-library, axe-core, playwright-core, biome, ...: npm ci --omit=dev); `make test`
# and the developer targets (deps-ui) install both. npm ci empties node_modules first, stamps
# included. A tree that has the test tools keeps them: where a full install was made, deps-ui-run
# (`make ui`) installs everything again when the lock changes, so a developer's `make ui` before the
# browser tests does not take playwright-core away.
UI_NPM_CI := npm ci --no-audit --no-fund --loglevel=error --prefer-offline
deps-ui: frontend/node_modules/.installed
frontend/node_modules/.installed: frontend/package.json frontend/package-lock.json
	cd frontend && $(UI_NPM_CI)
	@touch $@ frontend/node_modules/.installed-run
deps-ui-run: frontend/node_modules/.installed-run
frontend/node_modules/.installed-run: frontend/package.json frontend/package-lock.json
	@if [ ! -e frontend/node_modules/.installed ]; then \
		echo "cd frontend && $(UI_NPM_CI) --omit=dev" && cd frontend && $(UI_NPM_CI) --omit=dev; \
	elif [ frontend/node_modules/.installed -ot frontend/package.json ] \
		|| [ frontend/node_modules/.installed -ot frontend/package-lock.json ]; then \
		echo "cd frontend && $(UI_NPM_CI)" && cd frontend && $(UI_NPM_CI) && touch node_modules/.installed; fi
	@touch $@

# the OpenID Connect provider the sign-in tests start (oidc-provider, pinned by its lock file)
deps-test-tools: tests/oidc/provider/node_modules/.installed ops-test-tools
tests/oidc/provider/node_modules/.installed: tests/oidc/provider/package.json tests/oidc/provider/package-lock.json
	cd tests/oidc/provider && npm ci --no-audit --no-fund --loglevel=error --prefer-offline
	@touch $@

# promtool, caddy and docker-compose v2: the deployment tests (tests/deploy, tests/test_deploy.py) and
# the several-API-process topology of the load smoke test (scripts/install-ops-test-tools.sh; helm
# itself is a library in the tests, helm-python-sdk from the lock: ADR 0057)
.PHONY: ops-test-tools
ops-test-tools:
	@bash scripts/install-ops-test-tools.sh

engine: deps-system-run
	$(MAKE) -C agent/engine -j$(BUILD_JOBS)

# Every artefact of this version, reproducibly, into dist/release/VERSION: wheels and sdists, the
# agent bundles, the built UI, the server's build context, SBOMs, SHA256SUMS (docs/release.md).
.PHONY: release
release: deps-py deps-ui engine
	@bash scripts/release.sh

# The agent for hosts without a compiler or Python (ADR 0036, agent/packaging/README.md): a tarball,
# a .deb and an .rpm with their SHA-256 under dist/agent/, which the server serves. Frozen in a
# Debian 11 root (its files need glibc 2.28 at most: RHEL 8+, Debian 10+, Ubuntu 20.04+), made and
# cached the first time (minutes); AGENT_DIST_ROOT=host freezes with this host's glibc instead (what the tests build).
# agent-dist-check runs that bundle in a Debian 11 root file system (--version, a benchmark, TLS).
.PHONY: agent-dist agent-dist-check
agent-dist: deps-system
	@AGENT_DIST_ROOT=$${AGENT_DIST_ROOT:-debian-bullseye} bash agent/packaging/build.sh
agent-dist-check: agent-dist deps-py
	IOWATT_AGENT_DIST_CHECK=1 $(BIN)/pytest -q -p no:randomly tests/agent_dist/test_old_glibc.py

# The PTS purge (agent/src/iowatt_agent/pts.py) run for real on QEMU's emulated NVMe controller with
# two namespaces, in a guest booted under TCG (ADR 0055; tests/agent/nvme_guest.py): the format
# erases the listed namespace and nothing else, a discard too, and a whole PTS run starts with it;
# on a second controller the sanitize commands reach the controller, which refuses them (QEMU has
# no Sanitize), and the purge falls back to the format. ~38 CPU-s, not part of `make test`.
.PHONY: nvme-purge-check
nvme-purge-check: deps-py engine
	@command -v qemu-system-x86_64 >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends qemu-system-x86
	IOWATT_NVME_GUEST_CHECK=1 $(BIN)/pytest -q -p no:randomly tests/agent/test_nvme_guest.py

# `make up` builds with the build's dependencies only, checking the UI's sources without its tests
# (tsconfig.build.json); `make test` (test-setup) installs everything and its build checks the tests'
# types too (tsconfig.json: one tsc, so test-ui need not run it again)
UI_INSTALLED := frontend/node_modules/.installed-run
UI_BUILD := build
ifneq ($(filter test-setup,$(MAKECMDGOALS)),)
UI_INSTALLED := frontend/node_modules/.installed
UI_BUILD := build:checked
endif
ui: frontend/dist/index.html
frontend/dist/index.html: $(UI_INSTALLED) frontend/index.html frontend/vite.config.ts frontend/tsconfig.json \
		frontend/tsconfig.build.json frontend/openapi.json $(shell find frontend/src -type f 2>/dev/null)
	cd frontend && npm run $(UI_BUILD)

# Regenerate the OpenAPI snapshot and the frontend's typed client from the server's schema (whose
# workload bounds and defaults are the engine's --limits: the engine is built first).
client: deps-py deps-ui engine
	$(BIN)/python -m backend.openapi > frontend/openapi.json
	$(BIN)/python client/gen_operations.py frontend/openapi.json
	cd frontend && npm run gen:client

# The instance's own settings (IOWATT_STATE_DIR selects another instance than .iowatt/).
migrate: deps-py-run
	set -a; source "$${IOWATT_STATE_DIR:-.iowatt}/env"; set +a; $(BIN)/iowatt-server migrate

up: deps-run engine ui
	@bash scripts/up.sh

down:
	@bash scripts/down.sh

# Tests: docs/testing.md (the budget: make test <= 12 min on a clean clone on 2 cores, make
# test-fast <= 3 min). CI runs `make test`.
.PHONY: test-fast test-builds
# On a clean clone the set-up took a third of the wall time, so its independent steps run side by
# side (test-setup): the Debian packages (apt and dpkg: about one core), the Python, UI and OIDC
# provider installs and the UI build beside them, and what needs the packages once they are in: the
# engine's builds (CPU; its objects compile -j$(BUILD_JOBS)), promtool and caddy.
test:
	@$(MAKE) --no-print-directory -j4 test-setup
	@MAKE="$(MAKE)" IOWATT_UI_TYPECHECKED=1 bash scripts/test-all.sh

.PHONY: test-setup deps-system-test test-builds-after-deps
test-setup: deps-system-test deps-py deps-test-tools ui test-builds-after-deps
# the packages make test needs: make deps-system's but the full Chromium (scripts/install-system-deps.sh)
deps-system-test:
	@bash scripts/install-system-deps.sh test
# a make of its own, started once the packages are in: ccache, liburing and libaio are looked for
# when a make reads its Makefile
test-builds-after-deps: deps-system-test
	@$(MAKE) --no-print-directory test-builds
ifneq ($(filter test-setup,$(MAKECMDGOALS)),)
# promtool and caddy come from `apt-get download` (one apt at a time); the virtualenv waits only
# where its interpreter is missing (Debian's python3.11-venv is one of the packages)
ops-test-tools: | deps-system-test
ifneq ($(shell bash scripts/venv-python.sh >/dev/null 2>&1 && echo ok),ok)
$(VENV)/.interpreter: | deps-system-test
endif
endif

test-py: test-builds
	$(BIN)/pytest -n $(PYTEST_WORKERS) --dist loadgroup tests

# The edit loop: every test but the browser, shared-stack and fault tests (marker `slow`).
test-fast: test-builds
	$(BIN)/pytest -n $(PYTEST_WORKERS) --dist loadgroup -m "not slow" tests

# The engine's test builds (the sanitizer builds, the C unit tests, the fuzz targets), once and side by side
# before pytest starts: the tests' fixtures then find them built instead of each test process
# compiling the same binary at the same time. Through ccache when it is installed (make deps-system
# installs it): a source compiled before with the same compiler, flags and headers, in any clone
# (paths below the clone are hashed relative to it), is not compiled again (66 CPU-s without
# ccache, 7 with every object cached: docs/testing.md § Session 13, ADR 0004). In ccache's depend
# mode: a source not in the cache (every one on a fresh machine) is compiled once, its headers read
# from the compiler's own dependency file (-MD, agent/engine/Makefile), where the default mode ran
# the preprocessor over it first to hash its output (an empty cache: 32.5 -> 26.0 CPU-s, § Session 22).
CCACHE := $(shell command -v ccache 2>/dev/null)
test-builds:
	$(if $(CCACHE),CCACHE_BASEDIR=$(CURDIR) CCACHE_NOHASHDIR=1 CCACHE_DEPEND=1 )$(MAKE) -s -C agent/engine -j$(BUILD_JOBS) \
		$(if $(CCACHE),CC="ccache cc" FUZZ_CC="ccache clang") all asan noopenat2 noasync build/unit fuzzers

# The engine's parsers under libFuzzer, FUZZ_SECONDS (default 600) per target, one target at a
# time; new coverage is merged into agent/engine/fuzz/corpus (agent/engine/fuzz/README.md).
.PHONY: fuzz
fuzz: deps-system
	$(MAKE) -C agent/engine fuzz FUZZ_SECONDS=$(or $(FUZZ_SECONDS),600)

# IOWATT_UI_TYPECHECKED=1 (make test, after `make ui`, whose build runs the same tsc): no second tsc
test-ui:
	cd frontend && npm run check:client && { [ -n "$$IOWATT_UI_TYPECHECKED" ] || npm run typecheck; } && npm test

lint: deps-py deps-ui
	$(BIN)/ruff check backend worker migrations tests agent/src client/src libs/energy/src libs/policy/src libs/workload/src scripts
	$(BIN)/ruff format --check backend worker migrations tests agent/src client/src libs/energy/src libs/policy/src libs/workload/src scripts
	$(BIN)/mypy
	$(BIN)/mypy --strict libs/energy/src/iowatt_energy
	$(BIN)/mypy --strict libs/policy/src/iowatt_policy
	$(BIN)/mypy --strict libs/workload/src/iowatt_workload
	cd agent && ../$(BIN)/mypy --strict src
	cd client && ../$(BIN)/mypy --strict src
	cd frontend && npm run lint

fmt: deps-py
	$(BIN)/ruff format backend worker migrations tests agent/src client/src libs/energy/src libs/policy/src libs/workload/src scripts
	$(BIN)/ruff check --fix backend worker migrations tests agent/src client/src libs/energy/src libs/policy/src libs/workload/src scripts

bench: deps engine
	@echo "see bench/README.md for each benchmark and the command that recorded its results"
