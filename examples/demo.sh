#!/usr/bin/env bash
# The ri-sandbox demo (`make demo`): the sandbox library at work through the `ri` command.
#
#   bash examples/demo.sh [BUILD_DIR]        (default: build; needs BUILD_DIR/ri and wat2wasm)
#
# It compiles examples/counter.wat into BUILD_DIR/demo/, then loads it, executes, takes a
# snapshot, inspects it, restores it into a fresh process and shows that the state goes
# on, diffs two snapshots, shows determinism (same seed, same output, byte-identical snapshots,
# --check-determinism) and the limits that stop a runaway loop. Every claim it prints is
# also checked; the exit status is non-zero if one does not hold.
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
if [ ! -x "$build/ri" ]; then
    echo "demo: $build/ri not found; build first (make)" >&2
    exit 2
fi
build=$(cd "$build" && pwd)
ri=$build/ri
demo=$build/demo
mkdir -p "$demo"
wat2wasm "$root/examples/counter.wat" -o "$demo/counter.wasm" || { echo "demo: wat2wasm failed" >&2; exit 2; }
# Short relative paths in the commands shown.
cd "$demo" || exit 2
rm -f counter.wsnp rolls-*.wsnp two-rolls.wsnp broken.wsnp later.wsnp

bold="" plain=""
if [ -t 1 ]; then bold=$(tput bold 2>/dev/null || true) plain=$(tput sgr0 2>/dev/null || true); fi
checks=0 failures=0
TS=1700000000000

section() { printf '\n%s== %s%s\n' "$bold" "$*" "$plain"; }
note() { printf '   %s\n' "$@"; }

# Shows a command as one would type it: arguments with spaces or quotes get single quotes.
show() {
    local line="\$ ri" a
    for a in "$@"; do
        if [[ $a =~ ^[A-Za-z0-9_./=:,+-]+$ ]]; then line+=" $a"; else line+=" '$a'"; fi
    done
    printf '%s%s%s\n' "$bold" "$line" "$plain"
}

# ri WANT_STATUS ARGS...: shows and runs `ri ARGS`; its output is in $out.
ri() {
    local want=$1
    shift
    show "$@"
    out=$("$ri" "$@" 2>&1)
    local rc=$?
    printf '%s\n' "$out"
    check "exit status $rc" [ "$rc" -eq "$want" ]
}

# check WHAT COMMAND...: counts a claim of the demo; loud when it does not hold.
check() {
    local what=$1
    shift
    checks=$((checks + 1))
    if ! "$@"; then
        failures=$((failures + 1))
        printf '   !! demo check failed: %s\n' "$what"
    fi
}
has() { grep -Eq -- "$1" <<<"$out"; }
# The values of the executions in a JSON document from ri run, one per line.
values() { grep -E '^      "value":' | sed -E 's/^ *"value": //; s/,$//'; }

printf '%sri-sandbox demo%s: deterministic, metered WebAssembly sandboxes, through the ri command\n' "$bold" "$plain"
note "module: examples/counter.wat, compiled to $demo/counter.wasm"
note "(the full reference is docs/CLI.md; every ri command has --help)"

section "1. The module: decoded, validated and compiled by our engine"
ri 0 validate --text counter.wasm
note "It imports only what the sandbox provides: its memory, the event time and the PRNG."

section "2. Load and execute three times in one sandbox, then snapshot"
ri 0 run --text --timestamp $TS --repeat 3 --snapshot counter.wsnp counter.wasm increment
check "the third increment returns 3" has 'run 3 +ok +value 3 '
note "The counter lives in linear memory; --timestamp is the time __get_time returns"
note "(the sandbox never reads the clock: a run is a function of its inputs)."

section "3. What the snapshot holds (WSNP v2: module hash, memory, globals, tables, PRNG, gas)"
ri 0 inspect --text counter.wsnp
check "one page of memory, one page stored" has '1 page = 65536 bytes.*1 stored'
note "Zero pages are left out and the rest is compressed with zstd; --format v1 writes"
note "seed 000's format instead (the whole memory, byte for byte)."

section "4. A new process, a fresh sandbox: restored, the counter goes on"
ri 0 run --text --restore counter.wsnp counter.wasm increment
check "after restore the counter continues at 4" has 'run 1 +ok +value 4 '
note "Without --restore a fresh sandbox starts from zero:"
ri 0 run --text --timestamp $TS counter.wasm increment
check "a fresh sandbox counts 1" has 'run 1 +ok +value 1 '

section "5. The JSON convention: a JSON payload in, a JSON reply out (through __alloc)"
ri 0 run --text --restore counter.wsnp counter.wasm deposit '{"amount": 38}'
check "deposit adds 38 to the restored 3" has '"counter": ?41'
note "time is the injected timestamp, truncated to 32 bits as the original does;"
note "roll comes from the seeded PRNG and costs 1 gas, as does reading the time."

section "6. Determinism: the same seed gives the same dice, byte for byte"
ri 0 run --text --timestamp $TS --seed 42 --repeat 5 --snapshot rolls-a.wsnp counter.wasm roll
first=$out
ri 0 run --text --timestamp $TS --seed 42 --repeat 5 --snapshot rolls-b.wsnp counter.wasm roll
check "same seed, same rolls" [ "$(grep -E 'value' <<<"$first" | sed -E 's/ +[0-9.]+ ms$//')" = \
    "$(grep -E 'value' <<<"$out" | sed -E 's/ +[0-9.]+ ms$//')" ]
show_cmp() { printf '%s$ cmp rolls-a.wsnp rolls-b.wsnp%s\n' "$bold" "$plain"; cmp rolls-a.wsnp rolls-b.wsnp && echo "(identical)"; }
check "the two snapshots are byte-identical" show_cmp
note "Another seed, other dice:"
ri 0 run --text --timestamp $TS --seed 7 --repeat 5 counter.wasm roll

section "7. The PRNG state is in the snapshot: 2 rolls + snapshot + restore + 3 rolls = 5 rolls"
five=$("$ri" run --json --timestamp $TS --seed 42 --repeat 5 counter.wasm roll | values | tr '\n' ' ')
"$ri" run --json --timestamp $TS --seed 42 --repeat 2 --snapshot two-rolls.wsnp counter.wasm roll >/dev/null
show run --timestamp $TS --seed 42 --repeat 2 --snapshot two-rolls.wsnp counter.wasm roll
show run --restore two-rolls.wsnp --repeat 3 counter.wasm roll
three=$("$ri" run --json --restore two-rolls.wsnp --repeat 3 counter.wasm roll | values | tr '\n' ' ')
note "five rolls in one go:         $five"
note "after the restore, three:     $three"
check "the restored PRNG continues the sequence" [ -n "$three" ] && [ "$(cut -d' ' -f3-5 <<<"$five")" = "${three% }" ]

section "8. --check-determinism: run twice from the same state, compare result, gas, memory"
ri 0 run --text --restore counter.wsnp --check-determinism counter.wasm deposit '{"amount": 5}'
check "the determinism check passes" has 'determinism +deterministic'

section "9. Limits: a loop without host calls is stopped (exit status 1)"
ri 1 run --text --timestamp $TS --gas-schedule instructions --max-gas 1000000 --timeout 10000 counter.wasm spin
check "instruction metering stops it" has 'GAS_EXHAUSTED'
ri 1 run --text --timestamp $TS --timeout 50 counter.wasm spin
check "the wall-clock timeout stops it" has 'TIMEOUT'

section "10. A damaged snapshot is refused before anything changes (exit status 3)"
head -c 100 counter.wsnp >broken.wsnp
ri 3 inspect --text broken.wsnp
check "truncation is named" has 'Snapshot truncated'
ri 3 run --restore broken.wsnp counter.wasm increment

section "11. For programs: JSON with a fixed key order (the default when stdout is not a terminal)"
ri 0 run --json --restore counter.wsnp counter.wasm get
check "the JSON says ok" has '^  "ok": true,'

section "12. What changed between two snapshots"
"$ri" run --json --restore counter.wsnp --snapshot later.wsnp counter.wasm increment >/dev/null
ri 0 diff --text counter.wsnp later.wsnp
check "the counter's bytes are the change" has 'memory 0 .*1 byte differs'

echo
if [ "$failures" -eq 0 ]; then
    printf '%sdemo: all %d checks held%s (files in %s)\n' "$bold" "$checks" "$plain" "$demo"
else
    printf '%sdemo: %d of %d checks FAILED%s\n' "$bold" "$failures" "$checks" "$plain"
    exit 1
fi
