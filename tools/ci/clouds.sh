#!/usr/bin/env bash
# The minicloud test clouds of `make test`, started in the background while the static checks run.
#   clouds.sh start DIR...   start one cloud per state folder (free ports), each `up` in the background
#   clouds.sh wait DIR...    wait until every `up` has finished; print its output; fail if one failed
#   clouds.sh stop DIR...    stop each cloud and remove its folder (whatever state it is in); fail, naming them,
#                            if processes of a cloud or ports it listened on are left afterwards
# An `up` writes its output to DIR.log and its exit status to DIR.rc, next to the folder.
set -euo pipefail
python="${MINICLOUD_PYTHON:-.venv/bin/python}"
action="$1"
shift

case "${action}" in
start)
    for dir in "$@"; do
        mkdir -p "${dir}"
        rm -f "${dir}.rc"
        (
            status=0
            MINICLOUD_STATE_DIR="${dir}" "${python}" -m minicloud up --port-offset auto --timeout 600 \
                > "${dir}.log" 2>&1 || status=$?
            echo "${status}" > "${dir}.rc"
        ) &
    done
    ;;
wait)
    failed=0
    for dir in "$@"; do
        while [ ! -s "${dir}.rc" ]; do sleep 0.5; done
        echo "--- minicloud in ${dir} (up exited $(cat "${dir}.rc"))"
        cat "${dir}.log"
        [ "$(cat "${dir}.rc")" = 0 ] || failed=1
    done
    exit "${failed}"
    ;;
stop)
    left=0
    for dir in "$@"; do
        # an `up` still starting must not outlive the run: wait for it to finish, then stop what it started
        for _ in $(seq 600); do [ -s "${dir}.rc" ] || [ ! -e "${dir}.log" ] && break; sleep 0.5; done
        ports=$(MINICLOUD_STATE_DIR="${dir}" "${python}" -m minicloud leftovers --list-ports 2>/dev/null || true)
        MINICLOUD_STATE_DIR="${dir}" "${python}" -m minicloud down --purge \
            || echo "clouds.sh: 'minicloud down --purge' of ${dir} failed" >&2
        # nothing of the cloud may run on: no process of its folder, none of the ports it listened on
        MINICLOUD_STATE_DIR="${dir}" "${python}" -m minicloud leftovers --ports "${ports}" >&2 || left=1
        rm -rf "${dir}" "${dir}.log" "${dir}.rc"
    done
    exit "${left}"
    ;;
*)
    echo "usage: clouds.sh start|wait|stop DIR..." >&2
    exit 2
    ;;
esac
