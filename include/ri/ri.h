/* ri-sandbox: deterministic, metered WebAssembly sandboxes that can be snapshotted, forked,
 * paused mid-call, restored and diffed. One include for the whole embedding API:
 *
 *   engine.h    decode, validate, instantiate and run WebAssembly modules
 *   snapshot.h  WSNP snapshot images: write, read, restore, diff, deltas
 *   sandbox.h   sandboxes: limits, host functions, execute, snapshot/restore, fork
 *   files.h     the host's access to a WASI sandbox's workspace files
 *   store.h     the snapshot store: named snapshots, references, garbage collection
 *   version.h   the library's version
 *
 * Link with `pkg-config --cflags --libs ri`, or in CMake `find_package(ri)` and the target
 * `ri::ri` (shared) or `ri::ri_static`. */
#ifndef RI_RI_H
#define RI_RI_H

#include "ri/version.h"
#include "ri/engine.h"
#include "ri/snapshot.h"
#include "ri/sandbox.h"
#include "ri/files.h"
#include "ri/store.h"
#include "ri/lang.h"

#endif
