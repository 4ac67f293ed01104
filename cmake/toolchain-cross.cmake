# The part of the cross toolchain files (toolchain-s390x.cmake, toolchain-aarch64.cmake)
# they share. They set RI_CROSS_PROCESSOR (CMake's name), RI_CROSS_TRIPLET (gcc's and
# Debian's multiarch name), RI_CROSS_DEBARCH (Debian's architecture) and RI_CROSS_QEMU,
# then include this file.
#
# Compiler: Debian's <triplet>-gcc. Libraries: Debian's packages of that architecture,
# unpacked by scripts/install-cross-deps.sh into $RI_CROSS_ROOT/<debarch> (default
# /opt/ri-cross). Programs run under qemu-user (CMAKE_CROSSCOMPILING_EMULATOR, so ctest
# and custom commands run them there); host tools (wast2json, wat2wasm) are the host's.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR ${RI_CROSS_PROCESSOR})
set(CMAKE_C_COMPILER ${RI_CROSS_TRIPLET}-gcc)

if(DEFINED ENV{RI_CROSS_ROOT})
  set(RI_CROSS_SYSROOT "$ENV{RI_CROSS_ROOT}/${RI_CROSS_DEBARCH}")
else()
  set(RI_CROSS_SYSROOT "/opt/ri-cross/${RI_CROSS_DEBARCH}")
endif()
if(NOT EXISTS "${RI_CROSS_SYSROOT}/.complete")
  message(FATAL_ERROR "no ${RI_CROSS_DEBARCH} libraries in ${RI_CROSS_SYSROOT}: run scripts/install-cross-deps.sh")
endif()
set(RI_CROSS_LIBDIR "${RI_CROSS_SYSROOT}/usr/lib/${RI_CROSS_TRIPLET}")

# pkg-config reads the target's .pc files only, and prefixes their paths with the sysroot.
set(ENV{PKG_CONFIG_LIBDIR} "${RI_CROSS_LIBDIR}/pkgconfig:${RI_CROSS_SYSROOT}/usr/share/pkgconfig")
set(ENV{PKG_CONFIG_SYSROOT_DIR} "${RI_CROSS_SYSROOT}")
set(ENV{PKG_CONFIG_PATH} "")

# The .pc files name /usr/include and /usr/lib/<triplet>, which pkg-config drops as
# system directories: name them here, where a -DCMAKE_C_FLAGS=... does not replace them.
# (The C library is the cross compiler's own.)
set(CMAKE_C_STANDARD_INCLUDE_DIRECTORIES "${RI_CROSS_SYSROOT}/usr/include/${RI_CROSS_TRIPLET}" "${RI_CROSS_SYSROOT}/usr/include")
set(CMAKE_C_STANDARD_LIBRARIES "-L${RI_CROSS_LIBDIR} -Wl,-rpath,${RI_CROSS_LIBDIR}")

set(CMAKE_FIND_ROOT_PATH "${RI_CROSS_SYSROOT}" "/usr/${RI_CROSS_TRIPLET}")
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# qemu-user finds the target's dynamic loader and C library under -L; the other
# libraries through the rpath above.
set(CMAKE_CROSSCOMPILING_EMULATOR ${RI_CROSS_QEMU} -L /usr/${RI_CROSS_TRIPLET})
