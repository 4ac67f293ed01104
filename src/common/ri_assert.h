/*
 * RI_ASSERT: the numbered invariants of docs/ARCHITECTURE.md, docs/STORE.md and docs/WORKSPACE.md, checked
 * in debug and sanitizer builds (RI_ASSERTS defined: CMake turns it on for Debug builds,
 * RI_SANITIZE=ON and RI_ASSERTS=ON) and compiled out of release builds, where the
 * condition is not evaluated (so it must have no side effects).
 *
 * A failed assertion names the invariant, the condition and the place, then aborts: an
 * invariant that does not hold means the library's own state is wrong, and going on could
 * turn it into a wrong result or a corrupt snapshot. Untrusted input never reaches one
 * (invariant 6): bad input is an error value, checked before any RI_ASSERT sees it.
 */
#ifndef RI_COMMON_ASSERT_H
#define RI_COMMON_ASSERT_H

#ifdef RI_ASSERTS
#include <stdio.h>
#include <stdlib.h>

static inline _Noreturn void ri_assert_fail(const char *invariant, const char *cond, const char *file, int line) {
    fprintf(stderr, "ri: invariant %s does not hold: %s (%s:%d)\n", invariant, cond, file, line);
    fflush(stderr);
    abort();
}

/* RI_ASSERT(cond, "I<n>"): invariant n (ARCHITECTURE.md), "S<n>" (STORE.md's I<n>),
 * "W<n>" (WORKSPACE.md's W<n>) or "C<n>" (COORDINATION.md's C<n>). */
#define RI_ASSERT(cond, invariant) ((cond) ? (void)0 : ri_assert_fail(invariant, #cond, __FILE__, __LINE__))
#define RI_ASSERTS_ON 1
#else
/* Not evaluated, but still compiled (sizeof), so that it cannot rot. */
#define RI_ASSERT(cond, invariant) ((void)sizeof((cond) ? 1 : 0))
#define RI_ASSERTS_ON 0
#endif

#endif
