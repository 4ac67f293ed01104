;; Sandbox fixture: the JSON calling convention. __alloc is a bump allocator; actions
;; take (ptr, len) of the payload and return (len << 16 | ptr) in an i32, or
;; (len << 32 | ptr) in an i64.
(module
  (import "env" "memory" (memory 1))
  (global $next (mut i32) (i32.const 1024))
  (global $lastLen (mut i32) (i32.const -1))
  (data (i32.const 16) "{\"ok\":true,\"n\":42}")
  (data (i32.const 64) "{bad")
  (func (export "__alloc") (param $len i32) (result i32)
    (local $p i32)
    global.get $next
    local.set $p
    local.get $len
    global.set $lastLen
    global.get $next
    local.get $len
    i32.add
    global.set $next
    local.get $p)
  ;; The byte at $addr: lets tests see the payload bytes as written.
  (func (export "peek") (param $addr i32) (result i32)
    local.get $addr
    i32.load8_u)
  ;; The length __alloc was last asked for (-1 if never).
  (func (export "lastAllocLen") (result i32) global.get $lastLen)
  ;; Returns the payload unchanged.
  (func (export "echo") (param $ptr i32) (param $len i32) (result i32)
    local.get $len
    i32.const 16
    i32.shl
    local.get $ptr
    i32.or)
  ;; Returns the 18-byte document at 16.
  (func (export "constant") (param i32 i32) (result i32)
    i32.const 0x00120010)
  ;; Length 0: no value.
  (func (export "nothing") (param i32 i32) (result i32)
    i32.const 0)
  ;; ptr 0xFFF0, len 0x100: ends past the 1-page memory.
  (func (export "oob") (param i32 i32) (result i32)
    i32.const 0x0100FFF0)
  ;; Points at "{bad", which is not JSON.
  (func (export "badJson") (param i32 i32) (result i32)
    i32.const 0x00040040)
  ;; A 40000-byte JSON string at 100: the packed i32 is negative, its length must be
  ;; read as unsigned 16 bits.
  (func (export "big32") (param i32 i32) (result i32)
    i32.const 100
    i32.const 98
    i32.const 40000
    memory.fill
    i32.const 100
    i32.const 34
    i32.store8
    i32.const 40099
    i32.const 34
    i32.store8
    i32.const 0x9C400064)
  ;; The i64 convention: a 100000-byte JSON string at 70000, beyond the first 64 KiB.
  (func (export "big64") (param i32 i32) (result i64)
    memory.size
    i32.const 3
    i32.lt_u
    if
      i32.const 3
      memory.size
      i32.sub
      memory.grow
      drop
    end
    i32.const 70000
    i32.const 97
    i32.const 100000
    memory.fill
    i32.const 70000
    i32.const 34
    i32.store8
    i32.const 169999
    i32.const 34
    i32.store8
    i64.const 0x000186A000011170)
  ;; The payload again, packed as an i64.
  (func (export "echo64") (param $ptr i32) (param $len i32) (result i64)
    local.get $len
    i64.extend_i32_u
    i64.const 32
    i64.shl
    local.get $ptr
    i64.extend_i32_u
    i64.or)
  ;; 10 bytes at 0x10000000: far outside the memory.
  (func (export "oob64") (param i32 i32) (result i64)
    i64.const 0x0000000A10000000))
