#!/usr/bin/env bash
# Run every molecule scenario of the roles (extensions/molecule/*) against one minicloud.
#   molecule.sh COLLECTIONS_PATH [SCENARIO...]
# Uses the cloud in $MINICLOUD_STATE_DIR when set (left running); otherwise starts one in a temporary
# folder on free ports and stops it at the end. Scenarios read the cloud from MINICLOUD_STATE_DIR
# (clouds.yaml, kubeconfig) and run minicloud verbs with $MINICLOUD_PYTHON.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
collections="$1"
shift
venv="${repo}/.venv"
scenarios=("$@")
if [ ${#scenarios[@]} -eq 0 ]; then
    for dir in "${repo}"/extensions/molecule/*/; do
        # default holds no test (it is there because every molecule run looks for it)
        [ -f "${dir}molecule.yml" ] && [ "$(basename "${dir}")" != default ] && scenarios+=("$(basename "${dir}")")
    done
fi
if [ ${#scenarios[@]} -eq 0 ]; then
    echo "no molecule scenarios in extensions/molecule"
    exit 0
fi

own_cloud=""
if [ -z "${MINICLOUD_STATE_DIR:-}" ]; then
    MINICLOUD_STATE_DIR=$(mktemp -d "${TMPDIR:-/tmp}/molecule-minicloud.XXXXXX")
    own_cloud=yes
fi
export MINICLOUD_STATE_DIR
if [ -n "${own_cloud}" ]; then
    trap '"${venv}/bin/python" -m minicloud down --purge >/dev/null 2>&1 || true' EXIT
    "${venv}/bin/python" -m minicloud up --port-offset auto
fi
export MINICLOUD_PYTHON="${venv}/bin/python"
export OS_CLIENT_CONFIG_FILE="${MINICLOUD_STATE_DIR}/clouds.yaml"
export ANSIBLE_COLLECTIONS_PATH="${collections}"
export PATH="${venv}/bin:${PATH}"
export ANSIBLE_NOCOLOR=1 PY_COLORS=0 ANSIBLE_FORCE_COLOR=0

cd "${repo}/extensions"
# The scenarios seed clusters, routers and servers of their own names and change no mode of the cloud: they run
# side by side (most of their time is spent waiting for the cloud), each printing its output when it is done.
logs=$(mktemp -d "${TMPDIR:-/tmp}/molecule-logs.XXXXXX")
pids=()
for scenario in "${scenarios[@]}"; do
    (
        start=$(date +%s)
        # molecule keeps a scenario's state (prepared or not) between runs; start each run from scratch
        molecule reset -s "${scenario}" >/dev/null 2>&1 || true
        if molecule test -s "${scenario}" > "${logs}/${scenario}.log" 2>&1; then
            echo "=== ${scenario}: passed in $(( $(date +%s) - start ))s ===" >> "${logs}/${scenario}.log"
        else
            echo "=== ${scenario}: FAILED after $(( $(date +%s) - start ))s ===" >> "${logs}/${scenario}.log"
            exit 1
        fi
    ) &
    pids+=($!)
done
failed=()
for index in "${!scenarios[@]}"; do
    status=0
    wait "${pids[${index}]}" || status=$?
    echo "=== molecule scenario ${scenarios[${index}]} ==="
    cat "${logs}/${scenarios[${index}]}.log"
    [ "${status}" -eq 0 ] || failed+=("${scenarios[${index}]}")
done
rm -rf "${logs}"
if [ ${#failed[@]} -ne 0 ]; then
    echo "failed scenarios: ${failed[*]}"
    exit 1
fi
[ -n "${own_cloud}" ] && echo "(minicloud in ${MINICLOUD_STATE_DIR} is stopped and removed)"
exit 0
