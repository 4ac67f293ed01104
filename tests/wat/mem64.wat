;; wat2wasm: --enable-multi-memory --enable-memory64
;; A 64-bit memory (memory64) for test_multi_memory.c: i64 addresses, sizes, deltas and
;; lengths, and bounds that an address plus an offset past 2^32 (or 2^64) must not wrap.
(module
  (memory $m i64 1 4)
  (func (export "load") (param i64) (result i32) (i32.load8_u (local.get 0)))
  (func (export "load_far") (param i64) (result i32) (i32.load8_u offset=0xffffffff (local.get 0)))
  (func (export "store") (param i64 i32) (i32.store8 (local.get 0) (local.get 1)))
  (func (export "fill") (param i64 i32 i64) (memory.fill (local.get 0) (local.get 1) (local.get 2)))
  (func (export "grow") (param i64) (result i64) (memory.grow (local.get 0)))
  (func (export "size") (result i64) (memory.size))
  ;; SIMD on a 64-bit memory: the general v128 load and store
  (func (export "v128_copy") (param i64 i64) (v128.store (local.get 1) (v128.load (local.get 0))))
  (func (export "v128_load_far") (param i64) (result i32)
    (i32x4.extract_lane 0 (v128.load32_zero offset=0xffffffff (local.get 0))))
  (func (export "v128_store_lane") (param i64 i32) (v128.store8_lane 0 (local.get 0) (i8x16.splat (local.get 1))))
)
