#!/usr/bin/env bash
# `make test`: every step CI runs (tools/ci/step.sh prints each step's time and CPU, and the summary). The set-up
# stops the run at its first failure; the checks, the integration tests and the steps beside them all run to their
# end, and the run fails if any of them failed; the last step checks that nothing of the test clouds is still
# running. The machine's cores are kept busy from the start, steps side by side (all but the set-up and the
# integration tests in the background, on a copy of the collection made once, which the checks' rebuilds of
# build/collections do not touch):
# - from the start (right after `make venv`), once the background build is done, the conformance tier on the real
#   control plane of Cluster API v1.13 and beside it its every-release tests on v1.12, each on a cloud it starts:
#   most of their time is waiting for the real controllers;
# - the static checks and the unit tests together (one `make -j`, which makes the Python 3.11 virtualenv of the
#   3.11 units beside the other checks), then the packaging and code-shape tests;
# - once the test clouds are up, the integration tests, and beside them the minicloud tests, then the role
#   scenarios (molecule), on a cloud of their own. The other chains' output comes after the integration tests'.
# The clouds are minicloud test clouds, one per integration worker (INTEGRATION_WORKERS, default 3) and one for
# the scenarios (the conformance tier starts its own), on free ports in a temporary folder: they come up in the
# background from the set-up on, and are removed at the end, whatever happened. With MINICLOUD_STATE_DIR set,
# that cloud is the first worker's (left running) and the others are started here.
set -euo pipefail
cd "$(dirname "$0")/../.."
step=tools/ci/step.sh
make="${MAKE:-make}"
workers="${INTEGRATION_WORKERS:-3}"

"${step}" venv "${make}" venv

# The real control planes of the conformance tier (etcd, kube-apiserver, Cluster API's managers: v1.13, then v1.12's
# managers for the tier's every-release tests) are built from their Go modules in the background, at a lower
# priority than the tests (a warm cache builds nothing; a cold one takes about 38 CPU-minutes for v1.13).
upstream_log="$(mktemp "${TMPDIR:-/tmp}/make-test-upstream.XXXXXX")"
set -m  # a process group of its own: cleanup() stops the go build with it
nice -n 10 bash -c "bash tools/upstream/build.sh; bash tools/upstream/build.sh --capi v1.12" \
    > "${upstream_log}" 2>&1 &
upstream_build=$!
set +m

root=$(mktemp -d "${TMPDIR:-/tmp}/make-test-minicloud.XXXXXX")
clouds=()
first=0
if [ -n "${MINICLOUD_STATE_DIR:-}" ]; then
    first=1
fi
for ((i = first; i < workers; i++)); do clouds+=("${root}/cloud-${i}"); done
scenario_cloud="${root}/cloud-scenarios"
test_collections="${PWD}/build/test-collections"
clouds+=("${scenario_cloud}")
background=()
# stop_group PID: end the process group PID (a background step and whatever it started) and wait until none of
# it runs, so that nothing of it starts or reloads a thing on a cloud while the clouds are stopped
stop_group() {
    kill -- "-$1" 2>/dev/null || kill "$1" 2>/dev/null || return 0
    for _ in $(seq 100); do kill -0 -- "-$1" 2>/dev/null || return 0; sleep 0.1; done
    kill -KILL -- "-$1" 2>/dev/null || true
    for _ in $(seq 100); do kill -0 -- "-$1" 2>/dev/null || return 0; sleep 0.1; done
}
# in_background LOG COMMAND...: run COMMAND (a function of steps, say) in the background, its output into LOG, in a
# process group of its own, which cleanup() can stop as a whole
in_background() {
    local log=$1
    shift
    set -m
    ("$@") > "${log}" 2>&1 &
    background+=($!)
    set +m
}
# stop_clouds: stop every cloud this run started (the ones that failed to come up too), then check that nothing of
# them runs any more (processes, listening ports): clouds.sh fails naming what is left
stop_clouds() {
    local status=0
    tools/ci/clouds.sh stop "${clouds[@]}" || status=$?
    clouds=()
    return "${status}"
}
cleanup() {
    local status=$?
    [ -z "${upstream_build:-}" ] || stop_group "${upstream_build}"
    rm -f "${upstream_log:-}"
    for pid in "${background[@]}"; do stop_group "${pid}"; done
    if [ "${#clouds[@]}" -gt 0 ] && ! stop_clouds; then
        echo "make test: processes or ports of its clouds were left running (above)" >&2
        status=1
    fi
    rm -rf "${root}"
    exit "${status}"
}
trap cleanup EXIT
tools/ci/clouds.sh start "${clouds[@]}"

"${step}" "collection (a copy for the tests)" bash -c \
    "${make} collection && rm -rf '${test_collections}' && cp -a build/collections '${test_collections}'"
# conformance_tier NAME VERSION: the conformance tier on Cluster API VERSION, on a cloud of its own, once the
# background build is done: its output, then build.sh once more for VERSION (nothing to do when it succeeded, its
# error if not), then the tier
conformance_tier() {
    local name=$1 version=$2
    local target=conformance
    [ "${version}" = v1.13 ] || target="conformance-${version}"
    local show_log=true
    [ "${version}" = v1.13 ] || show_log=false  # the background build's output once, in the v1.13 tier's
    "${step}" "upstream-build-${version}" bash -c "while kill -0 ${upstream_build} 2>/dev/null; do sleep 1; \
        done; if ${show_log}; then cat '${upstream_log}'; fi; bash tools/upstream/build.sh --capi ${version}" \
        || return 1
    "${step}" --needs tests/conformance "${name}" "${make}" "${target}" COLLECTION_BUILT=yes \
        INTEGRATION_COLLECTIONS="${test_collections}"
}
# The chains of steps beside the integration tests: in each, a step runs whatever the one before it did (one run
# reports every failure).
checks() {
    local failed=0
    "${step}" "checks (changelog-lint, lint, typecheck, sanity, units-py312, venv-py311 + units-py311 side by side)" \
        "${make}" -j3 --output-sync=target changelog-lint lint docs-lint typecheck sanity units-py312 units-py311 \
        || failed=1
    "${step}" packaging "${make}" packaging || failed=1
    "${step}" code-shape "${make}" code-shape || failed=1
    return "${failed}"
}
scenarios() {
    local failed=0
    MINICLOUD_TESTS_STATE_DIR="${scenario_cloud}" "${step}" --needs tools/minicloud/tests minicloud-tests \
        "${make}" minicloud-tests || failed=1
    MINICLOUD_STATE_DIR="${scenario_cloud}" "${step}" --needs extensions/molecule molecule "${make}" molecule \
        COLLECTION_BUILT=yes INTEGRATION_COLLECTIONS="${test_collections}" || failed=1
    return "${failed}"
}

# the conformance tier from the start of the run (most of its time is waiting for the real controllers), and beside
# it the tests every supported release must pass, on Cluster API v1.12 (each tier needs its own build only: a failed
# v1.12 build fails the v1.12 tests, not the v1.13 tier)
conformance_logs=("${root}/conformance.log" "${root}/conformance-v1.12.log")
in_background "${conformance_logs[0]}" conformance_tier conformance v1.13
in_background "${conformance_logs[1]}" conformance_tier conformance-v1.12 v1.12
checks_log="${root}/checks.log"
in_background "${checks_log}" checks

# what is left of the clouds' start-up
"${step}" minicloud-up tools/ci/clouds.sh wait "${clouds[@]}"
worker_clouds=("${clouds[@]:0:${#clouds[@]}-1}")
if [ -z "${MINICLOUD_STATE_DIR:-}" ]; then
    MINICLOUD_STATE_DIR="${worker_clouds[0]}"
    worker_clouds=("${worker_clouds[@]:1}")
fi
MINICLOUD_WORKER_STATE_DIRS=$(IFS=:; echo "${worker_clouds[*]}")

scenarios_log="${root}/beside.log"
in_background "${scenarios_log}" scenarios
integration_log="${root}/integration.log"
integration=0
MINICLOUD_STATE_DIR="${MINICLOUD_STATE_DIR}" MINICLOUD_WORKER_STATE_DIRS="${MINICLOUD_WORKER_STATE_DIRS}" \
    "${step}" --needs tests/integration integration "${make}" integration INTEGRATION_WORKERS="${workers}" \
    COLLECTION_BUILT=yes INTEGRATION_COLLECTIONS="${test_collections}" 2>&1 | tee "${integration_log}" \
    || integration=$?
# the steps beside it run to their end even when the integration tests failed: one run reports every failure
status=0
for pid in "${background[@]}"; do wait "${pid}" || status=1; done
background=()
echo
echo "==== the checks (beside the integration tests) ===="
cat "${checks_log}"
echo
echo "==== minicloud tests and molecule (beside the integration tests) ===="
cat "${scenarios_log}"
echo
echo "==== the upstream build and the conformance tier, on Cluster API v1.13 and v1.12 (beside them) ===="
cat "${conformance_logs[@]}"
if [ "${integration}" -ne 0 ] || [ "${status}" -ne 0 ]; then
    # the failed tests of every step again, last, where a reader of the output's end finds them
    echo
    echo "==================== make test: what failed ===================="
    grep -h -E '^(FAILED|ERROR) |^=+ .*(failed|error).* in [0-9.]+s|: FAILED \(exit' \
        "${checks_log}" "${integration_log}" "${scenarios_log}" "${conformance_logs[@]}" || true
    "${step}" --summary
    exit 1
fi
# the end of every run: nothing of its clouds may be left running (processes, listening ports)
"${step}" clouds-stopped tools/ci/clouds.sh stop "${clouds[@]}"
clouds=()
"${step}" --summary
