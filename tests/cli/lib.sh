# Shared by the `ri` command's tests (tests/cli/test_*.sh): the executable, a temporary
# folder, and the checks. Each check counts a pass or prints the failure with the command
# and its output; cli_done prints "N passed, N failed" and sets the exit status.
#
#   . "$(dirname "$0")/lib.sh"
#   cli_init NAME "$@"          (NAME: the test's name in messages; $1: path to ri)

cli_init() {
    cli_name=$1
    shift
    here=$(cd "$(dirname "${BASH_SOURCE[1]}")" && pwd)
    root=$(cd "$here/../.." && pwd)
    ri=${1:-$root/build/ri}
    if [ ! -x "$ri" ]; then
        echo "$cli_name: no ri executable at $ri" >&2
        echo "0 passed, 1 failed"
        exit 1
    fi
    command -v wat2wasm >/dev/null || { echo "$cli_name: wat2wasm not found" >&2; echo "0 passed, 1 failed"; exit 1; }
    tmp=$(mktemp -d "${TMPDIR:-/tmp}/ri-$cli_name.XXXXXX")
    trap 'rm -rf "$tmp"' EXIT
    passed=0 failed=0 name=""
    cmd=()
    : >"$tmp/out"
    : >"$tmp/err"
}

# cli_need TOOL...: fails the whole test when a tool it uses is missing.
cli_need() {
    local tool
    for tool in "$@"; do
        command -v "$tool" >/dev/null || { echo "$cli_name: $tool not found" >&2; echo "0 passed, 1 failed"; exit 1; }
    done
}

pass() { passed=$((passed + 1)); }
fail() {
    failed=$((failed + 1))
    echo "FAIL [$name] $*"
    echo "  command: ${cmd[*]}"
    sed 's/^/  stdout: /' "$tmp/out" | head -n 15
    sed 's/^/  stderr: /' "$tmp/err" | head -n 8
}

# t NAME WANT_STATUS CMD...: runs CMD (stdout and stderr kept for the checks after it)
# and checks its exit status; returns 0 when it was WANT_STATUS.
t() {
    name=$1
    local want=$2
    shift 2
    cmd=("$@")
    "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
    local got=$?
    if [ "$got" -eq "$want" ]; then
        pass
        return 0
    fi
    fail "exit status $got, expected $want"
    return 1
}

# Checks on the last command's output (extended regular expressions).
# out_has/err_has [--] PATTERN: an extended regex (the optional -- lets a pattern start with -).
out_has() { [ "$1" = -- ] && shift; if grep -Eq -- "$1" "$tmp/out"; then pass; else fail "stdout lacks /$1/"; fi; }
out_lacks() { if grep -Eq -- "$1" "$tmp/out"; then fail "stdout has /$1/"; else pass; fi; }
err_has() { [ "$1" = -- ] && shift; if grep -Eq -- "$1" "$tmp/err"; then pass; else fail "stderr lacks /$1/"; fi; }
err_is() { if [ "$(cat "$tmp/err")" = "$1" ]; then pass; else fail "stderr is not exactly '$1'"; fi; }
out_empty() { if [ -s "$tmp/out" ]; then fail "stdout is not empty"; else pass; fi; }
# The top-level keys of a JSON document from ri, in order, on one line.
top_keys() { grep -E '^  "[A-Za-z]+":' "$tmp/out" | sed -E 's/^  "([A-Za-z]+)".*/\1/' | tr '\n' ' '; }
keys_are() {
    local got
    got=$(top_keys)
    if [ "$got" = "$1 " ]; then pass; else fail "top-level keys: '$got', expected '$1 '"; fi
}
same_file() { name=$1; if cmp -s "$2" "$3"; then pass; else fail "$2 and $3 differ"; fi; }

cli_done() {
    echo "$passed passed, $failed failed"
    [ "$failed" -eq 0 ]
}
