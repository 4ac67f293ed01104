#!/usr/bin/env bash
# Determinism across machines: the same program gives the same results and the same
# snapshot image bytes on every architecture, and a call paused on one is resumed on
# another. Each ARCH=COMMAND names an `ri` to run (COMMAND is split on spaces, so it may
# start with an emulator), e.g.
#
#   bash tests/cross/test_determinism.sh x86-64=build/ri \
#        "s390x=qemu-s390x -L /usr/s390x-linux-gnu build-s390x/ri" \
#        "aarch64=qemu-aarch64 -L /usr/aarch64-linux-gnu build-aarch64/ri"
#
# The first one is the reference. Checks, with tests/cross/determinism.wat (every value
# type in globals, tables, memory, segments at constant offsets; f32 arithmetic that
# differs at another precision):
#   1. one uninterrupted run: value, gas and the image (uncompressed and zstd) on each;
#   2. each architecture restores the next one's image and reads the four globals;
#   3. the first slice of a paused run: its image (frames included) on each;
#   4. a run sliced by gas, each slice on the next architecture in turn (two orders):
#      the same value, total gas and final image as the uninterrupted run.
# Needs wat2wasm, jq, cmp. Prints each failure, then "N passed, N failed".
set -u

here=$(cd "$(dirname "$0")" && pwd)
if [ $# -lt 2 ]; then
    echo "usage: $0 ARCH=COMMAND ARCH=COMMAND..." >&2
    exit 2
fi
for tool in wat2wasm jq cmp; do
    command -v "$tool" >/dev/null || { echo "test_determinism: $tool not found" >&2; echo "0 passed, 1 failed"; exit 1; }
done

archs=() runners=()
for spec in "$@"; do
    archs+=("${spec%%=*}")
    runners+=("${spec#*=}")
done
n=${#archs[@]}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/ri-cross.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
passed=0 failed=0
pass() { passed=$((passed + 1)); }
fail() { failed=$((failed + 1)); echo "FAIL [$1] $2"; }

wasm=$tmp/det.wasm
wat2wasm "$here/determinism.wat" -o "$wasm" || { echo "test_determinism: wat2wasm failed" >&2; echo "0 passed, 1 failed"; exit 1; }
ROUNDS=400
SLICE=4000
# qemu-user runs programs far slower than the host: no wall-clock limit gets in the way
common=(--timestamp 1700000000000 --seed 9 --gas-schedule instructions --timeout 3600000)

# ri I ARGS...: runs architecture I's ri; stdout to $tmp/out, stderr to $tmp/err
ri() {
    local i=$1
    shift
    # shellcheck disable=SC2086 # the runner is split on purpose
    ${runners[$i]} "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
}

# same NAME FILE_A FILE_B: the two files hold the same bytes
same() {
    if cmp -s "$2" "$3"; then pass; else fail "$1" "$(basename "$2") and $(basename "$3") differ: $(cmp "$2" "$3" 2>&1 | head -n 1)"; fi
}
# equal NAME GOT WANT
equal() {
    if [ "$2" = "$3" ]; then pass; else fail "$1" "'$2', want '$3'"; fi
}
# ran NAME I STATUS...: the last ri exited 0; prints its stderr otherwise
ran() {
    if [ "$3" -eq 0 ]; then pass; return 0; fi
    fail "$1" "${archs[$2]}: exit status $3: $(head -c 300 "$tmp/err")"
    return 1
}

# ---- 1. the uninterrupted run ---------------------------------------------------------------
for ((i = 0; i < n; i++)); do
    a=${archs[$i]}
    ri "$i" run "${common[@]}" --max-gas 100000000 --snapshot "$tmp/full-$a.wsnp" --uncompressed --json "$wasm" mix "$ROUNDS"
    ran "full-$a" "$i" $? || continue
    value[i]=$(jq -r '.executions[0].value' <"$tmp/out")
    gas[i]=$(jq -r '.executions[0].metrics.gasUsed' <"$tmp/out")
    ri "$i" run "${common[@]}" --max-gas 100000000 --snapshot "$tmp/fullz-$a.wsnp" --json "$wasm" mix "$ROUNDS"
    ran "full-zstd-$a" "$i" $?
done
ref=${archs[0]}
if [ ! -s "$tmp/full-$ref.wsnp" ]; then
    echo "test_determinism: the reference ($ref) did not run"
    echo "$passed passed, $((failed + 1)) failed"
    exit 1
fi
for ((i = 1; i < n; i++)); do
    a=${archs[$i]}
    equal "full-value-$a" "${value[i]:-}" "${value[0]}"
    equal "full-gas-$a" "${gas[i]:-}" "${gas[0]}"
    same "full-image-$a" "$tmp/full-$a.wsnp" "$tmp/full-$ref.wsnp"
    same "full-image-zstd-$a" "$tmp/fullz-$a.wsnp" "$tmp/fullz-$ref.wsnp"
done

# ---- 2. an image restored on another architecture ---------------------------------------------
for ((i = 0; i < n; i++)); do
    a=${archs[$i]} from=${archs[$(((i + 1) % n))]}
    got=""
    for g in gi gl gf gd; do
        ri "$i" run --restore "$tmp/full-$from.wsnp" --gas-schedule instructions --timeout 3600000 --json "$wasm" "$g"
        ran "restore-$from-on-$a-$g" "$i" $? || continue
        got="$got $g=$(jq -r '.executions[0].value' <"$tmp/out")"
    done
    globals[i]=$got
done
for ((i = 1; i < n; i++)); do
    equal "restored-globals-${archs[$i]}" "${globals[i]}" "${globals[0]}"
done

# ---- 3. the first slice of a paused run -----------------------------------------------------------
for ((i = 0; i < n; i++)); do
    a=${archs[$i]}
    ri "$i" run "${common[@]}" --pause-on gas --gas "$SLICE" --snapshot "$tmp/pause-$a.wsnp" --uncompressed --json "$wasm" mix "$ROUNDS"
    ran "pause-$a" "$i" $? || continue
    equal "pause-status-$a" "$(jq -r .status <"$tmp/out")" suspended
done
for ((i = 1; i < n; i++)); do
    same "pause-image-${archs[$i]}" "$tmp/pause-${archs[$i]}.wsnp" "$tmp/pause-$ref.wsnp"
done

# ---- 4. slices on the architectures in turn -----------------------------------------------------
# chain NAME STEP: the first slice on architecture 0, then each next slice STEP further on
chain() {
    local name=$1 step=$2 k=1 i status
    cp "$tmp/pause-$ref.wsnp" "$tmp/s.wsnp"
    local path=$ref
    while :; do
        i=$(((k * step % n + n) % n))
        ri "$i" resume --gas "$SLICE" --snapshot "$tmp/next.wsnp" --uncompressed --timeout 3600000 --json "$tmp/s.wsnp"
        ran "$name-slice$k" "$i" $? || return
        mv "$tmp/next.wsnp" "$tmp/s.wsnp"
        path="$path>${archs[$i]}"
        status=$(jq -r .status <"$tmp/out")
        [ "$status" = suspended ] || break
        k=$((k + 1))
        if [ "$k" -gt 1000 ]; then fail "$name" "does not end"; return; fi
    done
    equal "$name-status" "$status" loaded
    equal "$name-value" "$(jq -r .value <"$tmp/out")" "${value[0]}"
    equal "$name-gas" "$(jq -r .gasUsed <"$tmp/out")" "${gas[0]}"
    same "$name-final-image" "$tmp/s.wsnp" "$tmp/full-$ref.wsnp"
    echo "test_determinism: $name: $k slices, $(echo "$path" | cut -c 1-120)..."
}
if [ "$n" -gt 1 ]; then
    chain forward 1
    chain backward -1
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
