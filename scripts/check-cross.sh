#!/usr/bin/env bash
# Cross-architecture checks: ri-sandbox built for s390x (big-endian) and aarch64 with
# Debian's cross gcc, run under qemu-user, must pass the core spec suite and give the same
# results and the same snapshot bytes as the x86-64 build (tests/cross/test_determinism.sh:
# images compared byte for byte, a paused call moved between the architectures).
#
#   scripts/check-cross.sh [--quick] [--arch s390x|aarch64]...
#
# Full (`make check-cross`): the whole spec suite on each architecture, NaNs canonicalised
# and not, then the determinism check. --quick (CI): a handful of spec files chosen for
# what differs between machines (values in slots, byte order, float precision), then the
# determinism check. Both also run test_slot_repr and the slot compile tests on each
# architecture. Needs scripts/install-deps.sh and scripts/install-cross-deps.sh.
# Builds: build/ (the host's ri; reused when configured), build-s390x/, build-aarch64/.
set -uo pipefail
cd "$(dirname "$0")/.."

quick=0
archs=()
while [ $# -gt 0 ]; do
    case $1 in
    --quick) quick=1 ;;
    --arch) archs+=("${2:?--arch needs s390x or aarch64}"); shift ;;
    -h | --help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "check-cross: unknown argument '$1' (see --help)" >&2; exit 2 ;;
    esac
    shift
done
[ ${#archs[@]} -gt 0 ] || archs=(s390x aarch64)

# Spec files of the quick run: integer and float operators and conversions at the edges,
# values through globals, constant expressions, segments, imports and exports (the API),
# memory at every width and offset, float bit patterns.
quick_spec=(i32 i64 f32_bitwise conversions float_misc float_exprs global data elem linking imports
    address endianness memory call_indirect select)
# ... and SIMD: lanes, loads and stores in byte order, the fast path's integer, float and
# bitwise operations (on a big-endian host, its fallback to the reference)
quick_simd=(simd_lane simd_load simd_store simd_bitwise simd_i8x16_cmp simd_i16x8_sat_arith simd_i32x4_arith2
    simd_i32x4_dot_i16x8 simd_f32x4 simd_f64x2_arith simd_conversions)

jobs=${JOBS:-$(nproc)}
logs=build-logs
mkdir -p "$logs"
host_build=${RI_HOST_BUILD:-build}
results=()
status=0

# step NAME LOG COMMAND...: runs COMMAND, its output in LOG (and its last line shown)
step() {
    local name=$1 log=$2 start=$SECONDS rc
    shift 2
    printf '==== %s\n' "$name"
    "$@" >"$log" 2>&1
    rc=$?
    tail -n 1 "$log" | sed 's/^/     /'
    results+=("$(printf '%-6s %-55s (%d s)' "$([ $rc -eq 0 ] && echo ok || echo FAILED)" "$name" $((SECONDS - start)))")
    [ $rc -eq 0 ] || status=1
    return $rc
}

triplet() { case $1 in s390x) echo s390x-linux-gnu ;; aarch64) echo aarch64-linux-gnu ;; *) return 1 ;; esac; }
debarch() { case $1 in s390x) echo s390x ;; aarch64) echo arm64 ;; esac; }

# What each architecture's build and run needs, said once and clearly.
preflight() {
    local a=$1 t
    t=$(triplet "$a") || { echo "check-cross: unknown architecture '$a' (s390x or aarch64)"; return 1; }
    for tool in "$t-gcc" "qemu-$a" wast2json wat2wasm jq cmake; do
        command -v "$tool" >/dev/null || { echo "check-cross: $tool not found: run scripts/install-cross-deps.sh"; return 1; }
    done
    [ -f "${RI_CROSS_ROOT:-/opt/ri-cross}/$(debarch "$a")/.complete" ] ||
        { echo "check-cross: no $a libraries: run scripts/install-cross-deps.sh"; return 1; }
}

build_host() {
    { [ -f "$host_build/CMakeCache.txt" ] || cmake -S . -B "$host_build" -DRI_WERROR=ON; } &&
        cmake --build "$host_build" -j "$jobs" --target ri
}

build_cross() {
    local a=$1
    cmake -S . -B "build-$a" -DCMAKE_TOOLCHAIN_FILE="cmake/toolchain-$a.cmake" -DRI_WERROR=ON &&
        cmake --build "build-$a" -j "$jobs" --target ri ri-spec test_slot_repr ri_wat_fixtures
}

# under ARCH PROGRAM ARGS...: runs a program of that architecture's build
under() {
    local a=$1
    shift
    "qemu-$a" -L "/usr/$(triplet "$a")" "$@"
}

spec() {
    local a=$1
    shift
    if [ $quick -eq 1 ]; then
        local files=() shared
        shared=$(sed -n 's/^RI_SHARED_DIR:PATH=//p' "build-$a/CMakeCache.txt")
        for f in "${quick_spec[@]}"; do files+=("$shared/wasm-testsuite/core/$f.wast"); done
        for f in "${quick_simd[@]}"; do files+=("$shared/wasm-testsuite/simd/$f.wast"); done
        under "$a" "build-$a/ri-spec" "$@" "${files[@]}"
    else
        under "$a" "build-$a/ri-spec" "$@" --all
    fi
}

# ctest runs the unit test under qemu (CMAKE_CROSSCOMPILING_EMULATOR) and the compile
# tests with the cross compiler.
slot_tests() { (cd "build-$1" && ctest --output-on-failure -R 'slot') ; }

t0=$SECONDS
step "x86-64: build ri" "$logs/cross-host-build.log" build_host || exit 1
runners=("x86-64=$host_build/ri")
for a in "${archs[@]}"; do
    step "$a: preflight" "$logs/cross-$a-preflight.log" preflight "$a" || continue
    step "$a: build (cross gcc)" "$logs/cross-$a-build.log" build_cross "$a" || continue
    step "$a: slot representation tests" "$logs/cross-$a-slot.log" slot_tests "$a"
    step "$a: spec suite$([ $quick -eq 1 ] && echo ' (quick subset)'), NaNs canonicalised" \
        "$logs/cross-$a-spec.log" spec "$a"
    if [ $quick -eq 0 ]; then
        step "$a: spec suite, NaNs not canonicalised" "$logs/cross-$a-spec-nocanon.log" spec "$a" --no-canonicalize
    fi
    runners+=("$a=qemu-$a -L /usr/$(triplet "$a") build-$a/ri")
done
step "determinism across ${runners[*]%%=*}" "$logs/cross-determinism.log" \
    bash tests/cross/test_determinism.sh "${runners[@]}"

printf '\n==== check-cross%s: summary (logs in %s/, %d s in all) ====\n' \
    "$([ $quick -eq 1 ] && echo ' --quick')" "$logs" $((SECONDS - t0))
printf '%s\n' "${results[@]}"
exit $status
