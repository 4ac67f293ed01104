/*
 * The code verifier: checks one compiled function's code words and handler tables against
 * the operation table (code_info.h) and the bounds of the module it was compiled from: a
 * corrupt handler word, operand, stop point or handler-table entry is found however it came
 * about. Invariant 15 (docs/ARCHITECTURE.md); the debug and sanitizer builds run it on every
 * function they compile.
 */
#ifndef RI_ENGINE_CODE_VERIFY_H
#define RI_ENGINE_CODE_VERIFY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "code.h"
#include "module.h"

/* What the verifier needs besides the code: the operation of every handler word of one
 * dispatch table (ri_interp_dispatch_table) and the module's index spaces. Made once for
 * all the functions of a module; immutable once made. */
typedef struct ri_code_verifier ri_code_verifier;

/* A verifier for code whose handler words are offsets of `dispatch`, compiled from m (which
 * must outlive it). NULL if out of memory. */
ri_code_verifier *ri_code_verifier_new(const int32_t *dispatch, const ri_module *m);
void ri_code_verifier_free(ri_code_verifier *v);

/* Checks code:
 * - every handler word is an operation's, every instruction starts where the one before it
 *   ended, and the last ends exactly at the code's end; the first is an ENTRY, whose locals
 *   and constants are the code's (nparams, nlocals, nconsts) and whose zeroed slots lie in
 *   the frame;
 * - every slot operand (its kinds: D, S, and both slots of a V or W, an N's range) lies
 *   inside the frame (frame_slots); a P (a callee's frame base, THROW's first value) with the
 *   values after it (the callee's parameters, the tag's values) too; a RETHROW's slot is an
 *   exception slot;
 * - every index operand is inside its index space of the module: functions (F), imported
 *   functions (H), bodies (B), types (T), tables (X), memories (Y), globals (G), element (E)
 *   and data (Z) segments, tags (K);
 * - every branch offset (O) lands on an instruction's start;
 * - the stop points are in increasing order, each at an instruction's start (or 3 words
 *   into a TRAP2 instruction: its second trap);
 * - the exception handler tables: each try's body [start, end) lies in the code between
 *   instruction starts, tries are in the order they open and their bodies nest (a parent or
 *   a delegate's target is an earlier try holding the body), a try has as many clauses as it
 *   says (none if it delegates); each clause's try and tag exist, its target is an
 *   instruction's start (a legacy clause's a GAS after its try's body, with [target, end)
 *   in the code), its values' slots and its exception slot lie in the frame (a legacy
 *   clause's in the exception slots, a try_table clause's right after its values).
 * Returns true if all hold; else false, with the first failure described in msg (cap
 * bytes; msg may be NULL). false with "out of memory" if it could not check. */
bool ri_code_verify(const ri_code_verifier *v, const ri_code *code, char *msg, size_t cap);

/* Aborts, naming invariant 15 and the failure, unless code passes ri_code_verify (for the
 * compiler, in builds with assertions). */
void ri_code_assert_valid(const ri_code_verifier *v, const ri_code *code);

#endif
