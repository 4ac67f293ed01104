#!/usr/bin/env bash
# `make check`, what CI runs. Steps:
#   1. gcc build (-Werror) in build/, then every ctest (spec with NaN canonicalisation
#      on and off, and unit tests);
#   2. clang-19 build (-Werror) in build-clang/, then its unit tests;
#   3. ASan+UBSan build in build-asan/, its unit and server tests, and the whole spec suite
#      with canonicalisation on and off.
#   3b. a build counting dispatches per operation (-DRI_OP_COVERAGE=ON): every internal
#      operation reached by the spec suite or the engine's tests, or listed with its reason;
#   4. cross builds for s390x and aarch64 (under qemu-user): a subset of the spec suite and
#      the determinism check against x86-64 (scripts/check-cross.sh --quick; all of it:
#      make check-cross);
#   5. the libFuzzer harnesses, 30 s each (scripts/fuzz.sh; longer: make fuzz).
# Step 1 includes the differential run against V8 (ctest label fuzzdiff: 300 random modules
# and the replay of every reduced reproducer; longer campaigns: make fuzz-diff).
# Every step runs even when an earlier one failed (unless it needs that one's build), so
# one run shows everything; the summary at the end says which steps failed.
set -uo pipefail
cd "$(dirname "$0")/.."

jobs=${JOBS:-$(nproc)}
logs=build-logs
mkdir -p "$logs"

declare -a step_names=() step_results=() step_notes=()

# run_step NAME LOG COMMAND...: runs COMMAND with its output on the terminal and in LOG.
run_step() {
    local name=$1 log=$2
    shift 2
    printf '\n==== %s ====\n' "$name"
    local start=$SECONDS
    "$@" 2>&1 | tee "$log"
    local rc=${PIPESTATUS[0]}
    step_names+=("$name")
    step_results+=("$([ "$rc" -eq 0 ] && echo ok || echo FAILED)")
    local closing
    closing=$(closing_line "$log")
    step_notes+=("${closing:+$closing }($((SECONDS - start)) s)")
    return "$rc"
}

skip_step() {
    step_names+=("$1")
    step_results+=("skipped")
    step_notes+=("(its build failed)")
}

# The line that tells how a test run ended: ctest's or ri-spec's totals.
closing_line() {
    grep -E '^[0-9]+% tests passed|^[0-9]+ passed, [0-9]+ failed' "$1" | tail -n 1 || true
}

# configure BUILD_DIR COMPILER CMAKE_ARGS...: (re)configures when needed. A cache made
# with another compiler is dropped, as CMake cannot switch compilers in place.
configure() {
    local dir=$1 cc=$2
    shift 2
    if [ -f "$dir/CMakeCache.txt" ] &&
        ! grep -q "^CMAKE_C_COMPILER:[A-Z]*=.*/$cc\$" "$dir/CMakeCache.txt"; then
        rm -f "$dir/CMakeCache.txt"
    fi
    CC=$cc cmake -S . -B "$dir" -DRI_WERROR=ON "$@"
}

build() {
    local dir=$1 cc=$2
    shift 2
    configure "$dir" "$cc" "$@" && cmake --build "$dir" -j "$jobs"
}

ctest_in() {
    local dir=$1
    shift
    (cd "$dir" && ctest --output-on-failure -j "$jobs" "$@")
}

if run_step "gcc: build" "$logs/gcc-build.log" build build gcc; then
    run_step "gcc: ctest (spec, spec-nocanon, unit)" "$logs/gcc-ctest.log" ctest_in build
else
    skip_step "gcc: ctest (spec, spec-nocanon, unit)"
fi

if run_step "clang-19: build" "$logs/clang-build.log" build build-clang clang-19; then
    run_step "clang-19: unit tests" "$logs/clang-unit.log" ctest_in build-clang -L unit
else
    skip_step "clang-19: unit tests"
fi

if run_step "asan+ubsan: build" "$logs/asan-build.log" build build-asan gcc -DRI_SANITIZE=ON; then
    run_step "asan+ubsan: unit and server tests" "$logs/asan-unit.log" ctest_in build-asan -L "unit|server"
    run_step "asan+ubsan: spec suite, NaNs canonicalised" "$logs/asan-spec.log" build-asan/ri-spec --all
    run_step "asan+ubsan: spec suite, NaNs not canonicalised" "$logs/asan-spec-nocanon.log" \
        build-asan/ri-spec --all --no-canonicalize
else
    skip_step "asan+ubsan: unit and server tests"
    skip_step "asan+ubsan: spec suite, NaNs canonicalised"
    skip_step "asan+ubsan: spec suite, NaNs not canonicalised"
fi

# Operation coverage: a build counting dispatches per operation (only what the check runs).
opcov_build() {
    local tests
    # the unit tests the coverage test runs: its own list (tests/opcov/opcov.py, UNIT_TESTS)
    tests=$(python3 -c 'import sys; sys.path.insert(0, "tests/opcov"); import opcov; print(" ".join(opcov.UNIT_TESTS))') &&
        configure build-opcov gcc -DRI_OP_COVERAGE=ON &&
        cmake --build build-opcov -j "$jobs" --target ri-spec ri_wat_fixtures $tests
}
if run_step "opcov: build" "$logs/opcov-build.log" opcov_build; then
    run_step "opcov: every operation reached (or listed)" "$logs/opcov.log" ctest_in build-opcov -L opcov
else
    skip_step "opcov: every operation reached (or listed)"
fi

if [ -x build/ri ]; then
    run_step "cross: s390x and aarch64 (quick)" "$logs/cross.log" bash scripts/check-cross.sh --quick
else
    skip_step "cross: s390x and aarch64 (quick)"
fi

run_step "libFuzzer: each harness 30 s" "$logs/fuzz.log" bash scripts/fuzz.sh 30

passed=0 failed=0
printf '\n==== make check: summary (logs in %s/) ====\n' "$logs"
for i in "${!step_names[@]}"; do
    printf '%-8s %-50s %s\n' "${step_results[$i]}" "${step_names[$i]}" "${step_notes[$i]}"
    if [ "${step_results[$i]}" = ok ]; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
done
echo "check: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
