#!/bin/bash
# Held-out programs (bench/README.md, "Held-out programs"): five small C programs that no
# engine work was tuned on, timed like the six of ../shared/bench (ri metering on, Node),
# so that a speed-up found by profiling those six can be told apart from one that carries
# over. Usage: bench/heldout/run.sh [RI_BENCH_RUN] [OUTDIR]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
ri=${1:-$root/build/ri-bench-run}
out=${2:-$root/build/bench/heldout}
shared=$root/../shared/bench/src
mkdir -p "$out"
printf '%-10s %12s %12s %12s %8s\n' program native_ms ri_on_ms node_ms ri/node
logsum=0 n=0
for p in crc vm hash mandel strsearch lz bigint json; do
    clang-19 --target=wasm32 -O2 -nostdlib -Wl,--no-entry -Wl,-z,stack-size=1048576 -I "$shared" \
        -o "$out/$p.wasm" "$here/$p.c"
    printf '#include "%s"\n#include <stdio.h>\nint main(void) { printf("%%u\\n", run()); return 0; }\n' "$here/$p.c" |
        gcc -O2 -I "$shared" -o "$out/$p.native" -x c -
    want=$("$out/$p.native")
    got=$("$ri" "$out/$p.wasm" run 2>/dev/null)
    [ "$got" = "$want" ] || { echo "$p: ri returned $got, native $want" >&2; exit 1; }
    t0=$(date +%s%N); "$out/$p.native" >/dev/null; t1=$(date +%s%N)
    ri_ns=$("$ri" --repeat 5 "$out/$p.wasm" run 2>&1 >/dev/null | grep -o 'median_ns=[0-9]*' | cut -d= -f2)
    node_ns=$(for i in 1 2 3; do node "$root/bench/node_time.mjs" "$out/$p.wasm" run 2>&1 >/dev/null |
        grep -o 'call_ns=[0-9]*' | cut -d= -f2; done | sort -n | sed -n 2p)
    ratio=$(awk -v a="$ri_ns" -v b="$node_ns" 'BEGIN { printf "%.2f", a / b }')
    printf '%-10s %12.1f %12.1f %12.1f %8s\n' "$p" "$(awk -v x=$((t1 - t0)) 'BEGIN{print x/1e6}')" \
        "$(awk -v x="$ri_ns" 'BEGIN{print x/1e6}')" "$(awk -v x="$node_ns" 'BEGIN{print x/1e6}')" "$ratio"
    logsum=$(awk -v s="$logsum" -v r="$ratio" 'BEGIN { print s + log(r) }')
    n=$((n + 1))
done
awk -v s="$logsum" -v n="$n" 'BEGIN { printf "geomean ri/node %.2f\n", exp(s / n) }'
