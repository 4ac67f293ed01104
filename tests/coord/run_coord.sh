#!/usr/bin/env bash
# Starts a 3-member etcd cluster on free 127.0.0.1 ports in a temporary directory, runs
# test_coord against it (bounded in time) and always removes the cluster. Skips (exit 77) only
# when etcd is not installed. Usage: run_coord.sh TEST_COORD_BINARY
set -euo pipefail
test_bin=${1:?usage: run_coord.sh TEST_COORD_BINARY}
here=$(cd "$(dirname "$0")" && pwd)
if ! command -v etcd >/dev/null || ! command -v etcdctl >/dev/null; then
    echo "SKIP: etcd and etcdctl are not installed (Debian etcd-server and etcd-client; scripts/install-deps.sh)"
    exit 77
fi
dir=$(mktemp -d "${TMPDIR:-/tmp}/ri-coord.XXXXXX")
cleanup() {
    bash "$here/etcd_cluster.sh" stop "$dir" || true
    rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
bash "$here/etcd_cluster.sh" start "$dir"
rc=0
timeout -k 5 240 "$test_bin" "$here/etcd_cluster.sh" "$dir" || rc=$?
if [ "$rc" -ne 0 ]; then
    echo "test_coord exited $rc; the members' last log lines:"
    for f in "$dir"/m*.log; do echo "== $f"; tail -n 5 "$f"; done
fi
exit "$rc"
