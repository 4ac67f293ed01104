#!/usr/bin/env bash
# Tests of pausable runs (issue 5): `ri run --pause-on gas --gas N --snapshot IMAGE`, then
# `ri resume IMAGE --gas N --snapshot NEXT` again and again, each in a new process, ends
# with the same value, the same total gas and the same final image bytes as the
# uninterrupted run; for several slice sizes, also of C programs built against wasi-libc.
# Time slices (--pause-on interrupt) of a loop that calls an import. Also: what `ri resume`
# refuses (no paused call, damaged images, v1), --pause-on usage errors, and --help.
#
#   bash tests/cli/test_resume.sh [PATH/TO/ri]        (default: build/ri)
#
# Needs wat2wasm and jq. Prints each failure, then "N passed, N failed"; exits non-zero
# when anything failed.
set -u

. "$(dirname "$0")/lib.sh"
cli_init resume "$@"
cli_need jq

# expect NAME JQ_EXPR WANT: stdout's JSON, evaluated
expect() {
    local got
    got=$(jq -r "$2" <"$tmp/out" 2>/dev/null)
    name=$1
    if [ "$got" != "$3" ]; then fail "$2 is '$got', want '$3'"; else pass; fi
}
contains() { # contains NAME FILE TEXT
    name=$1
    if grep -qF -- "$3" "$tmp/$2"; then pass; else fail "$2 does not contain '$3'"; fi
}

wasm="$tmp/mix.wasm"
wat2wasm "$root/tests/wat/suspend_cli.wat" -o "$wasm" || { echo "test_resume: wat2wasm failed" >&2; exit 1; }
common=(--timestamp 1700000000000 --seed 5 --gas-schedule instructions)

# ---- sliced runs, every slice in a new process -----------------------------------------------
# full_run LABEL WASM EXPORT PAYLOAD: the uninterrupted run; sets want_value and want_gas and
# leaves its final image in $tmp/full.wsnp.
full_run() {
    t "$1-full" 0 "$ri" run "${common[@]}" --max-gas 100000000 --snapshot "$tmp/full.wsnp" --uncompressed --json \
        "$2" "$3" "$4" || return 1
    expect "$1-full-status" .status loaded
    want_value=$(jq -r .value <"$tmp/out")
    want_gas=$(jq -r .metrics.gasUsed <"$tmp/out")
}

# sliced LABEL WASM EXPORT PAYLOAD SLICE: the run by slices of SLICE gas, every slice in a new
# process (`ri run --pause-on gas`, then `ri resume` again and again), must end as full_run's.
sliced() {
    local label="$1-slice$5" slice=$5 n=1
    t "$label-first" 0 "$ri" run "${common[@]}" --pause-on gas --gas "$slice" --snapshot "$tmp/s.wsnp" \
        --uncompressed --json "$2" "$3" "$4" || return
    expect "$label-first-status" .status suspended
    expect "$label-first-code" .error.code SUSPENDED
    while :; do
        t "$label-resume$n" 0 "$ri" resume --gas "$slice" --snapshot "$tmp/next.wsnp" --uncompressed --json \
            "$tmp/s.wsnp" || break
        mv "$tmp/next.wsnp" "$tmp/s.wsnp"
        [ "$(jq -r .status <"$tmp/out")" = suspended ] || break
        n=$((n + 1))
        if [ "$n" -gt 5000 ]; then name="$label"; fail "does not end"; break; fi
    done
    expect "$label-status" .status loaded
    expect "$label-value" .value "$want_value"
    expect "$label-gas" .gasUsed "$want_gas"
    name="$label-bytes"
    if cmp -s "$tmp/s.wsnp" "$tmp/full.wsnp"; then pass; else fail "the final image differs from the uninterrupted run's"; fi
    name="$label-count"
    if [ "$slice" -lt "$want_gas" ] && [ "$n" -lt 2 ]; then fail "only $n resumes"; else pass; fi
}

full_run mix "$wasm" mix 40 || exit 1
[ "$want_gas" -gt 1000 ] || { echo "test_resume: the program is too short ($want_gas gas)"; exit 1; }
for slice in 13 250 999; do sliced mix "$wasm" mix 40 "$slice"; done

# C programs of wasi-libc (qsort, bsearch, function pointers, recursion), paused anywhere (inside
# a comparator called by qsort too) and their call stacks rebuilt from the image by every resume.
# Built by CMake when clang-19 and wasi-libc are there (RI_C_WASM_DIR); the unit test
# test_resume_libc pauses them far more often.
if [ -n "${RI_C_WASM_DIR:-}" ]; then
    if full_run qsort "$RI_C_WASM_DIR/libc_qsort.wasm" run "[120]"; then
        # (With clang-19's code both pause first inside a comparator whose caller's frame
        # reaches past it: where a rebuilt stack sized to the running frame overflowed.)
        for slice in 15006 32997; do sliced qsort "$RI_C_WASM_DIR/libc_qsort.wasm" run "[120]" "$slice"; done
    fi
    if full_run interp "$RI_C_WASM_DIR/libc_interp.wasm" run "[24, 6]"; then
        sliced interp "$RI_C_WASM_DIR/libc_interp.wasm" run "[24, 6]" 23003
    fi
else
    echo "test_resume: RI_C_WASM_DIR is not set (no clang-19 or wasi-libc at build time): the C programs are skipped"
fi

# ---- time slices of a loop that calls an import ---------------------------------------------------
# The deadline found at an import call pauses the run (--pause-on interrupt), as the watchdog's
# interrupt does: never TIMEOUT. About a second of work in 2 ms slices, then resumed to its end.
wat2wasm "$root/tests/wat/random_spin.wat" -o "$tmp/spin.wasm" || { echo "test_resume: wat2wasm failed" >&2; exit 1; }
spin=(--timestamp 1700000000000 --seed 5)
t spin-full 0 "$ri" run "${spin[@]}" --timeout 600000 --json "$tmp/spin.wasm" spin 20000000
spin_value=$(jq -r .value <"$tmp/out")
spin_gas=$(jq -r .metrics.gasUsed <"$tmp/out")
if t spin-sliced 0 "$ri" run "${spin[@]}" --pause-on interrupt --timeout 2 --snapshot "$tmp/spin.wsnp" --json \
    "$tmp/spin.wasm" spin 20000000; then
    expect spin-sliced-status .status suspended
    expect spin-sliced-code .error.code SUSPENDED
    n=0
    while [ "$(jq -r .status <"$tmp/out")" = suspended ] && [ "$n" -lt 200 ]; do
        t "spin-resume$n" 0 "$ri" resume --timeout 300 --snapshot "$tmp/spin-next.wsnp" --json "$tmp/spin.wsnp" || break
        mv "$tmp/spin-next.wsnp" "$tmp/spin.wsnp"
        n=$((n + 1))
    done
    expect spin-status .status loaded
    expect spin-value .value "$spin_value"
    expect spin-gas .gasUsed "$spin_gas"
fi

# ---- text output, a paused image restored by `ri run --restore` into a sandbox is refused to execute
t text 0 "$ri" run "${common[@]}" --pause-on gas --gas 100 --snapshot "$tmp/p.wsnp" --text "$wasm" mix 40
contains text-paused out PAUSED
t resume-text 0 "$ri" resume --gas 100 --text "$tmp/p.wsnp"
contains resume-text-paused out PAUSED

# ---- refusals ----------------------------------------------------------------------------------
t no-call 3 "$ri" resume "$tmp/full.wsnp"
contains no-call-msg err "holds no paused call"
t missing 3 "$ri" resume "$tmp/nonexistent.wsnp"
head -c 200 "$tmp/p.wsnp" >"$tmp/trunc.wsnp"
t truncated 3 "$ri" resume "$tmp/trunc.wsnp"
cp "$tmp/p.wsnp" "$tmp/flip.wsnp"
len=$(stat -c %s "$tmp/flip.wsnp")
printf '\xff' | dd of="$tmp/flip.wsnp" bs=1 seek=$((len - 40)) conv=notrunc 2>/dev/null
t flipped 3 "$ri" resume "$tmp/flip.wsnp"
t v1-of-paused 1 "$ri" run "${common[@]}" --pause-on gas --gas 100 --snapshot "$tmp/v1.wsnp" --format v1 --json "$wasm" mix 40
contains v1-msg err "WSNP v1"
t bad-pause-on 2 "$ri" run "${common[@]}" --pause-on sleep "$wasm" mix 40
t pause-gas-host-calls 2 "$ri" run --timestamp 1 --gas-schedule host-calls --pause-on gas "$wasm" mix 40
t no-image 2 "$ri" resume
t json-and-text 2 "$ri" resume --json --text "$tmp/p.wsnp"
contains json-and-text-msg err "exclude each other"
t help 0 "$ri" resume --help
contains help-text out "usage: ri resume"

cli_done
