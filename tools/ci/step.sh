#!/usr/bin/env bash
# Run one named step of `make test` with a banner and its duration; keep a log for the summary.
#   step.sh [--needs PATH] NAME COMMAND...   run COMMAND (skip loudly when PATH does not exist)
#   step.sh --summary                        print the durations of the steps run so far
# The log (build/test-steps.log) is reset by the first step, `venv`.
set -euo pipefail
log=build/test-steps.log
mkdir -p build

if [ "${1:-}" = "--summary" ]; then
    echo "==================== make test: summary ===================="
    column -t -s $'\t' "${log}" 2>/dev/null || cat "${log}"
    total=$(awk -F'\t' '{gsub("s","",$3); t += $3} END {print t + 0}' "${log}")
    echo "total ${total}s"
    exit 0
fi

needs=""
if [ "${1:-}" = "--needs" ]; then
    needs="$2"
    shift 2
fi
name="$1"
shift
[ "${name}" = "venv" ] && : > "${log}"

if [ -n "${needs}" ] && [ ! -e "${needs}" ]; then
    echo
    echo "!!!!!!!!!! SKIPPED ${name}: ${needs} does not exist yet !!!!!!!!!!"
    printf '%s\tSKIPPED\t0s\t(%s missing)\n' "${name}" "${needs}" >> "${log}"
    exit 0
fi

echo
echo "==================== ${name} ===================="
start=${SECONDS}
status=0
"$@" || status=$?
elapsed=$((SECONDS - start))
if [ "${status}" -eq 0 ]; then
    echo "==================== ${name}: ok in ${elapsed}s ===================="
    printf '%s\tok\t%ss\n' "${name}" "${elapsed}" >> "${log}"
else
    echo "==================== ${name}: FAILED (exit ${status}) after ${elapsed}s ===================="
    printf '%s\tFAILED\t%ss\n' "${name}" "${elapsed}" >> "${log}"
    column -t -s $'\t' "${log}" 2>/dev/null || cat "${log}"
fi
exit "${status}"
