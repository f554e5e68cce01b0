#!/usr/bin/env bash
# `make test`: every step CI runs, in order, stopping at the first failure (tools/ci/step.sh prints each
# step's time and the summary). The integration tests and the role scenarios run on minicloud test clouds
# started here, one per integration worker (INTEGRATION_WORKERS, default 2), on free ports in a temporary
# folder: they come up in the background while the static checks and unit tests run, and are removed at the
# end, whatever happened. With MINICLOUD_STATE_DIR set, that cloud is used instead (left running) and the
# other workers start their own.
set -euo pipefail
cd "$(dirname "$0")/../.."
step=tools/ci/step.sh
make="${MAKE:-make}"
workers="${INTEGRATION_WORKERS:-2}"

"${step}" venv "${make}" venv

clouds=()
if [ -z "${MINICLOUD_STATE_DIR:-}" ]; then
    root=$(mktemp -d "${TMPDIR:-/tmp}/make-test-minicloud.XXXXXX")
    for ((i = 0; i < workers; i++)); do clouds+=("${root}/cloud-${i}"); done
    trap 'tools/ci/clouds.sh stop "${clouds[@]}"; rm -rf "${root}"' EXIT
    tools/ci/clouds.sh start "${clouds[@]}"
fi

"${step}" venv-py311 "${make}" venv-py311
"${step}" changelog-lint "${make}" changelog-lint
"${step}" lint "${make}" lint
"${step}" sanity "${make}" sanity
"${step}" units-py312 "${make}" units-py312
"${step}" units-py311 "${make}" units-py311
"${step}" --needs tools/minicloud/tests minicloud-tests "${make}" minicloud-tests
"${step}" packaging "${make}" packaging

if [ ${#clouds[@]} -gt 0 ]; then
    # what is left of the clouds' start-up, after the steps above
    "${step}" minicloud-up tools/ci/clouds.sh wait "${clouds[@]}"
    export MINICLOUD_STATE_DIR="${clouds[0]}"
    MINICLOUD_WORKER_STATE_DIRS=$(IFS=:; echo "${clouds[*]:1}")
    export MINICLOUD_WORKER_STATE_DIRS
fi
"${step}" --needs tests/integration integration "${make}" integration INTEGRATION_WORKERS="${workers}"
"${step}" --needs extensions/molecule molecule "${make}" molecule
"${step}" --summary
