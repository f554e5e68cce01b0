#!/usr/bin/env bash
# Print the path of a working CPython interpreter of the given minor version (e.g. 3.12), or
# nothing and exit 1 when there is none. Looks at `pythonX.Y` on PATH first, then at pyenv's
# installed versions (newest patch release first). pyenv shims are on PATH even for versions that
# are not active, so every candidate is run once to prove it works.
set -u
want="${1:?usage: find-python.sh X.Y}"

candidates=()
if found="$(command -v "python${want}" 2>/dev/null)"; then
    candidates+=("${found}")
fi
if root="$(pyenv root 2>/dev/null)" || root="${PYENV_ROOT:-${HOME}/.pyenv}"; then
    while IFS= read -r dir; do
        candidates+=("${dir}/bin/python${want}")
    done < <(ls -d "${root}/versions/${want}".* "${root}/versions/${want}" 2>/dev/null | sort -V -r)
fi

for candidate in "${candidates[@]}"; do
    if [ -x "${candidate}" ] && "${candidate}" -c "import sys; sys.exit(0 if '%d.%d' % sys.version_info[:2] == '${want}' else 1)" >/dev/null 2>&1; then
        real="$("${candidate}" -c 'import sys; print(sys.executable)')"
        # a pyenv shim reports the real interpreter as sys.executable; prefer that stable path
        echo "${real:-${candidate}}"
        exit 0
    fi
done
exit 1
