#!/usr/bin/env bash
# The ri-sandbox server demo: `ri serve` speaking the WebSocket protocol of the original
# sandbox server (docs/SERVER.md), driven by the small client examples/client.py.
#
#   bash examples/server_demo.sh [BUILD_DIR]     (default: build; needs BUILD_DIR/ri, wat2wasm,
#                                                 /usr/bin/python3 with python3-websockets)
#
# It starts a server with its checkpoint volume in BUILD_DIR/demo-volume, creates a sandbox
# with a counter module, runs a program that reads stdin and writes stdout, counts, checkpoints
# the sandbox to the volume, stops the server, attaches to the same sandbox on a SECOND server
# process, and counts on from the same state. Every claim it prints is checked; the exit status
# is non-zero if one does not hold.
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
if [ ! -x "$build/ri" ]; then
    echo "server_demo: $build/ri not found; build first (make)" >&2
    exit 2
fi
build=$(cd "$build" && pwd)
ri=$build/ri
py=/usr/bin/python3
client=("$py" "$root/examples/client.py")
work=$build/demo-server
volume=$build/demo-volume
mkdir -p "$work"
rm -rf "$volume" && mkdir -p "$volume"
for m in counter server_hello; do
    wat2wasm "$root/examples/$m.wat" -o "$work/$m.wasm" || { echo "server_demo: wat2wasm failed" >&2; exit 2; }
done
"$py" -c 'import websockets' 2>/dev/null || { echo "server_demo: needs python3-websockets" >&2; exit 2; }

bold="" plain=""
if [ -t 1 ]; then bold=$(tput bold 2>/dev/null || true) plain=$(tput sgr0 2>/dev/null || true); fi
checks=0 failures=0
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done; }
trap cleanup EXIT

section() { printf '\n%s== %s%s\n' "$bold" "$*" "$plain"; }
note() { printf '   %s\n' "$@"; }
check() {
    local what=$1
    shift
    checks=$((checks + 1))
    if ! "$@"; then
        failures=$((failures + 1))
        printf '   !! demo check failed: %s\n' "$what"
    fi
}
# run CMD...: shows the command (paths shortened), runs it; its stdout is in $out.
run() {
    local shown="$*"
    shown=${shown//$root\//}
    shown=${shown//$py /}
    printf '%s$ %s%s\n' "$bold" "$shown" "$plain"
    out=$("$@" 2>&1)
    rc=$?
    [ -n "$out" ] && printf '%s\n' "$out"
    return $rc
}

matches() { [[ $1 =~ $2 ]]; }
has() { grep -Fq -- "$1" <<<"$out"; }

# start_server NAME: starts `ri serve` on a free port with the demo volume; sets $url.
start_server() {
    local log=$work/$1.out
    printf '%s$ ri serve --port 0 --checkpoint-path %s &%s\n' "$bold" "${volume#$root/}" "$plain"
    "$ri" serve --port 0 --checkpoint-path "$volume" >"$log" 2>"$work/$1.log" &
    pids+=($!)
    server_pid=$!
    local i line=""
    for i in $(seq 1 200); do
        line=$(head -n 1 "$log" 2>/dev/null)
        [[ $line == "listening on "* ]] && break
        sleep 0.05
    done
    printf '%s\n' "$line"
    if [[ ! $line =~ ^listening\ on\ 127\.0\.0\.1:([0-9]+)$ ]]; then
        echo "server_demo: the server did not start; its log:" >&2
        cat "$work/$1.log" >&2
        exit 1
    fi
    url=ws://127.0.0.1:${BASH_REMATCH[1]}
}

printf '%sri-sandbox server demo%s: sandboxes over WebSockets, checkpointed to a volume and\n' "$bold" "$plain"
printf 'attached again on another server process (docs/SERVER.md; client: examples/client.py)\n'

section "1. A server, and a sandbox created with the counter module (examples/counter.wat)"
start_server first
run "${client[@]}" "$url" create --checkpoint --module "$work/counter.wasm"
check "create answered" [ $? -eq 0 ]
read -r sid token <<<"$out"
check "the id is sandbox-<24 hex>" matches "${sid:-}" '^sandbox-[0-9a-f]{24}$'
check "the token is 32 hex digits" matches "${token:-}" '^[0-9a-f]{32}$'
note "The socket closed; the sandbox stays live on the server, and the token attaches to it."

section "2. Call its exported functions: the state lives in the sandbox's memory"
for want in 1 2 3; do
    run "${client[@]}" "$url" call "$sid" "$token" increment
    check "increment returns $want" [ "$out" = "$want" ]
done
run "${client[@]}" "$url" call "$sid" "$token" add 10
check "add 10 returns 13" [ "$out" = "13" ]

section "3. Run a program: stdin in, stdout out (examples/server_hello.wat)"
# A second sandbox, so that loading this program does not replace the counter module.
run "${client[@]}" "$url" create
read -r sid2 token2 <<<"$out"
run "${client[@]}" "$url" run "$sid2" "$token2" "$work/server_hello.wasm" --stdin "ri-sandbox"
check "the program greets its stdin" [ "$out" = "hello, ri-sandbox!" ]
run "${client[@]}" "$url" kill "$sid2" "$token2"
check "the second sandbox is killed" [ "$out" = "killed" ]

section "4. Checkpoint the counter sandbox to the volume (seed 002's layout)"
run "${client[@]}" "$url" checkpoint "$sid" "$token"
check "checkpoint answered" [ "$out" = "checkpointed" ]
latest=$(cat "$volume/$sid/checkpoints/latest" 2>/dev/null)
printf '%s$ ls %s%s\n' "$bold" "${volume#$root/}/$sid/ ${volume#$root/}/$sid/checkpoints/" "$plain"
ls "$volume/$sid/" "$volume/$sid/checkpoints/"
check "latest names a checkpoint image" matches "$latest" '^checkpoint_[0-9]{13}\.img$'
check "the image exists" [ -f "$volume/$sid/checkpoints/$latest" ]
check "metadata.json exists" [ -f "$volume/$sid/metadata.json" ]
check "the token is not stored in clear" bash -c "! grep -q '$token' '$volume/$sid/metadata.json'"

section "5. Stop this server; attach on a SECOND server process with the same volume"
printf '%s$ kill -TERM %s%s   (the first server)\n' "$bold" "$server_pid" "$plain"
kill -TERM "$server_pid"
wait "$server_pid"
check "the first server exited cleanly on SIGTERM" [ $? -eq 0 ]
start_server second
note "-v shows the frames: the second server restores the sandbox from the volume on attach."
run "${client[@]}" -v "$url" call "$sid" "$token" get
check "the second server restored it (SANDBOX_RESTORING, then SANDBOX_RUNNING)" \
    has '"status": "SANDBOX_RESTORING"'
check "the counter is still 13 on the second server" [ "$(tail -n 1 <<<"$out")" = "13" ]
run "${client[@]}" "$url" call "$sid" "$token" increment
check "and counts on: 14" [ "$out" = "14" ]

section "6. A wrong token is refused"
run "${client[@]}" "$url" call "$sid" 00000000000000000000000000000000 get
check "a wrong token fails" [ $? -ne 0 ]
check "with 'Invalid sandbox token.'" has 'Invalid sandbox token.'

section "7. Kill the sandbox: its stored state goes too"
run "${client[@]}" "$url" kill "$sid" "$token"
check "kill answered" [ "$out" = "killed" ]
check "its directory on the volume is gone" [ ! -e "$volume/$sid" ]

printf '\n%d checks, %d failed\n' "$checks" "$failures"
[ "$failures" -eq 0 ]
