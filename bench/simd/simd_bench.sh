#!/bin/bash
# The SIMD kernels (dot.c, blur.c) built with and without -msimd128 (clang-19 -O3), each run
# on ri (ri-bench-run, metered) and on Node; prints the call times (the minimum over the
# runs: the machine may be shared) and the ratios: SIMD against scalar in each runtime, and
# ri against Node. `make bench-simd`, or:
#   bench/simd/simd_bench.sh RI_BENCH_RUN OUTDIR [RUNS]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
ri=${1:?usage: simd_bench.sh RI_BENCH_RUN OUTDIR [RUNS]}
out=${2:?usage: simd_bench.sh RI_BENCH_RUN OUTDIR [RUNS]}
runs=${3:-7}
clang=${CLANG:-clang-19}
mkdir -p "$out"

min_of() { sort -n | head -1; }
ri_ns() { # the fastest of $runs calls, each in a fresh store
    "$ri" --repeat "$runs" "$1" run 2>&1 >/dev/null | sed -n 's/.*min_ns=\([0-9]*\).*/\1/p'
}
node_ns() { # the fastest of $runs processes (each compiles afresh)
    for _ in $(seq "$runs"); do node "$here/../node_time.mjs" "$1" 2>&1 >/dev/null | sed -n 's/call_ns=//p'; done | min_of
}
ms() { awk -v n="$1" 'BEGIN { printf "%.2f", n / 1e6 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }

printf '%-6s %10s %10s %8s %10s %10s %8s %10s\n' kernel ri-scalar ri-simd ri-x node-scalar node-simd node-x ri/node
for k in dot blur; do
    for v in scalar simd; do
        flags=()
        [ "$v" = simd ] && flags=(-msimd128)
        "$clang" --target=wasm32 -O3 -nostdlib -Wl,--no-entry "${flags[@]}" "$here/$k.c" -o "$out/${k}_$v.wasm"
    done
    # both builds, in both runtimes, must give the same checksum
    sums=$(for v in scalar simd; do "$ri" "$out/${k}_$v.wasm" run; node "$here/../node_time.mjs" "$out/${k}_$v.wasm" 2>/dev/null; done | sort -u | wc -l)
    [ "$sums" = 1 ] || { echo "simd_bench: $k: the builds or runtimes disagree on the result" >&2; exit 1; }
    rs=$(ri_ns "$out/${k}_scalar.wasm"); rv=$(ri_ns "$out/${k}_simd.wasm")
    ns=$(node_ns "$out/${k}_scalar.wasm"); nv=$(node_ns "$out/${k}_simd.wasm")
    printf '%-6s %10s %10s %8s %10s %10s %8s %10s\n' "$k" "$(ms "$rs")" "$(ms "$rv")" "$(ratio "$rs" "$rv")" \
        "$(ms "$ns")" "$(ms "$nv")" "$(ratio "$ns" "$nv")" "$(ratio "$rv" "$nv")"
done
echo "(ms per call; -x: scalar time / SIMD time, above 1 when SIMD is faster; ri/node: the SIMD builds)"
