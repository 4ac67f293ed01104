/*
 * Exceptions (exception handling: try, catch, throw, rethrow, delegate, and the final
 * form's try_table, throw_ref, exnref): the objects a throw makes, the search of a frame's
 * handler tables, and the store's list of objects.
 *
 * An exception is an object on the heap (its tag and its values), so that a catch can keep
 * it in a slot of its frame for a rethrow, and an exnref is a pointer to one (in any slot:
 * locals, operands, another exception's values). The store's execution state lists every
 * object; the list is emptied when the next outermost call starts (so that an exnref result
 * stays valid until then), when a suspended call is dropped, and with the store; it is
 * collected when it grows in the outermost run: an object that no slot of the value stack
 * in use holds (compared, never followed), and no held object's values hold, is freed.
 */
#ifndef RI_ENGINE_EXN_H
#define RI_ENGINE_EXN_H

#include "exec.h"

typedef struct ri_exn {
    const ri_tag *tag;
    uint32_t n;
    ri_slot vals[];
} ri_exn;

/* A new exception of `tag` with its values vals[0 .. tag->nparams), listed in exec. The
 * running frame (fp, code) is the one place outside the frame records whose exception
 * slots a collection must see. NULL when out of memory. */
ri_exn *ri_exn_new(ri_exec *exec, const ri_tag *tag, const ri_slot *vals, const ri_slot *fp, const ri_code *code);

/* The catch clause of `code` (running in inst) that takes exn thrown at code position pos,
 * or NULL if none does (the exception goes on to the caller). */
const ri_code_catch *ri_exn_find_catch(const ri_code *code, const ri_instance *inst, uint32_t pos, const ri_exn *exn);

/* Whether code position pos lies in a catch clause that keeps its exception for a rethrow
 * (a frame stopped there holds an exception object, which descriptions cannot carry). */
bool ri_exn_kept_at(const ri_code *code, uint32_t pos);

/* Whether p is a listed exception (an exnref a host gives back must be one). */
bool ri_exn_listed(const ri_exec *exec, const void *p);

/* Frees every listed exception (a new outermost call starts, or the store goes). */
void ri_exn_free_all(ri_exec *exec);

#endif
