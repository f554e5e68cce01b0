#!/usr/bin/env bash
# `make test`: every step CI runs, in order, stopping at the first failure (tools/ci/step.sh prints each
# step's time and the summary). The integration tests and the role scenarios share one minicloud, started
# here on free ports in a temporary folder and removed at the end, whatever happened; with
# MINICLOUD_STATE_DIR set, that cloud is used instead and left running.
set -euo pipefail
cd "$(dirname "$0")/../.."
step=tools/ci/step.sh
make="${MAKE:-make}"

"${step}" venv "${make}" venv
"${step}" venv-py311 "${make}" venv-py311
"${step}" changelog-lint "${make}" changelog-lint
"${step}" lint "${make}" lint
"${step}" sanity "${make}" sanity
"${step}" units-py312 "${make}" units-py312
"${step}" units-py311 "${make}" units-py311
"${step}" --needs tools/minicloud/tests minicloud-tests "${make}" minicloud-tests
"${step}" packaging "${make}" packaging

if [ -z "${MINICLOUD_STATE_DIR:-}" ]; then
    MINICLOUD_STATE_DIR=$(mktemp -d "${TMPDIR:-/tmp}/make-test-minicloud.XXXXXX")
    export MINICLOUD_STATE_DIR
    trap '.venv/bin/python -m minicloud down --purge >/dev/null 2>&1 || true; rm -rf "${MINICLOUD_STATE_DIR}"' EXIT
    "${step}" minicloud-up .venv/bin/python -m minicloud up --port-offset auto --timeout 300
fi
"${step}" --needs tests/integration integration "${make}" integration
"${step}" --needs extensions/molecule molecule "${make}" molecule
"${step}" --summary
