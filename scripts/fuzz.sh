#!/usr/bin/env bash
# Runs the libFuzzer harnesses of tests/fuzz, one after the other, each for SECONDS.
#   scripts/fuzz.sh [SECONDS] [HARNESS...]     (default: 60 s each, every harness)
# Builds build-fuzz/ (clang-19, -DRI_FUZZ=ON: libFuzzer + ASan + UBSan), regenerates the
# seed corpora in build-fuzz/fuzz-seeds/ (the spec suite's modules through wast2json, the
# wat fixtures, snapshots and store files written by fuzz_seeds, server conversations),
# and keeps what each run finds in build-fuzz/fuzz-corpus/<harness>/ for the next run.
# A crash, leak, UB report or timeout stops that harness; its input is written to
# build-fuzz/fuzz-artifacts/ and the script exits non-zero after the others ran.
# Env: FUZZ_BUILD (build-fuzz), FUZZ_ARGS (more libFuzzer flags), JOBS (build jobs).
set -uo pipefail
cd "$(dirname "$0")/.."

seconds=${1:-60}
shift || true
harnesses=("$@")
[ ${#harnesses[@]} -eq 0 ] && harnesses=(fuzz_load fuzz_restore fuzz_store fuzz_server fuzz_wsfs fuzz_wasi)
build=${FUZZ_BUILD:-build-fuzz}
jobs=${JOBS:-2}


if [ -f "$build/CMakeCache.txt" ] && ! grep -q '^CMAKE_C_COMPILER:[A-Z]*=.*/clang-19$' "$build/CMakeCache.txt"; then
    rm -f "$build/CMakeCache.txt"
fi
CC=clang-19 cmake -S . -B "$build" -DRI_FUZZ=ON -DRI_WERROR=ON >/dev/null || exit 1
cmake --build "$build" -j "$jobs" --target "${harnesses[@]}" fuzz_seeds ri_wat_fixtures >/dev/null || {
    echo "fuzz: the build failed" >&2
    exit 1
}
shared=$(sed -n 's/^RI_SHARED_DIR:PATH=//p' "$build/CMakeCache.txt")
seeds=$build/fuzz-seeds
corpus=$build/fuzz-corpus
artifacts=$build/fuzz-artifacts
mkdir -p "$seeds" "$corpus" "$artifacts"

# ---- seed corpora (regenerated each time: nothing large is committed) -------------------
seed_load() {
    local out=$seeds/fuzz_load tmp
    rm -rf "$out" && mkdir -p "$out"
    cp "$build"/wat/*.wasm "$out"/ 2>/dev/null
    tmp=$(mktemp -d)
    for wast in "$shared"/wasm-testsuite/core/*.wast; do
        [ -f "$wast" ] || continue
        local name
        name=$(basename "$wast" .wast)
        wast2json --enable-all "$wast" -o "$tmp/$name.json" >/dev/null 2>&1 ||
            wast2json "$wast" -o "$tmp/$name.json" >/dev/null 2>&1 || continue
    done
    # modules up to 16 KiB, at most 60 per script: a few thousand small seeds
    for json in "$tmp"/*.json; do
        [ -f "$json" ] || continue
        local base n=0
        base=$(basename "$json" .json)
        for m in "$tmp/$base".*.wasm; do
            [ -f "$m" ] && [ "$(stat -c %s "$m")" -le 16384 ] || continue
            cp "$m" "$out/"
            n=$((n + 1))
            [ $n -ge 60 ] && break
        done
    done
    rm -rf "$tmp"
}

seed_server() {
    local out=$seeds/fuzz_server w
    rm -rf "$out" && mkdir -p "$out"
    local echo_b64 counter_b64 spin_b64
    for w in echo counter spin; do
        wat2wasm "tests/server/wat/$w.wat" -o "$out/$w.wasm" 2>/dev/null || true
    done
    echo_b64=$(base64 -w0 "$out/echo.wasm" 2>/dev/null)
    counter_b64=$(base64 -w0 "$out/counter.wasm" 2>/dev/null)
    spin_b64=$(base64 -w0 "$out/spin.wasm" 2>/dev/null)
    rm -f "$out"/*.wasm
    local init='{"idle_timeout":300,"enable_checkpoint":true,"sandbox":{"max_memory_bytes":1048576,"max_gas":100000,"max_execution_ms":200,"seed":1,"event_timestamp":1700000000000}}'
    printf '%s\n{"language":"wasm","code":"%s"}\n{"event":"stdin","data":"hi"}\n{"event":"stdin_close"}\n{"action":"reconnect"}\n' \
        "$init" "$echo_b64" >"$out/exec-echo"
    printf '%s\n{"action":"load","request_id":1,"module":"%s"}\n{"action":"execute","request_id":2,"function":"inc","payload":[1]}\n{"action":"status","request_id":3}\n{"action":"snapshot","request_id":4}\n{"action":"snapshot_list","request_id":5,"limit":3}\n{"action":"named_save","request_id":6,"name":"a","description":"d","tags":["t"]}\n{"action":"execute","request_id":7,"function":"inc","args":[{"type":"i32","value":2}]}\n{"action":"named_diff","request_id":8,"from":"a"}\n{"action":"named_restore","request_id":9,"name":"a"}\n{"action":"named_list","request_id":10}\n{"action":"named_delete","request_id":11,"name":"a"}\n' \
        "$init" "$counter_b64" >"$out/actions"
    printf '%s\n{"action":"load","module":"%s"}\n{"action":"snapshot","request_id":"s"}\n{"action":"snapshot_restore","ref":{"providerId":"ri-snapstore","ref":{"snapshot":"snap-x","originSandboxId":"sandbox-000000000000000000000000"}}}\n{"action":"snapshot_delete","ref":{"providerId":"ri-snapstore","ref":{"snapshot":"snap-x","originSandboxId":"x"}}}\n{"action":"snapshot_filesystem","name":"fs1"}\n{"action":"checkpoint"}\n' \
        "$init" "$counter_b64" >"$out/snapshots"
    printf '%s\n{"language":"wasm","code":"%s"}\n{"action":"kill_process"}\n{"action":"kill_sandbox"}\n' \
        "$init" "$spin_b64" >"$out/kill"
    printf '{"sandbox":{"module":"%s","gas_schedule":"host_calls"}}\n{"language":"python","code":"x"}\n{"action":"nope","request_id":[1]}\n[1,2]\n{"a":{"b":{"c":1}}}\n' \
        "$counter_b64" >"$out/odd"
}

# the workspace harness writes its own seeds (images of sample trees, operation programs)
seed_wsfs() {
    rm -rf "$seeds/fuzz_wsfs" && mkdir -p "$seeds/fuzz_wsfs"
    RI_WSFS_SEED_DIR=$seeds/fuzz_wsfs "$build/fuzz/fuzz_wsfs" >/dev/null 2>&1
}

for h in "${harnesses[@]}"; do
    case $h in
    fuzz_load) seed_load ;;
    fuzz_server) seed_server ;;
    fuzz_wsfs) seed_wsfs ;;
    esac
done
"$build/fuzz/fuzz_seeds" "$seeds" || exit 1

# ---- runs ------------------------------------------------------------------------------
failed=()
summary=()
for h in "${harnesses[@]}"; do
    mkdir -p "$corpus/$h"
    log=$build/fuzz-$h.log
    printf '==== %s: %s s ====\n' "$h" "$seconds"
    dirs=("$corpus/$h")
    [ -d "$seeds/$h" ] && dirs+=("$seeds/$h")
    [ -d "tests/fuzz/regress/$h" ] && dirs+=("tests/fuzz/regress/$h")
    # shellcheck disable=SC2086
    "$build/fuzz/$h" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=2560 \
        -print_final_stats=1 -artifact_prefix="$artifacts/$h-" ${FUZZ_ARGS:-} "${dirs[@]}" >"$log" 2>&1
    rc=$?
    last=$(grep -E '^#[0-9]+' "$log" | tail -n 1)
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
    summary+=("$(printf '%-13s rc=%d execs=%s last: %s' "$h" "$rc" "${execs:-?}" "$last")")
    if [ $rc -ne 0 ]; then
        failed+=("$h")
        grep -E 'ERROR|SUMMARY|runtime error|Test unit written' "$log" | head -n 8
    fi
done
printf '\n==== fuzz: summary (logs in %s/fuzz-*.log) ====\n' "$build"
printf '%s\n' "${summary[@]}"
if [ ${#failed[@]} -gt 0 ]; then
    echo "fuzz: findings in: ${failed[*]} (inputs in $artifacts/)"
    exit 1
fi
