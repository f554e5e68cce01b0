#!/usr/bin/env bash
# Run one named step of `make test` with a banner and its duration; keep a log for the summary.
#   step.sh [--needs PATH] NAME COMMAND...   run COMMAND (skip loudly when PATH does not exist)
#   step.sh --summary                        print the durations of the steps run so far and the wall time
# A step's cpu is what the whole machine was busy during it (steps side by side share it). The log
# (build/test-steps.log) is reset by the first step, `venv`. Steps that ran side by side (see
# tools/ci/test.sh) each say their own time: the total is the wall time since `venv` started, not their sum.
set -euo pipefail
log=build/test-steps.log
started=build/test-steps.start
mkdir -p build

if [ "${1:-}" = "--summary" ]; then
    echo "==================== make test: summary ===================="
    column -t -s $'\t' "${log}" 2>/dev/null || cat "${log}"
    echo "total $(($(date +%s) - $(cat "${started}" 2>/dev/null || date +%s)))s (wall time)"
    exit 0
fi

needs=""
if [ "${1:-}" = "--needs" ]; then
    needs="$2"
    shift 2
fi
name="$1"
shift
if [ "${name}" = "venv" ]; then
    : > "${log}"
    date +%s > "${started}"
fi

if [ -n "${needs}" ] && [ ! -e "${needs}" ]; then
    echo
    echo "!!!!!!!!!! SKIPPED ${name}: ${needs} does not exist yet !!!!!!!!!!"
    printf '%s\tSKIPPED\t0s\t(%s missing)\n' "${name}" "${needs}" >> "${log}"
    exit 0
fi

# CPU-seconds the whole machine was busy (user + system, all cores), from /proc/stat where there is one:
# with the wall time it says whether a step keeps the cores busy or waits.
busy_seconds() {
    awk -v hz="$(getconf CLK_TCK)" '/^cpu / { printf "%d", ($2 + $3 + $4 + $7 + $8) / hz }' /proc/stat 2>/dev/null \
        || echo 0
}

echo
echo "==================== ${name} ===================="
start=${SECONDS}
busy_start=$(busy_seconds)
status=0
"$@" || status=$?
elapsed=$((SECONDS - start))
cpu="cpu $(($(busy_seconds) - busy_start))s"
if [ "${status}" -eq 0 ]; then
    echo "==================== ${name}: ok in ${elapsed}s (${cpu}) ===================="
    printf '%s\tok\t%ss\t%s\n' "${name}" "${elapsed}" "${cpu}" >> "${log}"
else
    echo "==================== ${name}: FAILED (exit ${status}) after ${elapsed}s (${cpu}) ===================="
    printf '%s\tFAILED\t%ss\t%s\n' "${name}" "${elapsed}" "${cpu}" >> "${log}"
    column -t -s $'\t' "${log}" 2>/dev/null || cat "${log}"
fi
exit "${status}"
