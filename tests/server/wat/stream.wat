;; A streaming program driven by stdin, one command byte at a time, so a test knows exactly
;; what it writes and when:
;;   'l'  three lines "line X\n" to stdout (X: A, B, ... in order) and "tick\n" to stderr
;;   's'  "ack\n", then five lines with a busy loop before each (output made over time)
;;   'e'  as 's', then "bye\n" and the end
;;   end of stdin: "bye\n" and the end
(module
  (import "ri" "write" (func $write (param i32 i32 i32) (result i32)))
  (import "ri" "read" (func $read (param i32 i32) (result i32)))
  (import "env" "memory" (memory 1))
  (global $line (mut i32) (i32.const 0))
  (data (i32.const 64) "ack\n")
  (data (i32.const 80) "line A\n")
  (data (i32.const 96) "bye\n")
  (data (i32.const 112) "tick\n")
  (func $spin (param $n i32)
    (loop $l
      (local.set $n (i32.sub (local.get $n) (i32.const 1)))
      (br_if $l (local.get $n))))
  (func $lines (param $k i32) (param $spin i32)
    (loop $l
      (if (local.get $spin) (then (call $spin (local.get $spin))))
      (i32.store8 (i32.const 85) (i32.add (i32.const 65) (i32.rem_u (global.get $line) (i32.const 26))))
      (global.set $line (i32.add (global.get $line) (i32.const 1)))
      (drop (call $write (i32.const 1) (i32.const 80) (i32.const 7)))
      (local.set $k (i32.sub (local.get $k) (i32.const 1)))
      (br_if $l (local.get $k))))
  (func (export "_start")
    (local $c i32)
    (loop $cmd
      (if (i32.eqz (call $read (i32.const 0) (i32.const 1)))
        (then
          (drop (call $write (i32.const 1) (i32.const 96) (i32.const 4)))
          (return)))
      (local.set $c (i32.load8_u (i32.const 0)))
      (if (i32.eq (local.get $c) (i32.const 108)) ;; 'l'
        (then
          (call $lines (i32.const 3) (i32.const 0))
          (drop (call $write (i32.const 2) (i32.const 112) (i32.const 5)))))
      (if (i32.or (i32.eq (local.get $c) (i32.const 115)) (i32.eq (local.get $c) (i32.const 101))) ;; 's' 'e'
        (then
          (drop (call $write (i32.const 1) (i32.const 64) (i32.const 4)))
          (call $lines (i32.const 5) (i32.const 3000000))))
      (if (i32.eq (local.get $c) (i32.const 101))
        (then
          (drop (call $write (i32.const 1) (i32.const 96) (i32.const 4)))
          (return)))
      (br $cmd))))
