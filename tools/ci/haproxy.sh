#!/bin/sh
# Install Debian's haproxy when it is missing: minicloud's load balancers run on it (their data plane).
# As root with apt-get; through sudo when it works without a password; otherwise say what to run.
set -eu
for candidate in "$(command -v haproxy 2>/dev/null || true)" /usr/sbin/haproxy /usr/local/sbin/haproxy; do
    if [ -n "$candidate" ] && [ -x "$candidate" ]; then
        exit 0
    fi
done
if ! command -v apt-get >/dev/null 2>&1; then
    echo "haproxy is missing and there is no apt-get here: install HAProxy (2.6 or newer) with this system's" \
         "package manager; minicloud's load balancers need it." >&2
    exit 1
fi
if [ "$(id -u)" = 0 ]; then
    run=""
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    run="sudo -n"
else
    echo "haproxy is missing: run 'sudo apt-get install -y haproxy' (minicloud's load balancers need it)," \
         "then 'make venv' again." >&2
    exit 1
fi
echo "installing haproxy (minicloud's load-balancer data plane)"
$run apt-get install -y -q haproxy >/dev/null || { $run apt-get update -q >/dev/null && $run apt-get install -y -q haproxy >/dev/null; }
