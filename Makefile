# Thin wrapper around CMake. Programs land in build/.
BUILD ?= build
CMAKE_FLAGS ?=
JOBS ?= $(shell nproc)

.PHONY: all configure test spec clean asan

all: configure
	cmake --build $(BUILD) -j $(JOBS)

configure:
	@test -f $(BUILD)/CMakeCache.txt || cmake -S . -B $(BUILD) $(CMAKE_FLAGS)

test: all
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

spec: all
	$(BUILD)/ri-spec --all

asan:
	$(MAKE) BUILD=build-asan CMAKE_FLAGS="-DRI_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug" test

clean:
	rm -rf $(BUILD) build-asan
