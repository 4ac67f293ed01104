# Cross build for aarch64 (64-bit, little-endian) with Debian's gcc-aarch64-linux-gnu, run
# under qemu-aarch64:  cmake -S . -B build-aarch64 -DCMAKE_TOOLCHAIN_FILE=cmake/toolchain-aarch64.cmake
# Needs scripts/install-cross-deps.sh. See toolchain-cross.cmake.
set(RI_CROSS_PROCESSOR aarch64)
set(RI_CROSS_TRIPLET aarch64-linux-gnu)
set(RI_CROSS_DEBARCH arm64)
set(RI_CROSS_QEMU qemu-aarch64)
include(${CMAKE_CURRENT_LIST_DIR}/toolchain-cross.cmake)
