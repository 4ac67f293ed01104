#!/usr/bin/env bash
# Real programs built with clang-19 for wasm32-wasi (tests/realprog, built by CMake into
# RI_REALPROG_DIR with a native build of each beside it): `ri run` gives byte for byte the
# native program's stdout and exit code.
#   - simd_kernels: -O3 -msimd128, wasm_simd128.h intrinsics and auto-vectorised loops (the
#     module must hold hundreds of SIMD instructions of many kinds, or the test proves nothing);
#   - musttail_interp: an interpreter whose handlers chain by musttail (-mtail-call): over a
#     million tail calls, in a call stack limited to 1,000 frames;
#   - sjlj: setjmp/longjmp lowered to exception handling (-mllvm -wasm-enable-sjlj).
# Then simd_kernels, sjlj and musttail_interp paused by gas at several points, every slice resumed in a new
# process (`ri resume`), give the uninterrupted run's stdout, exit code and final image; sjlj's
# pauses land inside its try blocks (frames of the functions that call setjmp).
# (`ri run` always canonicalises NaNs; simd_kernels makes NaNs and only counts them.)
#
#   bash tests/cli/test_realprog.sh [PATH/TO/ri]        (default: build/ri)
#
# Needs wasm2wat, wasm-objdump and jq; exits 77 (skipped) when the programs were not built
# (no clang-19 or wasi-libc at configure time).
set -u

. "$(dirname "$0")/lib.sh"
cli_init realprog "$@"
cli_need jq wasm2wat wasm-objdump

dir=${RI_REALPROG_DIR:-}
for prog in simd_kernels musttail_interp sjlj; do
    if [ -z "$dir" ] || [ ! -f "$dir/$prog.wasm" ] || [ ! -x "$dir/$prog.native" ]; then
        echo "test_realprog: SKIPPED: no $prog.wasm and $prog.native in RI_REALPROG_DIR ('$dir'):" \
            "clang-19 and wasi-libc were missing at configure time (scripts/install-deps.sh installs them)"
        exit 77
    fi
done

# same_as_native LABEL PROG ARGS...: `ri run PROG.wasm ARGS` prints what PROG.native prints and
# exits with its status.
same_as_native() {
    local label=$1 prog=$2
    shift 2
    "$dir/$prog.native" "$@" >"$tmp/native.out" 2>/dev/null </dev/null
    local want=$?
    name="$label-native"
    if [ -s "$tmp/native.out" ]; then pass; else fail "the native program printed nothing (status $want)"; fi
    t "$label" "$want" "$ri" run "${ri_opts[@]}" "$dir/$prog.wasm" "$@"
    same_file "$label-stdout" "$tmp/native.out" "$tmp/out"
}

# at_least LABEL COUNT MIN WHAT
at_least() {
    name=$1
    if [ "$2" -ge "$3" ]; then pass; else fail "$4: $2, expected at least $3"; fi
}

# ---- SIMD -------------------------------------------------------------------------------------
wasm2wat --enable-all "$dir/simd_kernels.wasm" -o "$tmp/simd.wat"
simd_ops=$(grep -oE '\b(v128|i8x16|i16x8|i32x4|i64x2|f32x4|f64x2)\.[a-z0-9_]+' "$tmp/simd.wat")
simd_count=$(printf '%s\n' "$simd_ops" | wc -l)
simd_kinds=$(printf '%s\n' "$simd_ops" | sort -u | wc -l)
echo "test_realprog: simd_kernels.wasm has $simd_count SIMD instructions of $simd_kinds kinds"
at_least simd-instructions "$simd_count" 400 "SIMD instructions in the module"
at_least simd-kinds "$simd_kinds" 70 "distinct SIMD instructions"
for op in i8x16.shuffle i8x16.swizzle i8x16.add_sat_u i8x16.sub_sat_u i16x8.add_sat_s i16x8.narrow_i32x4_u \
    i8x16.narrow_i16x8_u i16x8.extend_low_i8x16_u i32x4.dot_i16x8_s f32x4.sqrt f32x4.pmin f32x4.nearest \
    i32x4.trunc_sat_f32x4_s f32x4.demote_f64x2_zero i8x16.bitmask i8x16.popcnt; do
    name="simd-has-$op"
    if printf '%s\n' "$simd_ops" | grep -qx "$op"; then pass; else fail "the module has no $op"; fi
done
ri_opts=()
same_as_native simd simd_kernels
same_as_native simd-1-round simd_kernels 1
name=simd-nans
if grep -Eq 'nans [1-9]' "$tmp/out"; then pass; else fail "the program made no NaN (it should count some)"; fi

# ---- musttail interpreter ---------------------------------------------------------------------
wasm2wat --enable-all "$dir/musttail_interp.wasm" -o "$tmp/mt.wat"
at_least musttail-return_call "$(grep -cE '\breturn_call\b' "$tmp/mt.wat")" 2 "return_call instructions"
at_least musttail-return_call_indirect "$(grep -cE '\breturn_call_indirect\b' "$tmp/mt.wat")" 10 \
    "return_call_indirect instructions"
ri_opts=(--max-call-depth 1000)
same_as_native musttail musttail_interp
executed=$(sed -nE 's/.* ([0-9]+) instructions executed.*/\1/p' "$tmp/out")
echo "test_realprog: musttail_interp ran $executed bytecode instructions, each a tail call, in 1,000 frames at most"
at_least musttail-depth "${executed:-0}" 1000000 "tail calls in one chain (with a stack of 1,000 frames)"
same_as_native musttail-small musttail_interp 100

# ---- setjmp/longjmp ---------------------------------------------------------------------------
wasm-objdump -d "$dir/sjlj.wasm" >"$tmp/sjlj.dis"
at_least sjlj-try "$(grep -cE '\| +try$' "$tmp/sjlj.dis")" 3 "try blocks"
at_least sjlj-throw "$(grep -cE '\| +throw ' "$tmp/sjlj.dis")" 1 "throw instructions"
ri_opts=()
same_as_native sjlj sjlj
same_as_native sjlj-short sjlj 300

# ---- paused, resumed in other processes -------------------------------------------------------
# The functions whose code has a try block (those that call setjmp): a pause with one of them
# on the stack is a pause inside a try block.
try_funcs=$(awk '/^[0-9a-f]+ func\[[0-9]+\]/ { match($0, /func\[[0-9]+\]/); f = substr($0, RSTART + 5, RLENGTH - 6) }
                 /\| +try$/ { print f }' "$tmp/sjlj.dis" | sort -un | paste -sd, -)

# chain LABEL PROG GAS ARGS...: the uninterrupted run, then the run by slices of GAS, each slice
# in a new process; the same stdout, exit status and final image. Sets in_try: how many of
# try_funcs had a frame on the stack at some pause, and deepest: the most frames of a pause.
chain() {
    local label=$1 prog=$2 gas=$3 i=1 rc
    shift 3
    "$ri" run --snapshot "$tmp/full.wsnp" --uncompressed "$dir/$prog.wasm" "$@" >"$tmp/full.out" 2>"$tmp/full.err" </dev/null
    local want=$?
    "$ri" run --gas "$gas" --snapshot "$tmp/p1.wsnp" --uncompressed "$dir/$prog.wasm" "$@" >"$tmp/chain.out" 2>"$tmp/err" </dev/null
    rc=$?
    : >"$tmp/frames"
    deepest=0
    while grep -q 'the process paused' "$tmp/err" && [ "$i" -lt 500 ]; do
        "$ri" inspect --json "$tmp/p$i.wsnp" >"$tmp/inspect.json"
        jq -r '.suspendedCall.frames[].function' "$tmp/inspect.json" >>"$tmp/frames"
        local nframes
        nframes=$(jq '.suspendedCall.frames | length' "$tmp/inspect.json")
        [ "${nframes:-0}" -gt "$deepest" ] && deepest=$nframes
        "$ri" resume --gas "$gas" --snapshot "$tmp/p$((i + 1)).wsnp" --uncompressed "$tmp/p$i.wsnp" \
            >>"$tmp/chain.out" 2>"$tmp/err" </dev/null
        rc=$?
        rm -f "$tmp/p$i.wsnp"
        i=$((i + 1))
    done
    name="$label-slices"
    if [ "$i" -ge 3 ]; then pass; else fail "only $i slices"; fi
    name="$label-status"
    if [ "$rc" -eq "$want" ]; then pass; else fail "exit status $rc, uninterrupted $want"; fi
    same_file "$label-stdout" "$tmp/full.out" "$tmp/chain.out"
    same_file "$label-image" "$tmp/full.wsnp" "$tmp/p$i.wsnp"
    "$dir/$prog.native" "$@" >"$tmp/native.out" 2>/dev/null </dev/null
    same_file "$label-native" "$tmp/native.out" "$tmp/chain.out"
    in_try=$(sort -un "$tmp/frames" | grep -cxF -f <(printf '%s\n' "${try_funcs//,/$'\n'}"))
    echo "test_realprog: $label: $i slices of $gas gas, at most $deepest frames${try_funcs:+; functions with try blocks paused in: $in_try}"
}

sjlj_try_funcs=$try_funcs
try_funcs=""
chain simd-paused simd_kernels 9999991
chain simd-paused-small simd_kernels 3333331 1
# A chain of tail calls paused in the middle, its frames rebuilt by each resume.
chain musttail-paused musttail_interp 1000003 600
name=musttail-paused-frames
if [ "$deepest" -gt 0 ] && [ "$deepest" -le 12 ]; then pass; else fail "$deepest frames at a pause, expected 1 to 12"; fi
try_funcs=$sjlj_try_funcs
# main and eval_line at least: paused inside the try blocks of both nested setjmps.
chain sjlj-paused sjlj 7000003
at_least sjlj-paused-in-try "$in_try" 2 "functions with try blocks on the paused stacks"
chain sjlj-paused-small sjlj 1900007 600
at_least sjlj-paused-small-in-try "$in_try" 2 "functions with try blocks on the paused stacks"

cli_done
