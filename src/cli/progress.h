/*
 * Progress of long operations on a terminal: one line on stderr, redrawn in place ("ri:
 * writing big.wsnp  57%  212 MiB of 375 MiB  1.8 s"), shown only once an operation has
 * lasted long enough to be noticed and erased when it ends. Nothing is drawn when stderr
 * is not a terminal, so piped and scripted output never changes.
 *
 * RI_PROGRESS in the environment: "never" silences it; "always" draws from the start,
 * also into a pipe (one line per drawing, then "... done"), for tests and logs.
 *
 * Every function accepts NULL (the operation is not shown), so callers need no test.
 */
#ifndef RI_CLI_PROGRESS_H
#define RI_CLI_PROGRESS_H

#include <stdint.h>

typedef struct ri_progress ri_progress;

/* Below this many bytes an operation is too quick to be worth a progress line. */
#define RI_PROGRESS_MIN_BYTES ((uint64_t)16 << 20)

/* Starts showing `what` (copied); total is the amount of work in bytes, 0 when unknown
 * (elapsed time only). NULL when nothing is to be drawn. */
ri_progress *ri_progress_start(const char *what, uint64_t total);
/* The bytes done so far (from the thread doing the work). */
void ri_progress_set(ri_progress *p, uint64_t done);
/* Ends the operation: the line is erased (a terminal) or closed with "done". */
void ri_progress_finish(ri_progress *p);

#endif
