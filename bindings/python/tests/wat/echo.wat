;; The JSON convention: __alloc is a bump allocator, echo returns its payload as its result
;; ((len << 32) | ptr in an i64).
(module
  (memory (export "memory") 2)
  (global $next (mut i32) (i32.const 1024))
  (func (export "__alloc") (param $n i32) (result i32) (local $p i32)
    (local.set $p (global.get $next))
    (global.set $next (i32.add (local.get $p) (local.get $n)))
    (local.get $p))
  (func (export "echo") (param $p i32) (param $n i32) (result i64)
    (i64.or (i64.shl (i64.extend_i32_u (local.get $n)) (i64.const 32))
            (i64.extend_i32_u (local.get $p)))))
