#!/bin/bash
# Builds bench/devtools/codeprof (see codeprof.c) into $1 (default /tmp/ri-codeprof): a copy
# of src/engine whose DISPATCH() counts every dispatch, and the tool linked against it.
# Usage: bench/devtools/codeprof.sh [OUTDIR]; then OUTDIR/codeprof MODULE.wasm [-u] [FUNC]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-/tmp/ri-codeprof}
rm -rf "$out/src" "$out/obj"
mkdir -p "$out/src/engine" "$out/obj"
cp "$root"/src/engine/*.c "$root"/src/engine/*.h "$out/src/engine/"
# the one change: each dispatch first reports its pc
sed -i 's|^#define DISPATCH() goto|void ri_prof_hit(const uint32_t *pc);\n#define DISPATCH() ri_prof_hit(pc); goto|' "$out/src/engine/interp.c"
grep -q 'ri_prof_hit(pc); goto' "$out/src/engine/interp.c" || { echo "codeprof.sh: DISPATCH() not found in interp.c" >&2; exit 1; }
objs=()
for f in "$out"/src/engine/*.c; do
    o="$out/obj/$(basename "$f" .c).o"
    gcc -std=c11 -D_GNU_SOURCE -O1 -I "$root/include" -I "$out/src" -I "$root/src" -c "$f" -o "$o"
    objs+=("$o")
done
gcc -std=c11 -D_GNU_SOURCE -O1 -Wall -Wextra -I "$root/include" -I "$out/src" -I "$root/src" -o "$out/codeprof" \
    "$root/bench/devtools/codeprof.c" "${objs[@]}" "$root"/src/util/*.c -lm -lpthread
echo "$out/codeprof"
