# Thin wrapper around CMake. Programs land in build/.
BUILD ?= build
# The project's own builds treat warnings as errors (a packager's cmake does not).
CMAKE_FLAGS ?=
override CMAKE_FLAGS += -DRI_WERROR=ON
PREFIX ?= /usr/local
JOBS ?= $(shell nproc)
# gcc unless the caller names another compiler (make CC=clang-19 BUILD=build-clang).
ifeq ($(origin CC),default)
CC = gcc
endif

.PHONY: all install configure test spec asan check check-cross check-cross-quick demo bench bench-simd bench-startup fuzz-diff fuzz clean

all: configure
	cmake --build $(BUILD) -j $(JOBS) -- --no-print-directory

configure:
	@test -f $(BUILD)/CMakeCache.txt || CC=$(CC) cmake -S . -B $(BUILD) $(CMAKE_FLAGS)

# Installs the ri command, headers, libri (static and shared), ri.pc, the CMake package and
# ri(1) under PREFIX (default /usr/local): make install PREFIX=$HOME/.local
install: all
	cmake --install $(BUILD) --prefix $(PREFIX)

test: all
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

spec: all
	$(BUILD)/ri-spec --all

asan:
	$(MAKE) BUILD=build-asan CMAKE_FLAGS="-DRI_SANITIZE=ON" test

# What CI runs: gcc -Werror build + all tests, clang-19 build + unit tests, and the
# whole spec suite under ASan+UBSan with NaN canonicalisation on and off.
check:
	bash scripts/check.sh

# The same code built for s390x (big-endian) and aarch64 with Debian's cross gcc, run under
# qemu-user: the whole spec suite on each, and the same results and snapshot bytes as this
# machine's build, a paused call moved between them (scripts/check-cross.sh; needs
# scripts/install-cross-deps.sh). The quick variant is CI's: a subset of the spec files.
check-cross:
	bash scripts/check-cross.sh

check-cross-quick:
	bash scripts/check-cross.sh --quick

# The main job: the server demo (create, execute, checkpoint, attach on a second server,
# continue), then the library's tour through `ri`.
demo:
	@$(MAKE) --no-print-directory all >/dev/null
	@bash examples/server_demo.sh $(BUILD)
	@bash examples/demo.sh $(BUILD)

# Issue 3's benchmarks (bench/README.md); options via BENCH_ARGS="--reps 3 --programs fib".
bench: configure
	cmake --build $(BUILD) --target bench
	cmake --build $(BUILD) --target bench-workspace

# The start-up of `ri` against a C program that only returns (bench/startup.c).
bench-startup: configure
	cmake --build $(BUILD) --target bench-startup

# The SIMD kernels, SIMD against scalar builds on ri and Node (bench/simd/simd_bench.sh).
bench-simd: configure
	cmake --build $(BUILD) --target bench-simd

# Differential testing against V8 (tests/fuzz-diff/README.md): N random modules from campaign
# seed SEED (the same seed gives the same modules), FEATURES mvp, 2.0 or both (alternating).
# Reduced reproducers of differences land in tests/fuzz-diff/found/, which ctest replays.
N ?= 1000
SEED ?= 1
FEATURES ?= both
fuzz-diff: configure
	cmake --build $(BUILD) --target ri_difftest -- --no-print-directory
	/usr/bin/python3 tests/fuzz-diff/fuzz_diff.py --ri $(BUILD)/ri_difftest -n $(N) --seed $(SEED) \
		--features $(FEATURES) --found tests/fuzz-diff/found --progress

# The libFuzzer harnesses (tests/fuzz), each for FUZZ_TIME seconds, in build-fuzz/ (clang-19).
FUZZ_TIME ?= 60
fuzz:
	bash scripts/fuzz.sh $(FUZZ_TIME) $(FUZZ_HARNESSES)

clean:
	rm -rf $(BUILD) build-asan build-clang build-fuzz build-s390x build-aarch64 build-logs
