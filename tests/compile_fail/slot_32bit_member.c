/* Must NOT compile (tests/CMakeLists.txt, the unit/slot_has_no_32bit_member tests): ri_slot has no
 * 32-bit member, so a reader cannot take the wrong half of a slot on a big-endian machine
 * (docs/ARCHITECTURE.md, invariant 10). MEMBER is i32 or f32; with a member ri_slot does
 * have (-DMEMBER=i64), this is valid C11. */
#include "engine/runtime.h"

uint64_t slot_read(ri_slot s);
uint64_t slot_read(ri_slot s) { return (uint64_t)s.MEMBER; }
