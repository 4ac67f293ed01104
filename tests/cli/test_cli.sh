#!/usr/bin/env bash
# Tests of the `ri` command: exit codes, JSON output, error messages for missing and
# corrupt files, the snapshot -> inspect -> restore round trip (WSNP v1 and v2), diff,
# --help everywhere.
#
#   bash tests/cli/test_cli.sh [PATH/TO/ri]        (default: build/ri)
#
# Needs wat2wasm. Prints each failure, then "N passed, N failed"; exits non-zero when
# anything failed.
set -u

. "$(dirname "$0")/lib.sh"
cli_init cli "$@"

# ---- fixtures ------------------------------------------------------------------------
wat() { # wat NAME TEXT: compiles a module into $tmp/NAME.wasm
    printf '%s\n' "$2" >"$tmp/$1.wat"
    wat2wasm "$tmp/$1.wat" -o "$tmp/$1.wasm" || { echo "test_cli: wat2wasm failed on $1" >&2; exit 1; }
}
wat2wasm "$root/examples/counter.wat" -o "$tmp/counter.wasm" || exit 1
counter=$tmp/counter.wasm
wat misc '(module
  (import "env" "memory" (memory 1))
  (import "env" "__get_random" (func $random (result i32)))
  (import "env" "__get_time" (func $time (result i32)))
  (func (export "rand") (result i32) (call $random))
  (func (export "time") (result i32) (call $time))
  (func (export "boom") (result i32) unreachable)
  (func (export "div0") (param i32) (result i32) (i32.div_s (i32.const 1) (local.get 0)))
  (func (export "big") (result i64) (i64.const 9007199254740993))
  (func $deep (export "deep") (result i32) (call $deep))
  (func (export "grow") (param i32) (result i32) (memory.grow (local.get 0))))'
wat wasi '(module (import "wasi_snapshot_preview1" "fd_write" (func (param i32 i32 i32 i32) (result i32))))'
wat hostfail '(module
  (import "env" "fail" (func $fail (param i32)))
  (import "env" "tick" (func $tick))
  (func (export "go") (call $tick) (call $fail (i32.const 7)))
  (func (export "ticks") (loop $l (call $tick) (br $l))))'
wat bigmem '(module (memory 2) (func (export "f")))'
printf 'not wasm' >"$tmp/garbage.wasm"
: >"$tmp/empty.wasm"
mkdir "$tmp/adir"
TS=--timestamp=1700000000000
# A generous timeout for the runs not about time: a loaded CI machine must not turn a
# 0.1 ms execution into a TIMEOUT. Options given later (--timeout 20) still win.
SLOW=--timeout=60000

# ---- help and version ------------------------------------------------------------------
t "ri --help" 0 "$ri" --help
out_has '^usage: ri COMMAND'
out_has 'exit status'
out_has '  3  input error'
t "ri --version" 0 "$ri" --version
out_has '^ri [0-9]+\.[0-9]+\.[0-9]+'
t "ri alone" 2 "$ri"
err_has 'usage: ri'
t "unknown command" 2 "$ri" frobnicate
err_has "unknown command 'frobnicate'"
for sub in run inspect validate diff; do
    t "ri $sub --help" 0 "$ri" "$sub" --help
    out_has "^usage: ri $sub"
    out_has 'exit status'
done
t "run --help names every config option" 0 "$ri" run --help
for opt in --max-memory --max-gas --timeout --seed --timestamp --gas-schedule --max-call-depth \
    --restore --snapshot --repeat --check-determinism --json --text --host --format --embed-module \
    --uncompressed; do
    out_has -- "$opt"
done

# ---- usage errors: exit 2, a message, nothing on stdout -----------------------------------
t "run without arguments" 2 "$ri" run "$TS"
err_has 'missing MODULE.wasm'
out_empty
t "run without FUNCTION" 2 "$ri" run "$SLOW" "$TS" "$counter"
err_has 'missing FUNCTION'
t "run without --timestamp: the event time is 0" 0 "$ri" run "$counter" increment
out_has '"eventTimestamp": 0,'
out_has '"eventTimestampSource": "default"'
t "newcomer defaults: instructions metered, no time limit, 1 GiB" 0 "$ri" run "$counter" increment
out_has '"gasSchedule": "instructions"'
out_has '"maxExecutionMs": null'
out_has '"maxMemoryBytes": 1073741824'
out_has '"maxGas": 1000000000000'
t "--timeout none" 0 "$ri" run --timeout none "$counter" increment
out_has '"maxExecutionMs": null'
t "bad --timeout" 2 "$ri" run --timeout soon "$counter" increment
err_has -- "--timeout: 'soon' is .*\(expected milliseconds, or none\)"
t "unknown option: the nearest is suggested" 2 "$ri" run --max-gaz 5 "$counter" increment
err_has -- "unknown option '--max-gaz' \(did you mean --max-gas\?\)"
t "unknown command: the nearest is suggested" 2 "$ri" rnu "$counter" increment
err_has -- "unknown command 'rnu' \(did you mean run\?\)"
t "a .wat module names wat2wasm" 3 "$ri" run "$root/examples/counter.wat" increment
err_has -- "it is WebAssembly text, not a binary module: compile it first, e.g. .wat2wasm"
t "gas exhausted names --max-gas" 1 "$ri" run --max-gas 3 "$counter" increment
err_has -- "--max-gas N raises the gas limit"
t "a memory above the limit names --max-memory" 3 "$ri" run --max-memory 64KiB "$tmp/bigmem.wasm" f
err_has -- "--max-memory BYTES raises the memory limit"
t "bad --max-gas" 2 "$ri" run "$SLOW" "$TS" --max-gas abc "$counter" increment
err_has -- "--max-gas: 'abc' is not a decimal number"
t "--seed out of range" 2 "$ri" run "$SLOW" "$TS" --seed 4294967296 "$counter" increment
err_has -- "--seed: '4294967296' is out of range"
t "--seed negative" 2 "$ri" run "$SLOW" "$TS" --seed=-1 "$counter" increment
err_has -- '--seed'
t "--timeout with a sign" 2 "$ri" run "$SLOW" "$TS" --timeout +5 "$counter" increment
t "bad --timestamp" 2 "$ri" run "$SLOW" --timestamp 12x "$counter" increment
err_has -- "--timestamp: '12x'"
t "bad --max-memory unit" 2 "$ri" run "$SLOW" "$TS" --max-memory 16XB "$counter" increment
err_has -- '--max-memory'
t "--max-memory overflow" 2 "$ri" run "$SLOW" "$TS" --max-memory 99999999999999999999GiB "$counter" increment
err_has 'out of range'
t "--repeat 0" 2 "$ri" run "$SLOW" "$TS" --repeat 0 "$counter" increment
err_has 'at least 1'
t "option without value" 2 "$ri" run "$SLOW" "$counter" increment "$TS" --max-gas
err_has 'needs a value'
t "flag with a value" 2 "$ri" run "$SLOW" "$TS" --json=yes "$counter" increment
err_has 'takes no value'
t "unknown option" 2 "$ri" run "$SLOW" "$TS" --fast "$counter" increment
err_has "unknown option '--fast'"
t "bad --gas-schedule" 2 "$ri" run "$SLOW" "$TS" --gas-schedule fast "$counter" increment
err_has 'not host-calls or instructions'
t "unknown --host" 2 "$ri" run "$SLOW" "$TS" --host printf "$counter" increment
err_has "'printf' is not a built-in host function"
t "--json with --text" 2 "$ri" run "$SLOW" "$TS" --json --text "$counter" increment
err_has 'exclude each other'
t "PAYLOAD not JSON" 2 "$ri" run "$SLOW" "$TS" "$counter" add '{"a":'
err_has 'PAYLOAD cannot be parsed as JSON'
t "PAYLOAD a bare word" 2 "$ri" run "$SLOW" "$TS" "$counter" add hello
err_has 'PAYLOAD cannot be parsed as JSON'
deep="$(printf '%.0s[' $(seq 1 5000))$(printf '%.0s]' $(seq 1 5000))"
t "PAYLOAD nested too deep" 2 "$ri" run "$SLOW" "$TS" "$counter" add "$deep"
err_has 'PAYLOAD cannot be parsed as JSON: .*depth'
t "too many arguments" 2 "$ri" run "$SLOW" "$TS" "$counter" add 1 2
err_has 'unexpected argument'
t "inspect without FILE" 2 "$ri" inspect
err_has 'missing FILE'
t "validate with two modules" 2 "$ri" validate "$counter" "$counter"

# ---- input errors: exit 3 ----------------------------------------------------------------
t "missing module" 3 "$ri" run "$SLOW" "$TS" "$tmp/nope.wasm" increment
err_has "cannot read module '.*nope.wasm': No such file or directory"
out_empty
t "module is a directory" 3 "$ri" run "$SLOW" "$TS" "$tmp/adir" increment
err_has 'Is a directory'
t "empty module" 3 "$ri" run "$SLOW" "$TS" "$tmp/empty.wasm" increment
err_has 'Empty WASM bytes'
t "garbage module" 3 "$ri" run "$SLOW" "$TS" "$tmp/garbage.wasm" increment
err_has 'Failed to load WASM module'
t "WASI import" 3 "$ri" run "$SLOW" "$TS" "$tmp/wasi.wasm" main
err_has "blocked namespace 'wasi_snapshot_preview1'"
t "undeclared host function" 3 "$ri" run "$SLOW" "$TS" "$tmp/hostfail.wasm" go
err_has "undeclared function 'env.fail'"
t "missing --restore file" 3 "$ri" run "$SLOW" "$TS" --restore "$tmp/nope.wsnp" "$counter" increment
err_has "cannot read snapshot '.*nope.wsnp'"
t "hostile file name is escaped" 3 "$ri" run "$SLOW" "$TS" "$tmp/$(printf 'a\033[31mb')" increment
err_has 'a\\x1B\[31mb'

# ---- running ------------------------------------------------------------------------------
t "increment" 0 "$ri" run "$TS" --gas-schedule host-calls --timeout 50 "$counter" increment
out_has '^  "ok": true,'
out_has '^  "value": 1,'
out_has '"sandbox": "sandbox-[0-9]+"'
out_has '"memoryUsedBytes": 65536'
out_has '"gasLimit": 1000000'
out_has '"executionLimitMs": 50'
out_has '"eventTimestamp": 1700000000000'
out_has '"gasSchedule": "host-calls"'
out_has '"status": "loaded"'
out_has '"snapshot": null'
keys_are "ok sandbox module function payload config restoredFrom determinism executions value error metrics status snapshot"
t "--repeat keeps state" 0 "$ri" run "$SLOW" "$TS" --repeat 3 "$counter" increment
out_has '^  "value": 3,'
n=$(grep -c '"durationMs"' "$tmp/out")
if [ "$n" -eq 3 ]; then pass; else fail "$n executions listed, expected 3"; fi
t "direct convention argument" 0 "$ri" run "$SLOW" "$TS" "$counter" add 5
out_has '^  "value": 5,'
out_has '^  "payload": 5,'
t "negative argument is not an option" 0 "$ri" run "$SLOW" "$TS" "$counter" add -2
out_has '^  "value": -2,'
t "arguments as an array" 0 "$ri" run "$SLOW" "$TS" "$counter" add '[40]'
out_has '^  "value": 40,'
t "options after positionals" 0 "$ri" run "$SLOW" "$counter" add 7 "$TS" --max-gas=10
out_has '"gasLimit": 10'
t "-- ends the options" 0 "$ri" run "$SLOW" "$TS" -- "$counter" add 3
out_has '^  "value": 3,'
t "__get_random seed 0" 0 "$ri" run "$SLOW" "$TS" "$tmp/misc.wasm" rand
out_has '^  "value": 1144304738,'
t "__get_random seed 42" 0 "$ri" run "$SLOW" "$TS" --seed 42 "$tmp/misc.wasm" rand
out_has '^  "value": -1713246340,'
t "__get_time truncated to i32" 0 "$ri" run "$SLOW" "$TS" "$tmp/misc.wasm" time
out_has '^  "value": -807049216,'
t "i64 result exact" 0 "$ri" run "$SLOW" "$TS" "$tmp/misc.wasm" big
out_has '9007199254740993'
t "JSON convention" 0 "$ri" run "$SLOW" "$TS" "$counter" deposit '{"amount": 38}'
out_has '"counter": ?38'
out_has '"added": ?38'
out_has '"time": ?-807049216'
t "--check-determinism" 0 "$ri" run "$SLOW" "$TS" --check-determinism "$counter" deposit '{"amount": 2}'
out_has '"deterministic": true'
t "same seed, same rolls" 0 "$ri" run "$SLOW" "$TS" --seed 7 --repeat 5 "$counter" roll
grep '"value"' "$tmp/out" >"$tmp/rolls1"
t "same seed, same rolls (again)" 0 "$ri" run "$SLOW" "$TS" --seed 7 --repeat 5 "$counter" roll
grep '"value"' "$tmp/out" >"$tmp/rolls2"
if cmp -s "$tmp/rolls1" "$tmp/rolls2"; then pass; else name="same seed"; fail "rolls differ between runs"; fi
t "text output" 0 "$ri" run "$SLOW" "$TS" --text --repeat 2 "$counter" increment
out_has 'run 2 +ok +value 2'
out_has 'metrics'
out_lacks '^\{'
t "--timestamp now" 0 "$ri" run "$SLOW" --timestamp now "$counter" increment
out_has '"eventTimestampSource": "now"'

# ---- execution failures: exit 1, the document on stdout, a line on stderr ---------------------
t "host-call gas exhausted" 1 "$ri" run "$SLOW" "$TS" --gas-schedule host-calls --host tick,fail --max-gas 100 --timeout 60000 "$tmp/hostfail.wasm" ticks
out_has '"code": "GAS_EXHAUSTED"'
out_has '"gasUsed": 101'
out_has '"gasLimit": 100'
out_has '^  "ok": false,'
err_has 'execution 1 failed: GAS_EXHAUSTED'
t "trap" 1 "$ri" run "$SLOW" "$TS" "$tmp/misc.wasm" boom
out_has '"code": "WASM_TRAP"'
out_has '"trapKind": "unreachable"'
keys_are "ok sandbox module function payload config restoredFrom determinism executions value error metrics status snapshot"
t "divide by zero" 1 "$ri" run "$SLOW" "$TS" "$tmp/misc.wasm" div0 0
out_has '"trapKind": "integer_divide_by_zero"'
t "missing export" 1 "$ri" run "$SLOW" "$TS" "$counter" nope
out_has '"trapKind": "missing_export"'
err_has 'exported functions: .*increment'
t "host function error" 1 "$ri" run "$SLOW" "$TS" --host tick,fail "$tmp/hostfail.wasm" go
out_has '"code": "HOST_FUNCTION_ERROR"'
out_has '"functionName": "fail"'
out_has '"message": "fail\(7\) called"'
t "--host given twice" 1 "$ri" run "$SLOW" "$TS" --host tick --host fail,tick "$tmp/hostfail.wasm" go
out_has '"hostFunctions": \["tick", "fail"\]'
t "instruction gas stops a loop" 1 "$ri" run "$SLOW" "$TS" --gas-schedule instructions --max-gas 100000 --timeout 60000 "$counter" spin
out_has '"code": "GAS_EXHAUSTED"'
t "timeout stops a loop" 1 "$ri" run "$SLOW" "$TS" --timeout 20 "$counter" spin
out_has '"code": "TIMEOUT"'
out_has '"limitMs": 20'
t "memory exceeded" 1 "$ri" run "$SLOW" "$TS" --max-memory 100000 "$tmp/misc.wasm" grow 1
out_has '"code": "MEMORY_EXCEEDED"'
out_has '"memoryLimit": 100000'
t "call depth" 1 "$ri" run "$SLOW" "$TS" --max-call-depth 100 "$tmp/misc.wasm" deep
out_has '"trapKind": "call_stack_exhausted"'
t "failure in text mode" 1 "$ri" run "$SLOW" "$TS" --text "$tmp/misc.wasm" boom
out_has 'FAILED +WASM_TRAP \(unreachable\)'
t "--repeat stops at the first failure" 1 "$ri" run "$SLOW" "$TS" --repeat 5 "$tmp/misc.wasm" boom
n=$(grep -c '"trapKind"' "$tmp/out")
if [ "$n" -eq 2 ]; then pass; else fail "expected the failure once in executions and once as error, got $n"; fi

# ---- snapshots (WSNP v1): out, inspect, restore ------------------------------------------------
snap=$tmp/state.wsnp
t "snapshot out" 0 "$ri" run "$SLOW" "$TS" --gas-schedule host-calls --seed 42 --repeat 3 --format v1 --snapshot "$snap" "$counter" increment
out_has '"format": 1,'
out_has '"written": true'
[ -f "$snap" ] && pass || fail "no snapshot file"
size=$(stat -c %s "$snap")
out_has "\"bytes\": $size"
ls -a "$tmp" | grep -q '^\.state\.wsnp\.' && fail "a temporary file was left behind" || pass
t "inspect --json" 0 "$ri" inspect --json "$snap"
out_has '"format": "WSNP"'
out_has '"version": 1'
out_has "\"totalBytes\": $size"
out_has '"bytes": 65536'
out_has '"pages": 1'
out_has '"nonZeroPages": 1'
out_has '"timestamp": 1700000000000'
out_has '"prngStateCurrent": 42'
out_has '"gasUsed": 0'
out_has '"warnings": \[\]'
t "inspect --text" 0 "$ri" inspect --text "$snap"
out_has 'WSNP snapshot, format version 1'
out_has '1 page of 64 KiB, 1 non-zero'
state_len=$((size - 65536 - 13))
out_has "state +$state_len bytes of JSON: \{\"prngState\":\{\"current\":42\},\"timestamp\":1700000000000,\"gasUsed\":0\}"
t "restore continues the state" 0 "$ri" run "$SLOW" --restore "$snap" "$counter" increment
out_has '^  "value": 4,'
out_has '"eventTimestampSource": "snapshot"'
out_has '"eventTimestamp": 1700000000000'
out_has "\"restoredFrom\": \".*state.wsnp\""
t "restore with an explicit timestamp" 0 "$ri" run "$SLOW" --timestamp 5 --restore "$snap" "$counter" increment
out_has '"eventTimestamp": 5'
t "restore continues the PRNG" 0 "$ri" run "$SLOW" --restore "$snap" "$tmp/misc.wasm" rand
out_has '^  "value": -1713246340,'  # seed 42's first output: the snapshot was taken before any roll
# Round trip: 2 rolls + snapshot + restore + 1 roll == 3 rolls.
t "three rolls" 0 "$ri" run "$SLOW" "$TS" --seed 9 --repeat 3 "$tmp/misc.wasm" rand
third=$(grep -E '^  "value":' "$tmp/out")
t "two rolls, snapshot" 0 "$ri" run "$SLOW" "$TS" --seed 9 --repeat 2 --snapshot "$tmp/two.wsnp" "$tmp/misc.wasm" rand
t "restore, one roll" 0 "$ri" run "$SLOW" --restore "$tmp/two.wsnp" "$tmp/misc.wasm" rand
out_has "^$third\$"
t "snapshots are byte-identical across runs" 0 "$ri" run "$SLOW" "$TS" --gas-schedule host-calls --seed 42 --repeat 3 --format=v1 --snapshot "$tmp/again.wsnp" "$counter" increment
cmp -s "$snap" "$tmp/again.wsnp" && pass || fail "snapshots differ"
t "snapshot not written after a failure" 1 "$ri" run "$SLOW" "$TS" --snapshot "$tmp/fail.wsnp" "$tmp/misc.wasm" boom
out_has '"written": false'
[ -e "$tmp/fail.wsnp" ] && fail "snapshot written after a failure" || pass
t "snapshot into a missing directory" 3 "$ri" run "$SLOW" "$TS" --snapshot "$tmp/no/such/dir/s.wsnp" "$counter" increment
err_has 'cannot write'
out_has '"written": false'
t "snapshot over a directory" 3 "$ri" run "$SLOW" "$TS" --snapshot "$tmp/adir" "$counter" increment
err_has 'Is a directory'
ls -a "$tmp" | grep -q '^\.adir\.' && fail "a temporary file was left behind" || pass
t "restore with --check-determinism" 0 "$ri" run "$SLOW" --restore "$snap" --check-determinism "$counter" increment
out_has '"deterministic": true'
out_has '^  "value": 4,'

# ---- corrupt and truncated snapshots: seed 000's messages, in its order --------------------
corrupt() { # corrupt NAME MESSAGE: inspect and restore both report MESSAGE, exit 3
    t "inspect $1" 3 "$ri" inspect "$tmp/$1.wsnp"
    err_has "$2"
    t "inspect --json $1" 3 "$ri" inspect --json "$tmp/$1.wsnp"
    out_has '"valid": false'
    out_has "\"reason\": \"$2"
    t "restore $1" 3 "$ri" run "$TS" --restore "$tmp/$1.wsnp" "$counter" increment
    err_has "$2"
}
: >"$tmp/empty.wsnp"
corrupt empty 'Snapshot too small — missing header'
printf 'WSN' >"$tmp/short.wsnp"
corrupt short 'Snapshot too small — missing header'
printf 'WASM\001\000\000\000\000' >"$tmp/magic.wsnp"
corrupt magic 'Invalid snapshot — bad magic bytes'
printf 'WSNP\003' >"$tmp/version.wsnp"
corrupt version 'Unsupported snapshot version: 3 \(expected 1 or 2\)'
printf 'WSNP\001\000\000' >"$tmp/nomemlen.wsnp"
corrupt nomemlen 'Snapshot truncated — missing memory length'
head -c 1000 "$snap" >"$tmp/memcut.wsnp"
corrupt memcut 'Snapshot truncated — memory section incomplete'
head -c $((9 + 65536 + 2)) "$snap" >"$tmp/nostatelen.wsnp"
corrupt nostatelen 'Snapshot truncated — missing state length'
head -c $((size - 3)) "$snap" >"$tmp/statecut.wsnp"
corrupt statecut 'Snapshot truncated — state section incomplete'
{ head -c $((9 + 65536)) "$snap"; printf '\005\000\000\000{bad}'; } >"$tmp/badjson.wsnp"
corrupt badjson 'Invalid snapshot — corrupted state JSON'
t "inspect a missing file" 3 "$ri" inspect "$tmp/nope.wsnp"
err_has "cannot read snapshot '.*nope.wsnp': No such file or directory"
# A snapshot of another memory size: well-formed, but it does not fit this module.
{ printf 'WSNP\001\000\000\002\000'; head -c 131072 /dev/zero; s='{"prngState":{"current":0},"timestamp":1,"gasUsed":0}'
  printf "\\$(printf %03o ${#s})\\000\\000\\000%s" "$s"; } >"$tmp/twopages.wsnp"
t "inspect a 2-page snapshot" 0 "$ri" inspect --json "$tmp/twopages.wsnp"
out_has '"pages": 2'
out_has '"nonZeroPages": 0'
# (A 1-page memory cannot take it under any restore policy when its limit is 1 page.)
t "restore a 2-page snapshot into a 1-page limit" 3 "$ri" run "$SLOW" --max-memory 64KiB --restore "$tmp/twopages.wsnp" "$counter" increment
err_has 'Snapshot memory size \(131072\) does not match instance memory \(65536\)'
# Extra state keys are accepted (forward compatibility): inspect and restore alike.
{ head -c $((9 + 65536)) "$snap"; s='{"prngState":{"current":1},"timestamp":1,"gasUsed":0,"x":1}'
  printf "\\$(printf %03o ${#s})\\000\\000\\000%s" "$s"; } >"$tmp/extrakey.wsnp"
t "inspect extrakey" 0 "$ri" inspect --json "$tmp/extrakey.wsnp"
out_has '"valid": true'
out_has '"json": \{"prngState":\{"current":1\},"timestamp":1,"gasUsed":0,"x":1\}'
t "restore extrakey" 0 "$ri" run "$SLOW" --restore "$tmp/extrakey.wsnp" "$counter" increment
out_has '^  "value": 4,'
# A missing field is refused by both, and stderr says which.
{ head -c $((9 + 65536)) "$snap"; s='{"prngState":{"current":1},"timestamp":1}'
  printf "\\$(printf %03o ${#s})\\000\\000\\000%s" "$s"; } >"$tmp/nogas.wsnp"
corrupt nogas 'Invalid snapshot — corrupted state JSON'
t "inspect says why the state JSON is corrupted" 3 "$ri" inspect "$tmp/nogas.wsnp"
err_has 'corrupted state JSON \(gasUsed is missing\)'
t "inspect --json gives the detail" 3 "$ri" inspect --json "$tmp/nogas.wsnp"
out_has '"detail": "gasUsed is missing"'
t "restore says why the state JSON is corrupted" 3 "$ri" run "$SLOW" --restore "$tmp/nogas.wsnp" "$counter" increment
err_has 'corrupted state JSON \(gasUsed is missing\)'
{ cat "$snap"; printf 'extra'; } >"$tmp/trailing.wsnp"
t "inspect trailing bytes" 0 "$ri" inspect --json "$tmp/trailing.wsnp"
out_has '"trailingBytes": 5'
out_has 'after the state section'

# ---- snapshots (WSNP v2, the default): out, inspect, restore, diff ----------------------------
wat glob '(module
  (import "env" "memory" (memory 1))
  (global $g (mut i32) (i32.const 0))
  (func (export "inc") (result i32)
    (global.set $g (i32.add (global.get $g) (i32.const 1)))
    (i32.store (i32.const 64) (global.get $g))
    (global.get $g))
  (func (export "grow") (result i32) (memory.grow (i32.const 2))))'
v2=$tmp/v2.wsnp
t "v2 snapshot out" 0 "$ri" run "$SLOW" "$TS" --seed 42 --repeat 3 --snapshot "$v2" "$counter" increment
out_has '"format": 2,'
out_has '"moduleEmbedded": false,'
v2size=$(stat -c %s "$v2")
[ "$v2size" -lt 1000 ] && pass || fail "a one-page v2 snapshot of $v2size bytes: the zero pages should be gone"
head -c 5 "$v2" | od -An -tx1 | grep -q '57 53 4e 50 02' && pass || fail "not a WSNP v2 header"
t "inspect v2 --json" 0 "$ri" inspect --json "$v2"
out_has '"version": 2,'
out_has "\"totalBytes\": $v2size,"
out_has '"sha256": "[0-9a-f]{64}"'
out_has '"embedded": false'
out_has '"storedPages": 1,'
out_has '"encoding": "zstd"'
out_has '"ratio": [0-9]+\.[0-9]'
out_has '"tag": "MEMS"'
out_has '"prngState": 42,'
out_has '"timestamp": 1700000000000'
keys_are "file valid format version totalBytes module state counts sections memories tables globals segments checksum warnings"
t "inspect v2 --text" 0 "$ri" inspect --text "$v2"
out_has 'WSNP snapshot, format version 2'
out_has 'module +sha256:[0-9a-f]{64}, [0-9]+ bytes, not embedded'
out_has 'memory 0 +1 page = 65536 bytes.*1 stored, zstd 65536 -> [0-9]+ bytes'
out_has 'sections +META 88, MEMS'
t "restore v2 continues the state" 0 "$ri" run "$SLOW" --restore "$v2" "$counter" increment
out_has '^  "value": 4,'
out_has '"eventTimestampSource": "snapshot"'
t "v2 snapshots are byte-identical across runs" 0 "$ri" run "$SLOW" "$TS" --seed 42 --repeat 3 --snapshot "$tmp/v2again.wsnp" "$counter" increment
cmp -s "$v2" "$tmp/v2again.wsnp" && pass || fail "v2 snapshots differ"
t "--format v1 with --embed-module" 2 "$ri" run "$SLOW" "$TS" --format v1 --embed-module --snapshot "$tmp/x.wsnp" "$counter" increment
err_has 'need --format v2'
t "--format v3" 2 "$ri" run "$SLOW" "$TS" --format v3 --snapshot "$tmp/x.wsnp" "$counter" increment
err_has "'v3' is not v1 or v2"
t "--format without --snapshot" 2 "$ri" run "$SLOW" "$TS" --format v2 "$counter" increment
err_has 'give one'
# Mutable globals: v1 refuses them, v2 keeps them.
t "v1 refuses a changed global" 1 "$ri" run "$SLOW" "$TS" --repeat 3 --format v1 --snapshot "$tmp/g1.wsnp" "$tmp/glob.wasm" inc
err_has 'global 0 has changed since the module was loaded'
t "v2 keeps a changed global" 0 "$ri" run "$SLOW" "$TS" --repeat 3 --snapshot "$tmp/g3.wsnp" "$tmp/glob.wasm" inc
t "restore v2 brings the global back" 0 "$ri" run "$SLOW" --restore "$tmp/g3.wsnp" "$tmp/glob.wasm" inc
out_has '^  "value": 4,'
# Module identity: another module is refused, an embedded one is taken.
t "restore v2 into another module" 3 "$ri" run "$SLOW" --restore "$v2" "$tmp/misc.wasm" rand
err_has 'Snapshot module mismatch — the image was taken with module sha256:[0-9a-f]{64}, this sandbox runs sha256:'
t "v2 with the module embedded" 0 "$ri" run "$SLOW" "$TS" --seed 42 --repeat 3 --embed-module --snapshot "$tmp/emb.wsnp" "$counter" increment
out_has '"moduleEmbedded": true,'
t "inspect an embedded module" 0 "$ri" inspect --text "$tmp/emb.wsnp"
out_has 'bytes, embedded'
out_has 'MODL [0-9]+'
t "restore the embedded module over another" 0 "$ri" run "$SLOW" --restore "$tmp/emb.wsnp" "$tmp/misc.wasm" increment
out_has '^  "value": 4,'
t "--uncompressed" 0 "$ri" run "$SLOW" "$TS" --uncompressed --snapshot "$tmp/raw.wsnp" "$counter" increment
t "inspect --uncompressed" 0 "$ri" inspect --json "$tmp/raw.wsnp"
out_has '"encoding": "raw"'
# Corrupt and truncated v2 images: refused by inspect and restore with a clear reason.
cp "$v2" "$tmp/v2flip.wsnp"
printf '\377' | dd of="$tmp/v2flip.wsnp" bs=1 seek=30 conv=notrunc status=none
corrupt v2flip 'Invalid snapshot — checksum mismatch: the image is corrupted'
head -c $((v2size - 1)) "$v2" >"$tmp/v2cut.wsnp"
corrupt v2cut 'Snapshot truncated — the checksum section is missing at the end'
head -c 7 "$v2" >"$tmp/v2short.wsnp"
corrupt v2short 'Snapshot too small — missing header'
# diff
t "diff --help" 0 "$ri" diff --help
out_has '^usage: ri diff'
t "diff of one file with itself" 0 "$ri" diff --text --exit-code "$v2" "$tmp/v2again.wsnp"
out_has 'identical'
t "two more steps" 0 "$ri" run "$SLOW" --restore "$tmp/g3.wsnp" --repeat 2 --snapshot "$tmp/g5.wsnp" "$tmp/glob.wasm" inc
t "diff --text" 0 "$ri" diff --text "$tmp/g3.wsnp" "$tmp/g5.wsnp"
out_has 'they differ'
out_has 'global 0 +i32 3 -> i32 5'
out_has 'memory 0 +1 page; 1 byte differs in 1 range on 1 page'
out_has '0x00000040  1 byte'
t "diff --exit-code" 1 "$ri" diff --text --exit-code "$tmp/g3.wsnp" "$tmp/g5.wsnp"
t "diff --json" 0 "$ri" diff --json "$tmp/g3.wsnp" "$tmp/g5.wsnp"
out_has '"identical": false'
out_has '"offset": 64'
keys_are "identical old new changed memories globals tables segments files"
t "diff a grown memory" 0 "$ri" run "$SLOW" --restore "$tmp/g3.wsnp" --snapshot "$tmp/g3grown.wsnp" "$tmp/glob.wasm" grow
t "diff --text grown" 0 "$ri" diff --text "$tmp/g3.wsnp" "$tmp/g3grown.wsnp"
out_has 'memory 0 +1 -> 3 pages; 0 bytes differ'
t "diff v1 and v2" 0 "$ri" diff --text "$snap" "$v2"
out_has 'format +v1 -> v2'
out_has 'not compared'
t "diff a corrupt file" 3 "$ri" diff "$v2" "$tmp/v2flip.wsnp"
err_has 'v2flip.wsnp: Invalid snapshot — checksum mismatch'
t "diff without files" 2 "$ri" diff "$v2"
err_has 'missing NEW'
t "diff a missing file" 3 "$ri" diff "$v2" "$tmp/nope.wsnp"
err_has "cannot read snapshot '.*nope.wsnp'"

# ---- progress of long operations: on a terminal only, or when asked ------------------------
t "no progress into a pipe" 0 "$ri" run "$SLOW" "$TS" "$counter" increment --snapshot "$tmp/progress.wsnp"
if grep -q '^ri: taking the snapshot' "$tmp/err"; then fail "a progress line went into a pipe"; else pass; fi
t "RI_PROGRESS=always" 0 env RI_PROGRESS=always "$ri" run "$SLOW" "$TS" "$counter" increment --snapshot "$tmp/progress.wsnp"
err_has '^ri: taking the snapshot\.\.\.  [0-9.]+ s$'
err_has '^ri: taking the snapshot done  [0-9.]+ s$'
wat fill '(module (memory 1)
  (func (export "fill") (param $pages i32) (local $i i32) (local $n i32)
    (drop (memory.grow (local.get $pages)))
    (local.set $n (i32.mul (i32.add (local.get $pages) (i32.const 1)) (i32.const 65536)))
    (loop $l (i32.store (local.get $i) (i32.mul (local.get $i) (i32.const 2654435761)))
      (local.set $i (i32.add (local.get $i) (i32.const 4)))
      (br_if $l (i32.lt_u (local.get $i) (local.get $n))))))'
t "progress of a large file, in bytes" 0 env RI_PROGRESS=always "$ri" run "$SLOW" "$TS" "$tmp/fill.wasm" fill 320 --snapshot "$tmp/fill.wsnp"
err_has '^ri: writing fill\.wsnp +0%  0 MiB of [0-9]+ MiB  [0-9.]+ s$'
err_has '^ri: writing fill\.wsnp done'
t "RI_PROGRESS=never" 0 env RI_PROGRESS=never "$ri" run "$SLOW" "$TS" "$counter" increment --snapshot "$tmp/progress.wsnp"
if grep -q '^ri: taking' "$tmp/err"; then fail "RI_PROGRESS=never drew"; else pass; fi

# ---- validate --------------------------------------------------------------------------------
t "validate --text" 0 "$ri" validate --text "$counter"
out_has 'valid WebAssembly module'
out_has 'env.__get_random +func \(\) -> \(i32\)'
out_has 'env.memory +memory 1 page, no maximum'
out_has 'deposit +func \(i32, i32\) -> \(i32\)'
t "validate --json" 0 "$ri" validate --json "$counter"
out_has '"valid": true'
out_has '"name": "__alloc"'
out_has '"params": \["i32", "i32"\]'
keys_are "file bytes valid imports exports"
t "validate garbage" 3 "$ri" validate "$tmp/garbage.wasm"
err_has 'Failed to load WASM module: Invalid WASM magic bytes'
t "validate garbage --json" 3 "$ri" validate --json "$tmp/garbage.wasm"
out_has '"valid": false'
out_has '"message": "Failed to load WASM module: Invalid WASM magic bytes'
# one wording for a bad module: validate and run say exactly what a load says
printf '\0asm\1\0\0\0\1\5' >"$tmp/badbody.wasm"
t "validate a malformed body" 3 "$ri" validate "$tmp/badbody.wasm"
sed -E 's/^ri validate: //' "$tmp/err" >"$tmp/validate_said"
err_has 'Failed to load WASM module: WASM compilation failed: '
t "run a malformed body" 3 "$ri" run "$SLOW" "$TS" "$tmp/badbody.wasm" increment
if grep -qF -- "$(cat "$tmp/validate_said")" "$tmp/err"; then pass; else fail "run and validate word a bad module differently"; fi
t "inspect a module" 3 "$ri" inspect "$counter"
err_has 'a WebAssembly module, not a snapshot image'
t "validate a missing file" 3 "$ri" validate "$tmp/nope.wasm"
err_has 'No such file or directory'

# ---- ri snapshot / ri restore ---------------------------------------------------------------
t "snapshot needs -o" 2 "$ri" snapshot "$counter" increment "$TS"
err_has '-o FILE is required'
t "snapshot writes v2 with the module" 0 "$ri" snapshot "$counter" increment "$TS" -o "$tmp/s1.wsnp" --text
out_has 'WSNP v2 with the module'
t "restore continues from the image alone" 0 "$ri" restore "$tmp/s1.wsnp" increment -o "$tmp/s2.wsnp" --json
out_has '"value": 2'
t "restore of the restored image's snapshot" 0 "$ri" restore "$tmp/s2.wsnp" get --json
out_has '"value": 2'
t "restore takes the image's timestamp" 0 "$ri" restore "$tmp/s1.wsnp" now --text
out_has 'timestamp [0-9]+ \(snapshot\)'
t "restore with --module" 0 "$ri" restore "$tmp/s1.wsnp" --module "$counter" get --json
out_has '"value": 1'
t "snapshot --format v1" 0 "$ri" snapshot "$counter" increment "$TS" -o "$tmp/s1v1.wsnp" --format v1 --text
out_has 'WSNP v1'
t "restore of a v1 image needs the module" 2 "$ri" restore "$tmp/s1v1.wsnp" get
err_has 'WSNP v1 image, which holds memory only'
t "restore of a v1 image with --module" 0 "$ri" restore "$tmp/s1v1.wsnp" --module "$counter" get --json
out_has '"value": 1'
t "restore: IMAGE comes first" 2 "$ri" restore --seed 3 "$tmp/s1.wsnp" get
err_has 'missing IMAGE'
t "restore of a corrupt image" 3 "$ri" restore "$tmp/garbage.wasm" get
t "ri run --image-module without --restore" 2 "$ri" run --image-module get
err_has '--image-module needs --restore'
# After "--" a name that looks like an option stays positional, through the rewrite to ri run.
cp "$counter" "$tmp/-dash.wasm"
ri_abs=$(cd "$(dirname "$ri")" && pwd)/$(basename "$ri")
t "snapshot: a module named after --" 0 env -C "$tmp" "$ri_abs" snapshot "$TS" -o s3.wsnp --text -- -dash.wasm increment
out_has 'WSNP v2 with the module'
t "restore: a function after --" 0 "$ri" restore "$tmp/s3.wsnp" -o "$tmp/s4.wsnp" --json -- get
out_has '"value": 1'
t "snapshot: without --, the name is an option" 2 env -C "$tmp" "$ri_abs" snapshot "$TS" -o s5.wsnp -dash.wasm increment
t "snapshot --help" 0 "$ri" snapshot --help
out_has 'usage: ri snapshot'
t "restore --help" 0 "$ri" restore --help
out_has 'usage: ri restore'

# ---- output errors ----------------------------------------------------------------------------
if [ -w /dev/full ]; then
    "$ri" run "$TS" "$counter" increment --json >/dev/full 2>"$tmp/err"
    rc=$?
    name="stdout to /dev/full"
    [ "$rc" -eq 3 ] && pass || fail "exit status $rc, expected 3"
    err_has 'error writing standard output'
fi

# ---- ri serve: why it cannot listen -------------------------------------------------------
if "$ri" serve --help >/dev/null 2>&1; then
    "$ri" serve --port 0 >"$tmp/serve.out" 2>/dev/null &
    serve_pid=$!
    for _ in $(seq 1 100); do grep -q '^listening on' "$tmp/serve.out" && break; sleep 0.1; done
    port=$(sed -n 's/^listening on .*:\([0-9]*\)$/\1/p' "$tmp/serve.out")
    t "serve on a port in use" 2 "$ri" serve --port "$port"
    err_has "cannot listen on 127.0.0.1:$port: Address already in use"
    kill "$serve_pid" 2>/dev/null
    wait "$serve_pid" 2>/dev/null
    t "serve on a host that does not resolve" 2 "$ri" serve --host no.such.host.invalid --port 0
    err_has "cannot listen on no.such.host.invalid:0: the host 'no.such.host.invalid' does not resolve"
    # The server is a module loaded by `ri serve` alone: a binary without it says where it looked.
    mkdir -p "$tmp/lonely" && cp "$ri" "$tmp/lonely/ri"
    t "serve without its module" 4 "$tmp/lonely/ri" serve --help
    err_has "the server module ri-serve\\.so is not installed \\(looked in $tmp/lonely/"
    printf 'not an ELF file\n' >"$tmp/lonely/ri-serve.so"
    t "serve with a broken module" 4 "$tmp/lonely/ri" serve --help
    err_has "cannot load the server module:"
    t "run without the server module" 0 "$tmp/lonely/ri" --version
fi

cli_done
