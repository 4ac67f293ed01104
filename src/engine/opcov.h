/*
 * Operation coverage (CMake -DRI_OP_COVERAGE=ON, off by default): a build in which every
 * dispatch of the interpreter counts its operation, and each process writes the counts when
 * it exits, so that a test can tell which operations no test program reaches
 * (tests/opcov). Nothing of it is compiled into other builds.
 */
#ifndef RI_ENGINE_OPCOV_H
#define RI_ENGINE_OPCOV_H

#include <stdint.h>

#ifdef RI_OP_COVERAGE
/* Counts one dispatch of the instruction whose handler word is `word`. */
void ri_opcov_hit(uint32_t word);
#endif

#endif
