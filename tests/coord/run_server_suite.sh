#!/usr/bin/env bash
# Runs one file of the server's own suite (tests/server/test_*.py) with every `ri serve` the
# harness starts in etcd mode (RI_SERVE_EXTRA_ARGS="--coordinator etcd://..."), against a
# 3-member cluster on free 127.0.0.1 ports that is always removed. Skips (exit 77) only when
# etcd is not installed. Usage: run_server_suite.sh TEST_FILE PATH/TO/ri
set -euo pipefail
test_file=${1:?usage: run_server_suite.sh TEST_FILE PATH/TO/ri}
ri=${2:?usage: run_server_suite.sh TEST_FILE PATH/TO/ri}
here=$(cd "$(dirname "$0")" && pwd)
if ! command -v etcd >/dev/null || ! command -v etcdctl >/dev/null; then
    echo "SKIP: etcd and etcdctl are not installed (Debian etcd-server and etcd-client; scripts/install-deps.sh)"
    exit 77
fi
dir=$(mktemp -d "${TMPDIR:-/tmp}/ri-suite-etcd.XXXXXX")
cleanup() {
    bash "$here/etcd_cluster.sh" stop "$dir" || true
    rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
bash "$here/etcd_cluster.sh" start "$dir"
RI_SERVE_EXTRA_ARGS="--coordinator etcd://$(bash "$here/etcd_cluster.sh" endpoints "$dir")"
export RI_SERVE_EXTRA_ARGS
echo "ri serve $RI_SERVE_EXTRA_ARGS"
/usr/bin/python3 "$test_file" "$ri"
