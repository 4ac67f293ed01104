# What `cmake --install` (and `make install PREFIX=...`) puts in place: the `ri` command, the
# public headers under include/ri/, libri (static and shared), ri.pc for pkg-config, a CMake
# package (find_package(ri): targets ri::ri and ri::ri_static) and the man page ri(1).
# Every path in ri.pc and riConfig.cmake is relative to the file itself, so an installed
# tree can be moved (`cmake --install build --prefix DIR` works after configuring).

install(TARGETS ${RI_LIB_TARGETS}
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} NAMELINK_COMPONENT Development
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
if(TARGET ri)
  install(TARGETS ri RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()
if(TARGET ri_serve_module) # `ri serve` (loaded from BINDIR/../LIBDIR/ri by the binary)
  install(TARGETS ri_serve_module LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}/ri)
endif()
install(FILES
        ${CMAKE_SOURCE_DIR}/include/ri/ri.h
        ${CMAKE_SOURCE_DIR}/include/ri/api.h
        ${CMAKE_SOURCE_DIR}/include/ri/version.h
        ${CMAKE_SOURCE_DIR}/include/ri/engine.h
        ${CMAKE_SOURCE_DIR}/include/ri/snapshot.h
        ${CMAKE_SOURCE_DIR}/include/ri/sandbox.h
        ${CMAKE_SOURCE_DIR}/include/ri/files.h
        ${CMAKE_SOURCE_DIR}/include/ri/wasi.h
        ${CMAKE_SOURCE_DIR}/include/ri/store.h
        ${CMAKE_SOURCE_DIR}/include/ri/lang.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/ri)
install(FILES ${CMAKE_SOURCE_DIR}/docs/man/ri.1 DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
install(FILES ${CMAKE_SOURCE_DIR}/examples/embed.c ${CMAKE_SOURCE_DIR}/examples/embed.wat
        DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples)
install(FILES ${CMAKE_SOURCE_DIR}/LICENSE ${CMAKE_SOURCE_DIR}/CHANGELOG.md ${CMAKE_SOURCE_DIR}/README.md
        DESTINATION ${CMAKE_INSTALL_DOCDIR})

# pkg-config: prefix found from the .pc file's own directory.
set(RI_PC_DIR ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
file(RELATIVE_PATH RI_PC_TO_PREFIX /root/${RI_PC_DIR} /root)
string(REGEX REPLACE "/$" "" RI_PC_TO_PREFIX "${RI_PC_TO_PREFIX}")
configure_file(${CMAKE_SOURCE_DIR}/cmake/ri.pc.in ${CMAKE_BINARY_DIR}/ri.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/ri.pc DESTINATION ${RI_PC_DIR})

# CMake package.
set(RI_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/ri)
file(RELATIVE_PATH RI_CMAKE_TO_PREFIX /root/${RI_CMAKE_DIR} /root)
string(REGEX REPLACE "/$" "" RI_CMAKE_TO_PREFIX "${RI_CMAKE_TO_PREFIX}")
set(RI_HAVE_SHARED ${RI_BUILD_SHARED})
configure_file(${CMAKE_SOURCE_DIR}/cmake/riConfig.cmake.in ${CMAKE_BINARY_DIR}/riConfig.cmake @ONLY)
include(CMakePackageConfigHelpers)
write_basic_package_version_file(${CMAKE_BINARY_DIR}/riConfigVersion.cmake
                                 VERSION ${PROJECT_VERSION} COMPATIBILITY SameMajorVersion)
install(FILES ${CMAKE_BINARY_DIR}/riConfig.cmake ${CMAKE_BINARY_DIR}/riConfigVersion.cmake
        DESTINATION ${RI_CMAKE_DIR})
