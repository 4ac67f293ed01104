#!/usr/bin/env bash
# Invariant 7 (docs/ARCHITECTURE.md): nothing in the library is a non-const global. Lists
# every object in a writable data section (.data, .bss, thread-local ones, common
# symbols) of the libraries given; .data.rel.ro (const tables of pointers) is read-only
# after relocation and allowed, and so are the sanitizers' and coverage's own symbols
# (__odr_asan.*, __sancov_gen_*, ...). Usage: no_globals.sh LIB.a...
set -uo pipefail
found=0
for lib in "$@"; do
    # objdump -t: "<addr> <flags> [O] <section> <size> <name>" (thread-locals have no O)
    hits=$(objdump -t "$lib" | awk '/^[0-9a-f]+ / { for (i = 2; i < NF; i++) if ($i ~ /^(\.data|\.bss|\.tdata|\.tbss|\*COM\*)/ && $i !~ /^\.data\.rel\.ro/ && $(i + 1) !~ /^0+$/ && $NF !~ /^_*(odr_asan|asan|ubsan|sancov|llvm_gcov|gcov)/) { print "  " $NF " (" $i ")"; break } }')
    if [ -n "$hits" ]; then
        echo "no_globals: $(basename "$lib") has mutable globals:"
        echo "$hits"
        found=1
    fi
done
if [ "$found" -eq 0 ]; then
    echo "no_globals: $# libraries, no mutable global"
    echo "1 passed, 0 failed"
else
    echo "0 passed, 1 failed"
fi
exit "$found"
