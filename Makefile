# crashloop-harness. `make demo` and `make test` set everything up on a fresh
# machine: Python environment, docker engine, kind, node image, cluster.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
RUN_STAMP := $(VENV)/.installed-run
CRASHLOOP := $(BIN)/crashloop

.PHONY: clean-clusters help lock demo demo-rehearse demo-replay test test-all e2e-all unit package e2e lint docs engine kind node-image cluster status check flakiness matrix overhead conformance mutants down clean workload-image manifests

help:
	@echo "make demo        set up, then the talk's demo live (5 minutes), plots and a report"
	@echo "make demo-rehearse  the demo, recorded for a replay; make demo-replay [RUN=runs/...] [SPEED=10]"
	@echo "make test        lint, unit and replay tests, the installed wheel, the fast e2e tier (CI)"
	@echo "make test-all    the same with every e2e test: the slow and disruptive ones too (nightly)"
	@echo "make package     build the wheel, install it outside the checkout, run its CLI and examples/"
	@echo "make docs        build the documentation site into build/site (mkdocs, strict)"
	@echo "make lock        update requirements/dev.lock and run.lock (every package and tool, pinned with hashes)"
	@echo "make node-image  build the offline kind node image (no-op when up to date)"
	@echo "make cluster     create or reuse the crashloop cluster"
	@echo "make workload-image  build the workload image, load crashloop.local/workload:v1 into the cluster"
	@echo "make manifests   write workloads/*.yaml (the talk's workloads for kubectl) and clusters/ (kind configs, kubelet patches) from the harness's code"
	@echo "make check       quick conformance check of every worker's backoff (a few minutes)"
	@echo "make matrix      the quick check on each pinned Kubernetes release (VERSIONS=1.34,1.35)"
	@echo "make flakiness   the quick check 10 times in a row: pass count, overshoot spread (~32 min)"
	@echo "make overhead    the talk's cost analysis: kubelet CPU, API traffic, curve kept, per worker and pod count (~1.9 h)"
	@echo "make conformance the nightly job: full check (about 11 min) and every scenario"
	@echo "make mutants     the verdict on kubelet code mutants of v1.35.8, each on its worker (PROFILE=quick|full)"
	@echo "make down        delete the crashloop cluster"
	@echo "make clean-clusters  delete every kind cluster this project made (the demo's, the tests')"
	@echo "make clean       delete the cluster and the Python environment (runs/ is kept)"

# The environment is rebuilt only when the project's metadata or its lock changes. Every
# package comes from requirements/dev.lock (run.lock for the demo and the CLI targets),
# pinned with its hashes: the same ruff, mypy and libraries every day, until `make lock`
# moves them.
LOCK := requirements/dev.lock
RUN_LOCK := requirements/run.lock
# What the demo and the CLI need (run.lock); the tests, lint and docs add their tools on
# top (dev.lock: the same versions, and more).
$(RUN_STAMP): pyproject.toml $(RUN_LOCK)
	$(PYTHON) -m venv $(VENV)
	@# pytest-kind-ng ships the same pytest_kind module as pytest-kind, which it replaced.
	$(BIN)/pip uninstall --quiet --yes pytest-kind 2>/dev/null || true
	$(BIN)/pip install --quiet --require-hashes -r $(RUN_LOCK)
	$(BIN)/pip install --quiet --no-deps -e .
	touch $(RUN_STAMP)

$(STAMP): $(RUN_STAMP) $(LOCK)
	$(BIN)/pip install --quiet --require-hashes -r $(LOCK)
	touch $(STAMP)

# The one command that updates the lock: the newest releases pyproject.toml allows, with their
# hashes (pip-tools, in a virtualenv of its own).
lock:
	$(PYTHON) -m venv .venv-lock
	.venv-lock/bin/pip install --quiet pip-tools
	.venv-lock/bin/pip-compile --quiet --upgrade --generate-hashes --allow-unsafe \
		--no-emit-find-links --no-emit-index-url --extra dev --strip-extras \
		--output-file $(LOCK) pyproject.toml
	@# The run lock: dev.lock's versions (pip-compile keeps an output file's pins), no extras.
	cp $(LOCK) $(RUN_LOCK)
	.venv-lock/bin/pip-compile --quiet --generate-hashes --allow-unsafe \
		--no-emit-find-links --no-emit-index-url --strip-extras \
		--output-file $(RUN_LOCK) pyproject.toml

demo: $(RUN_STAMP)
	$(CRASHLOOP) demo

# A rehearsal, recorded: its run directory (runs/<id>-check-demo-*) is what demo-replay shows
# when the venue's machine or network misbehaves; no cluster is needed for the replay.
demo-rehearse: $(RUN_STAMP)
	$(CRASHLOOP) demo

RUN ?= $(lastword $(sort $(wildcard runs/*-check-demo-*)))
SPEED ?= 1
# Without a rehearsal in runs/, the recording the package ships.
demo-replay: $(RUN_STAMP)
	$(CRASHLOOP) demo --replay $(RUN) --speed $(SPEED)

# The wheel check runs the installed package against a cluster (reused if one matches);
# the e2e tests then start from a fresh cluster of their own. `make test` runs the fast
# e2e tier (one real-cluster test per capability); `make test-all` every e2e test.
# The phases run in this order (unit and package at once) through scripts/timed-phases.sh
# rather than as prerequisites, so that each one's wall time is printed at the end (and kept in
# build/<target>-times.tsv), also when one failed; the first phase that fails stops the
# run and fails the target, as before.
# unit+package: the wheel's check (its own venv, the e2e cluster it reuses) runs beside
# the unit tests, which touch no cluster.
test: $(STAMP)
	@MAKE="$(MAKE)" scripts/timed-phases.sh build/$@-times.tsv lint unit+package e2e

test-all: $(STAMP)
	@MAKE="$(MAKE)" scripts/timed-phases.sh build/$@-times.tsv lint unit+package e2e-all

lint: $(STAMP) docs
	$(BIN)/ruff check harness tests examples
	$(BIN)/ruff format --check harness tests examples
	$(BIN)/mypy
	scripts/actionlint.sh

# The documentation site (mkdocs.yml, docs/): strict, so a broken link or anchor, or a page
# left out of the nav, fails the build. build/ is ignored.
docs: $(STAMP)
	$(BIN)/mkdocs build --strict --site-dir build/site

# The installed wheel, outside the checkout: its CLI and a suite using its fixtures.
package: $(STAMP)
	scripts/check-wheel.sh

# Pure logic, and recorded traces of real clusters replayed through the real code, on two
# processes (pytest-xdist, -n 2: the machines this runs on have two cores; UNIT_WORKERS=0
# runs them in one). The tests share no files (each writes under its own tmp_path), so they
# need not be kept a file per process. The replays go first, as the slowest files, and
# worksteal lets the process that runs out of tests take over the other's queue
# (docs/testing.md).
UNIT_WORKERS ?= 2
unit: $(STAMP)
	$(BIN)/pytest -n $(UNIT_WORKERS) --dist worksteal tests/replay tests/unit

e2e: $(STAMP)
	$(BIN)/pytest tests/e2e --durations=20

e2e-all: $(STAMP)
	$(BIN)/pytest tests/e2e --tier all --durations=40

engine: $(RUN_STAMP)
	$(CRASHLOOP) engine

kind: $(RUN_STAMP)
	$(CRASHLOOP) kind

node-image: $(RUN_STAMP)
	$(CRASHLOOP) node-image --offline

cluster: $(RUN_STAMP)
	$(CRASHLOOP) up

status: $(RUN_STAMP)
	$(CRASHLOOP) status

workload-image: $(RUN_STAMP)
	$(CRASHLOOP) workload-image

manifests: $(RUN_STAMP)
	$(CRASHLOOP) manifests --clusters-dir clusters

check: $(RUN_STAMP)
	$(CRASHLOOP) check --profile quick

# Is green luck? Ten quick checks in a row on one cluster, pooled per worker.
flakiness: $(STAMP)
	$(CRASHLOOP) flakiness --profile quick --runs 10

# The quick check on each pinned Kubernetes release in turn (VERSIONS=1.34,1.35 for fewer),
# as the `matrix` e2e test: the table and matrix.json, and a verdict pytest reports.
# `crashloop matrix` runs the same without pytest.
VERSIONS ?= 1.33,1.34,1.35,1.36,1.37,1.38
matrix: $(STAMP)
	$(BIN)/pytest tests/e2e -m crashloop_matrix -s --crashloop-versions $(VERSIONS)

# The talk's cost analysis (slides 12-13): every worker alone with 0..a full node of
# crash-looping pods, against as many running ones (PODS=0,10,30,60,full WORKERS=fast,...).
PODS ?= 0,10,30,60,full
WORKERS ?= fast,reduced,default
overhead: $(STAMP)
	$(CRASHLOOP) overhead --pods $(PODS) --workers $(WORKERS)

# The nightly job: the full check and every scenario; the exit code is the verdict.
KUBERNETES ?= 1.35
conformance: $(STAMP)
	$(CRASHLOOP) conformance --profile full --kubernetes $(KUBERNETES)

mutants: $(STAMP)
	$(CRASHLOOP) mutants --profile $(or $(PROFILE),quick)

down: $(RUN_STAMP)
	$(CRASHLOOP) down

# Every kind cluster this project made here: the demo's (crashloop, crashloop-1.NN) and the
# e2e suite's (crashloop-e2e*), which `make test` keeps for the next run. The engine stays.
clean-clusters: $(RUN_STAMP)
	@kind="$$($(CRASHLOOP) kind)" && for name in $$("$$kind" get clusters | grep '^crashloop'); do \
		echo "deleting kind cluster $$name"; "$$kind" delete cluster --name "$$name"; done

clean:
	-test -x $(CRASHLOOP) && $(CRASHLOOP) down
	rm -rf $(VENV) .venv-lock .pytest-kind .pytest_cache .mypy_cache .ruff_cache
