;; One write call of 300,000 bytes ('a'..'z' repeated, a newline every 100 bytes) to stdout,
;; then "end\n" to stderr; and a bad fd and an out-of-range buffer, whose writes return -1
;; (reported on stderr as "bad fd ok" / "bad range ok" when they do).
(module
  (import "ri" "write" (func $write (param i32 i32 i32) (result i32)))
  (import "env" "memory" (memory 8))
  (data (i32.const 16) "end\n")
  (data (i32.const 32) "bad fd ok\n")
  (data (i32.const 48) "bad range ok\n")
  (func (export "_start")
    (local $i i32)
    (loop $fill
      (i32.store8 (i32.add (i32.const 1024) (local.get $i))
        (if (result i32) (i32.eq (i32.rem_u (local.get $i) (i32.const 100)) (i32.const 99))
          (then (i32.const 10))
          (else (i32.add (i32.const 97) (i32.rem_u (local.get $i) (i32.const 26))))))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $fill (i32.lt_u (local.get $i) (i32.const 300000))))
    (drop (call $write (i32.const 1) (i32.const 1024) (i32.const 300000)))
    (if (i32.eq (call $write (i32.const 7) (i32.const 16) (i32.const 4)) (i32.const -1))
      (then (drop (call $write (i32.const 2) (i32.const 32) (i32.const 10)))))
    (if (i32.eq (call $write (i32.const 1) (i32.const 524000) (i32.const 10000)) (i32.const -1))
      (then (drop (call $write (i32.const 2) (i32.const 48) (i32.const 13)))))
    (drop (call $write (i32.const 2) (i32.const 16) (i32.const 4)))))
