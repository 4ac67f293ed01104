/*
 * The code verifier: checks one compiled function's code words against the operation table
 * (code_info.h), using nothing but the code itself: a corrupt handler word, operand or stop
 * point is found however it came about. Invariant 15 (docs/ARCHITECTURE.md); the debug and
 * sanitizer builds run it on every function they compile.
 */
#ifndef RI_ENGINE_CODE_VERIFY_H
#define RI_ENGINE_CODE_VERIFY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "code.h"

/* Checks code, whose handler words are offsets of `dispatch` (ri_interp_dispatch_table):
 * - every handler word is an operation's, every instruction starts where the one before it
 *   ended, and the last ends exactly at the code's end; the first is an ENTRY;
 * - every slot operand (its kinds: D, S, and both slots of a V or W, an N's range, a
 *   P: a callee's frame base, THROW's first value) lies inside the frame (frame_slots);
 * - every branch offset (O) lands on an instruction's start;
 * - the stop points are in increasing order, each at an instruction's start (or 3 words
 *   into a TRAP2 instruction: its second trap).
 * Returns true if all hold; else false, with the first failure described in msg (cap
 * bytes; msg may be NULL). false with "out of memory" if it could not check. */
bool ri_code_verify(const ri_code *code, const int32_t *dispatch, char *msg, size_t cap);

/* Aborts, naming invariant 15 and the failure, unless code passes ri_code_verify (for the
 * compiler, in builds with assertions). */
void ri_code_assert_valid(const ri_code *code, const int32_t *dispatch);

#endif
