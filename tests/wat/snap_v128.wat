;; v128 globals in a snapshot (test_snapshot_format.c): a mutable and an immutable one
;; between scalar globals, so that a reader that sizes records wrongly reads the i64 after
;; them wrongly.
(module
  (global $a (export "a") (mut i32) (i32.const -3))
  (global $v (export "v") (mut v128) (v128.const i32x4 0x03020100 0x07060504 0x0b0a0908 0x0f0e0d0c))
  (global $k (export "k") v128 (v128.const i64x2 -1 0x0123456789abcdef))
  (global $b (export "b") (mut i64) (i64.const 0x1122334455667788)))
