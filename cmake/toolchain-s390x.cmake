# Cross build for s390x (64-bit, big-endian) with Debian's gcc-s390x-linux-gnu, run under
# qemu-s390x:  cmake -S . -B build-s390x -DCMAKE_TOOLCHAIN_FILE=cmake/toolchain-s390x.cmake
# Needs scripts/install-cross-deps.sh. See toolchain-cross.cmake.
set(RI_CROSS_PROCESSOR s390x)
set(RI_CROSS_TRIPLET s390x-linux-gnu)
set(RI_CROSS_DEBARCH s390x)
set(RI_CROSS_QEMU qemu-s390x)
include(${CMAKE_CURRENT_LIST_DIR}/toolchain-cross.cmake)
