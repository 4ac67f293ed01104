#!/bin/bash
# Builds bench/devtools/codedump (see codedump.c) against a source tree and its build
# directory (default: this one's and build/), into OUT (default /tmp/ri-codedump).
# Usage: bench/devtools/codedump.sh [SRC_ROOT [BUILD_DIR [OUT]]]; then OUT MODULE.wasm...
# To check that a compiler change emits the same code (in every configuration: metered,
# unmetered, all fusion families off, each off alone): build it for the old tree and the
# new one, run both on the same modules (the spec suite's, via wast2json; build/wat/*.wasm;
# build/bench/*.wasm) and diff the outputs.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=${1:-$(cd "$here/../.." && pwd)}
build=${2:-$root/build}
out=${3:-/tmp/ri-codedump}
gcc -std=c11 -D_GNU_SOURCE -O1 -Wall -Wextra -I "$root/include" -I "$root/src" -o "$out" \
    "$here/codedump.c" "$build/libri_engine.a" "$build/libri_util.a" -lm -lpthread
echo "$out"
