# Build, test and CI entry points for the flightcontrol.openstack collection.
# `make` (or `make help`) lists the targets. CI runs `make test` (see .ci/run).

SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help
.DELETE_ON_ERROR:
MAKEFLAGS += --no-print-directory

# Interpreters: override with `make PY312=/path/to/python3.12`. tools/ci/find-python.sh looks at
# pythonX.Y on PATH and at pyenv's versions and only returns one that really runs.
PY312 ?= $(shell tools/ci/find-python.sh 3.12)
PY311 ?= $(shell tools/ci/find-python.sh 3.11)

VENV := .venv
VENV311 := .venv-py311
MINICLOUD_DIR := tools/minicloud
MINICLOUD_CONSTRAINTS := $(wildcard $(MINICLOUD_DIR)/constraints.txt)
MINICLOUD_PYPROJECT := $(wildcard $(MINICLOUD_DIR)/pyproject.toml)

# Two ways to give Ansible this collection (both are ANSIBLE_COLLECTIONS_PATH roots):
# - COLLECTIONS (build/collections): a real copy made by `ansible-galaxy collection build` +
#   `install`, i.e. exactly what the tarball ships (tools/, .ci/ ... left out). ansible-test needs a
#   real directory .../ansible_collections/flightcontrol/openstack, so sanity and units run there.
#   Rebuilt by `make collection`; edits in the repo need a rebuild.
# - DEV_COLLECTIONS (build/dev-collections): a symlink
#   ansible_collections/flightcontrol/openstack -> the repository root, so edits take effect at once
#   in ansible-playbook / ansible-doc / ansible-lint runs (`make dev-collection`).
COLLECTIONS := $(CURDIR)/build/collections
COLLECTION_DIR := $(COLLECTIONS)/ansible_collections/flightcontrol/openstack
DEV_COLLECTIONS := $(CURDIR)/build/dev-collections
DEV_COLLECTION_LINK := $(DEV_COLLECTIONS)/ansible_collections/flightcontrol/openstack
# Which of the two the integration tests get (CI tests the built copy; use
# `make integration INTEGRATION_COLLECTIONS=$(DEV_COLLECTIONS)` while editing).
INTEGRATION_COLLECTIONS ?= $(COLLECTIONS)
# `make test` builds the copy once and then runs the integration tests and the role scenarios side by side: with
# COLLECTION_BUILT=yes those two use build/collections as it is instead of rebuilding it under each other.
COLLECTION_PREREQ := $(if $(COLLECTION_BUILT),,collection)

# ansible-test runs inside the collection copy with the venv's bin first on PATH, so that
# `python3.12` (or `python3.11` for .venv-py311) is the venv interpreter and not a pyenv shim; a
# collections path from the caller's environment must not shadow the copy under test.
ANSIBLE_TEST_ENV := env -u ANSIBLE_COLLECTIONS_PATH -u ANSIBLE_COLLECTIONS_PATHS
# Sanity tests skipped, each needs what is not on these machines:
# (none so far; shellcheck and pslint only run when the collection ships .sh / .ps1 files, and
# then they need the shellcheck / pwsh binaries: add `--skip-test shellcheck` with a reason here.)
SANITY_SKIP :=

.PHONY: help venv haproxy venv-py311 venv-bench lock collection ee-context dev-collection ansible-test-bootstrap changelog-lint \
        lint sanity units units-py312 units-py311 unit-pytest minicloud-tests packaging code-shape typecheck integration fuzz reliability rollout-examples molecule \
        minicloud minicloud-down minicloud-status test demo bench peer clean distclean upstream conformance conformance-v1.12

help: ## List the targets
	@echo "Targets (CI runs 'make test'):"
	@grep -E '^[a-zA-Z0-9_.-]+:.*## ' $(MAKEFILE_LIST) | awk -F ':.*## ' '{ printf "  %-24s %s\n", $$1, $$2 }'

# --- environments ------------------------------------------------------------------------------

define need_python
	@if [ -z "$(1)" ]; then \
	    echo "error: no working Python $(2) found (looked for python$(2) on PATH and in pyenv's versions)." >&2; \
	    echo "       Install one (e.g. 'pyenv install $(2)') or pass $(3)=/path/to/python$(2)." >&2; \
	    exit 1; \
	fi
endef

# pip_install VENV, ARGS[, UV_FLAGS]: install ARGS into VENV with uv (.venv's, pinned in constraints/dev.txt): the
# same pins and the same packages as pip, downloaded and unpacked in parallel (a fresh .venv: about 15 s instead of
# 140). .venv passes --compile-bytecode (what pip does by default): where PYTHONDONTWRITEBYTECODE is set, every
# process (each minicloud service, each module run) would otherwise compile all it imports, again and again.
# uv uses the machine's certificate store like pip; should it fail (or take over 15 min), pip does the install.
define pip_install
	UV_NATIVE_TLS=1 timeout 900 $(VENV)/bin/uv pip install --quiet $(3) --python $(1)/bin/python $(2) \
	    || { echo "uv could not install; installing with pip"; \
	         $(1)/bin/python -m pip install --quiet --disable-pip-version-check $(2); }
endef

venv: $(VENV)/.installed haproxy ## Create/refresh .venv (Python 3.12): dev tools + minicloud (editable)

haproxy: ## Install Debian's haproxy when missing (minicloud's load-balancer data plane; root or sudo)
	@tools/ci/haproxy.sh

# The stamp is rebuilt whenever one of the files that decide what is installed changes.
# One pip resolve installs the dev tools (requirements-dev.txt, exact pins in constraints/dev.txt)
# together with minicloud (editable) and the OpenStack server stack it pins
# (tools/minicloud/constraints.txt), so pip refuses, rather than silently breaks, a combination
# that does not fit. The two constraint files never pin the same package (see tools/ci/lock.py).
$(VENV)/.installed: requirements.txt requirements-dev.txt constraints/dev.txt $(MINICLOUD_CONSTRAINTS) $(MINICLOUD_PYPROJECT)
	$(call need_python,$(PY312),3.12,PY312)
	@if [ ! -x $(VENV)/bin/python ] || ! $(VENV)/bin/python -c 'import sys; sys.exit(sys.version_info[:2] != (3, 12))'; then \
	    rm -rf $(VENV); echo "creating $(VENV) with $(PY312)"; $(PY312) -m venv $(VENV); \
	fi
	$(PY312) tools/ci/lock.py --check
	$(VENV)/bin/python -m pip install --quiet --disable-pip-version-check -c constraints/dev.txt pip uv
	$(call pip_install,$(VENV),-r requirements-dev.txt -c constraints/dev.txt \
	    $(if $(MINICLOUD_CONSTRAINTS),-c $(MINICLOUD_CONSTRAINTS)) \
	    $(if $(MINICLOUD_PYPROJECT),-e $(MINICLOUD_DIR)),--compile-bytecode)
	$(VENV)/bin/python -m pip check
	@# minicloud is installed editable (not compiled by the install): its services start often
	$(if $(MINICLOUD_PYPROJECT),$(VENV)/bin/python -m compileall -q $(MINICLOUD_DIR)/minicloud)
	$(VENV)/bin/python tools/ci/ansible_test_pip_bootstrap.py
	@touch $@

venv-py311: $(VENV311)/.installed ## Create/refresh .venv-py311 (Python 3.11, ansible-core 2.19) for units on 3.11

$(VENV311)/.installed: requirements.txt constraints/py311.in constraints/py311.txt | $(VENV)/.installed
	$(call need_python,$(PY311),3.11,PY311)
	@if [ ! -x $(VENV311)/bin/python ] || ! $(VENV311)/bin/python -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))'; then \
	    rm -rf $(VENV311); echo "creating $(VENV311) with $(PY311)"; $(PY311) -m venv $(VENV311); \
	fi
	$(VENV311)/bin/python -m pip install --quiet --disable-pip-version-check -c constraints/py311.txt pip
	$(call pip_install,$(VENV311),-r constraints/py311.in -c constraints/py311.txt)
	$(VENV311)/bin/python -m pip check
	$(VENV311)/bin/python tools/ci/ansible_test_pip_bootstrap.py
	@touch $@

VENVDOCS := .venv-docs

venv-docs: $(VENVDOCS)/.installed ## Create/refresh .venv-docs (Python 3.12): antsibull-docs and pandoc (constraints/docs.txt)

# Apart from .venv: antsibull-docs' docutils and sphinx pins do not fit the dev tools'.
$(VENVDOCS)/.installed: constraints/docs.txt | $(VENV)/.installed
	$(call need_python,$(PY312),3.12,PY312)
	@if [ ! -x $(VENVDOCS)/bin/python ]; then rm -rf $(VENVDOCS); $(PY312) -m venv $(VENVDOCS); fi
	$(call pip_install,$(VENVDOCS),-r constraints/docs.txt)
	@touch $@

docsite: venv-docs ## Write docs/docsite/rst (Ansible's docs site) from docs/*.md
	$(VENVDOCS)/bin/python tools/docsite/md_to_rst.py

docs-lint: venv-docs dev-collection ## docs/docsite/rst is what docs/ makes, and antsibull-docs lint-collection-docs passes
	$(VENVDOCS)/bin/python tools/docsite/md_to_rst.py --check
	PATH=$(CURDIR)/$(VENVDOCS)/bin:$$PATH $(VENVDOCS)/bin/antsibull-docs lint-collection-docs --plugin-docs \
	    $(DEV_COLLECTION_LINK)

lock: ## Re-resolve and rewrite the exact pins (constraints/dev.txt, constraints/py311.txt)
	$(call need_python,$(PY312),3.12,PY312)
	$(call need_python,$(PY311),3.11,PY311)
	$(PY312) tools/ci/lock.py --py312 $(PY312) --py311 $(PY311)

# ansible-test bootstraps pip into its sanity/units virtualenvs with a script it downloads from a
# host that is not reachable here; this writes an equivalent script (built from the pip wheel on
# the package index) into ansible-test's cache. `make venv` already runs it; idempotent.
ansible-test-bootstrap: venv ## Seed ansible-test's pip bootstrap cache (offline ansible-test)
	$(VENV)/bin/python tools/ci/ansible_test_pip_bootstrap.py

# --- the collection ----------------------------------------------------------------------------

collection: venv ## Build the tarball and install it into build/collections (for ansible-test)
	@rm -rf build/dist $(COLLECTION_DIR)
	$(VENV)/bin/ansible-galaxy collection build --force --output-path build/dist .
	ANSIBLE_COLLECTIONS_PATH=$(COLLECTIONS) $(VENV)/bin/ansible-galaxy collection install --offline --no-deps --force \
	    -p $(COLLECTIONS) build/dist/flightcontrol-openstack-*.tar.gz
	@# ansible-test works on version-controlled sources: make the copy its own git repository
	@cd $(COLLECTION_DIR) && git init -q && git add -A && \
	    git -c user.name=build -c user.email=build@localhost commit -q --no-verify -m "build copy"

ee-context: collection ## ansible-builder create: EE build context in build/ee-context (no image build)
	@mkdir -p build/ee
	cp build/dist/flightcontrol-openstack-*.tar.gz build/ee/flightcontrol-openstack.tar.gz
	$(VENV)/bin/ansible-builder create --file execution-environment.yml --context build/ee-context
	@echo "build it with: podman build -t flightcontrol-ee build/ee-context"

dev-collection: ## Symlink build/dev-collections/.../flightcontrol/openstack to the repository
	@mkdir -p $(dir $(DEV_COLLECTION_LINK))
	@ln -sfn ../../../.. $(DEV_COLLECTION_LINK)
	@test -f $(DEV_COLLECTION_LINK)/galaxy.yml
	@echo "ANSIBLE_COLLECTIONS_PATH=$(DEV_COLLECTIONS)"

# --- checks ------------------------------------------------------------------------------------

# The normal antsibull-changelog flow for a collection that has not been released: user-visible
# changes are fragments in changelogs/fragments/, and only lint runs. `antsibull-changelog release`
# belongs to the release itself: it moves the fragments into changelogs/changelog.yaml and renders
# CHANGELOG.rst (`make changelog-release` does that, once, when 0.1.0 is tagged).
changelog-lint: venv ## antsibull-changelog lint (fragments and changelog.yaml)
	$(VENV)/bin/antsibull-changelog lint
	$(VENV)/bin/antsibull-changelog lint-changelog-yaml changelogs/changelog.yaml

changelog-release: venv ## Release time only: fold fragments into changelog.yaml, render CHANGELOG.rst
	$(VENV)/bin/antsibull-changelog release

lint: venv dev-collection ## ansible-lint --profile production --offline, and ansible-doc renders every module
	PATH=$(CURDIR)/$(VENV)/bin:$$PATH ANSIBLE_COLLECTIONS_PATH=$(DEV_COLLECTIONS) $(VENV)/bin/ansible-lint --profile production --offline
	@for module in $$(ls plugins/modules | sed -n 's/\.py$$//p'); do \
	    ANSIBLE_COLLECTIONS_PATH=$(DEV_COLLECTIONS) $(VENV)/bin/ansible-doc flightcontrol.openstack.$$module > /dev/null \
	        || { echo "ansible-doc failed for $$module"; exit 1; }; \
	    echo "ansible-doc flightcontrol.openstack.$$module: ok"; done

sanity: collection ## ansible-test sanity (Python 3.12, newest ansible-core) on the built copy
	cd $(COLLECTION_DIR) && PATH=$(CURDIR)/$(VENV)/bin:$$PATH $(ANSIBLE_TEST_ENV) \
	    ansible-test sanity --local --python 3.12 --color no $(SANITY_SKIP)

units: units-py312 units-py311 ## ansible-test units on Python 3.12 and 3.11

units-py312: collection
	cd $(COLLECTION_DIR) && PATH=$(CURDIR)/$(VENV)/bin:$$PATH $(ANSIBLE_TEST_ENV) \
	    ansible-test units --local --python 3.12 --color no

units-py311: collection venv-py311
	cd $(COLLECTION_DIR) && PATH=$(CURDIR)/$(VENV311)/bin:$$PATH $(ANSIBLE_TEST_ENV) \
	    ansible-test units --local --python 3.11 --color no

unit-pytest: venv ## Plain pytest on tests/unit from the repository (no build needed)
	$(VENV)/bin/python -m pytest tests/unit

# Two pytest-xdist workers, a test file each at a time: each worker brings up its own shared cloud for the files
# that need one (their tests wait for the cloud a good part of the time). With MINICLOUD_TESTS_STATE_DIR (a cloud
# that is up), one worker on that cloud: `make test` lends them its role scenarios' cloud.
MINICLOUD_TESTS_XDIST = $(if $(MINICLOUD_TESTS_STATE_DIR),-p no:xdist,-n 2 --dist loadfile)
minicloud-tests: venv ## pytest tools/minicloud/tests (two workers, or one on the cloud in MINICLOUD_TESTS_STATE_DIR)
	$(VENV)/bin/python -m pytest $(MINICLOUD_TESTS_XDIST) --durations=30 tools/minicloud/tests

packaging: venv ## pytest tests/test_packaging.py (ansible-galaxy build, ansible-builder create)
	$(VENV)/bin/python -m pytest tests/test_packaging.py

code-shape: venv ## pytest tests/test_code_shape.py (no function over 60 lines in the repository's Python, tests aside)
	$(VENV)/bin/python -m pytest tests/test_code_shape.py

# mypy.ini: plugins/ checked for Python 3.9 as the package Ansible imports (through build/dev-collections)
typecheck: venv dev-collection ## mypy over plugins/ and the EDA event source (mypy.ini: for Python 3.9, the oldest the modules run on)
	$(VENV)/bin/mypy -p ansible_collections.flightcontrol.openstack.plugins \
		-p ansible_collections.flightcontrol.openstack.extensions.eda.plugins

# Workers of pytest-xdist for the integration tests: each has its own minicloud (the first one takes the cloud
# in MINICLOUD_STATE_DIR when set). Most of their time is spent waiting for the cloud: on two cores, two workers
# left a third of the CPU idle, and three took the integration tests from about 550 s to 450 s (the CPU then 85 %
# busy); INTEGRATION_WORKERS=1 runs them one after the other in one process.
INTEGRATION_WORKERS ?= 3
INTEGRATION_XDIST = $(if $(filter-out 1,$(INTEGRATION_WORKERS)),-n $(INTEGRATION_WORKERS) --dist worksteal,-p no:xdist)

integration: venv $(COLLECTION_PREREQ) ## pytest tests/integration (brings minicloud up itself; INTEGRATION_WORKERS=3)
	ANSIBLE_COLLECTIONS_PATH=$(INTEGRATION_COLLECTIONS) $(VENV)/bin/python -m pytest $(INTEGRATION_XDIST) --durations=30 tests/integration

# The fuzz suite runs in `make integration` with a small fixed sample; this runs a longer one (FUZZ_EXAMPLES
# draws per module, still reproducible: hypothesis is derandomized).
FUZZ_EXAMPLES ?= 150
fuzz: venv collection ## The fuzz suite with FUZZ_EXAMPLES (default 150) draws per module (brings minicloud up itself)
	FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) ANSIBLE_COLLECTIONS_PATH=$(INTEGRATION_COLLECTIONS) $(VENV)/bin/python -m pytest tests/integration/test_fuzz_modules.py

# The fault matrix (tests/integration/test_fault_matrix.py, which make test runs too), with the outcome of every
# cell written into docs/reliability.md.
reliability: venv collection ## Run the fault matrix and write its table into docs/reliability.md (brings minicloud up)
	rm -f build/fault-matrix.jsonl
	FAULT_MATRIX_REPORT=$(CURDIR)/build/fault-matrix.jsonl ANSIBLE_COLLECTIONS_PATH=$(INTEGRATION_COLLECTIONS) \
	    $(VENV)/bin/python -m pytest $(INTEGRATION_XDIST) tests/integration/test_fault_matrix.py; \
	    status=$$?; $(VENV)/bin/python tools/reliability/matrix_table.py build/fault-matrix.jsonl docs/reliability.md \
	    && exit $$status

# The rollout property with ROLLOUT_EXAMPLES (default 10) more scenarios drawn at random (each a real rollout,
# about a minute); make test runs its five fixed examples.
ROLLOUT_EXAMPLES ?= 10
rollout-examples: venv collection ## The rollout property on ROLLOUT_EXAMPLES (default 10) drawn scenarios (brings minicloud up)
	ROLLOUT_EXAMPLES=$(ROLLOUT_EXAMPLES) ANSIBLE_COLLECTIONS_PATH=$(INTEGRATION_COLLECTIONS) $(VENV)/bin/python -m pytest -p no:xdist \
	    tests/integration/test_rollout_property.py -k drawn

# The real control plane (etcd, kube-apiserver, kubectl, Cluster API's managers, clusterctl, CAPD) built from the Go
# modules pinned in tools/upstream/*/go.mod into a cache outside the repository (tools/upstream/build.sh says where;
# a warm cache builds nothing). CAPI_VERSION picks the Cluster API release: v1.13 (the default) or v1.12 (built only
# when asked for). Needs Go and the Go module proxy.
CAPI_VERSION ?= v1.13
upstream: ## Build the upstream control plane from its Go modules (cached outside the repository; CAPI_VERSION=v1.12 for v1.12)
	bash tools/upstream/build.sh --capi $(CAPI_VERSION)

# The tier on CAPI_VERSION: on v1.13 every test; on v1.12 the tests marked every_capi_release (the guarded rollout,
# pause and unpause, the move), as conformance-v1.12 runs them.
conformance: venv $(COLLECTION_PREREQ) upstream ## The conformance tier: the collection against the real control plane (brings its own minicloud up; CAPI_VERSION=v1.12 for the v1.12 subset)
	CONFORMANCE_CAPI_VERSION=$(CAPI_VERSION) ANSIBLE_COLLECTIONS_PATH=$(INTEGRATION_COLLECTIONS) \
	    $(VENV)/bin/python -m pytest -p no:xdist --durations=20 tests/conformance

conformance-v1.12: ## The conformance tier's every_capi_release tests on Cluster API v1.12 (a cloud of its own; make test runs it beside the v1.13 tier)
	$(MAKE) conformance CAPI_VERSION=v1.12

molecule: venv $(COLLECTION_PREREQ) ## molecule scenarios of the roles (extensions/molecule), against one minicloud
	tools/ci/molecule.sh $(INTEGRATION_COLLECTIONS)

# --- minicloud, demo, benchmarks ---------------------------------------------------------------

minicloud: venv ## Start the minicloud test cloud (python -m minicloud up)
	$(VENV)/bin/python -m minicloud up

minicloud-down: ## Stop the minicloud test cloud
	@if [ -x $(VENV)/bin/python ] && $(VENV)/bin/python -c 'import minicloud' 2>/dev/null; then \
	    $(VENV)/bin/python -m minicloud down || echo "warning: 'minicloud down' failed (see above)"; \
	else echo "minicloud is not installed in $(VENV); nothing to stop"; fi

minicloud-status: venv ## Show the minicloud test cloud's status
	$(VENV)/bin/python -m minicloud status

# LB_PROVIDER=ovn runs the demo on a load balancer of the ovn provider (default: amphora).
LB_PROVIDER ?= amphora
demo: venv dev-collection ## Run the demo (tools/demo/run.py); LB_PROVIDER=amphora|ovn
	ANSIBLE_COLLECTIONS_PATH=$(DEV_COLLECTIONS) LB_PROVIDER=$(LB_PROVIDER) $(VENV)/bin/python tools/demo/run.py

VENVBENCH := .venv-bench

venv-bench: $(VENVBENCH)/.installed ## Create .venv-bench (Python 3.11): the openstack.cloud baseline for benchmarks

$(VENVBENCH)/.installed: constraints/bench.txt
	$(call need_python,$(PY311),3.11,PY311)
	@if [ ! -x $(VENVBENCH)/bin/python ]; then echo "creating $(VENVBENCH) with $(PY311)"; $(PY311) -m venv $(VENVBENCH); fi
	$(VENVBENCH)/bin/python -m pip install --quiet --disable-pip-version-check -r constraints/bench.txt
	@touch $@

# On a fresh minicloud of their own (build/bench-cloud, removed afterwards): a cloud that kept the objects of
# earlier runs (hundreds of servers and ports) answers more slowly and skews the figures. BENCH_CLOUD=... runs
# them on a cloud that is up already instead.
BENCH_STATE = $(CURDIR)/build/bench-cloud
bench: venv venv-bench dev-collection ## Run the benchmarks (tools/bench/*.py) on a fresh minicloud, results in docs/benchmarks.md
	@if [ -z "$(BENCH_CLOUD)" ]; then tools/ci/clouds.sh stop $(BENCH_STATE); tools/ci/clouds.sh start $(BENCH_STATE); \
	    tools/ci/clouds.sh wait $(BENCH_STATE); fi
	export MINICLOUD_STATE_DIR=$(or $(BENCH_CLOUD),$(BENCH_STATE)) ANSIBLE_COLLECTIONS_PATH=$(DEV_COLLECTIONS); \
	    status=0; for bench in run secgroup routes route_split pause fleet eda_race; do \
	        $(VENV)/bin/python tools/bench/$$bench.py --baseline-venv $(VENVBENCH) || { status=$$?; break; }; done; \
	    [ -n "$(BENCH_CLOUD)" ] || tools/ci/clouds.sh stop $(BENCH_STATE); exit $$status

# The peer suite (tools/peer/run.py): clients nobody here wrote against a minicloud of its own in build/peer-cloud
# (removed afterwards; PEER_CLOUD=<state dir> runs on a cloud that is up): openstack.cloud and kubernetes.core from
# .venv-bench, python-openstackclient (with python-octaviaclient's loadbalancer commands) from .venv, the kubectl on
# PATH. Each check ends PASSED, FAILED or SKIPPED (its client missing); the table goes into docs/minicloud.md.
peer: venv venv-bench ## The peer suite (openstack.cloud, openstackclient, kubectl, kubernetes.core) on a fresh minicloud, table in docs/minicloud.md
	$(VENV)/bin/python tools/peer/run.py

# --- everything CI runs ------------------------------------------------------------------------

# tools/ci/test.sh: the steps, each timed; from the start, the conformance tier on v1.13 and beside it its v1.12
# tests, on clouds of their own, and the checks side by side; the integration tests on three clouds of their own
# with, beside them, the minicloud tests and the role scenarios on a fourth; a failing check or test step fails the
# run once the steps beside it have finished. A test directory that does not
# exist yet is skipped with a loud SKIPPED line (the step fails once the directory exists and its tests fail).
test: ## Everything CI runs (lint, sanity, units, minicloud, integration, role scenarios, conformance); fails if any step fails
	@MAKE="$(MAKE)" tools/ci/test.sh

clean: minicloud-down ## Stop minicloud, remove build/ and tests/output/
	rm -rf build tests/output

distclean: clean ## clean + remove the virtualenvs and caches
	rm -rf $(VENV) $(VENV311) $(VENVBENCH) .pytest_cache .hypothesis .ansible
