;; Reads a decimal byte count N from stdin (a multiple of 10), fills N bytes at 65536 with
;; "a€😀é" repeated (1 + 3 + 4 + 2 bytes: event boundaries every 1,024 bytes would fall inside
;; characters), writes them to stdout in ONE ri.write call, then "done\n" to stderr.
(module
  (import "ri" "write" (func $write (param i32 i32 i32) (result i32)))
  (import "ri" "read" (func $read (param i32 i32) (result i32)))
  (import "env" "memory" (memory 1))
  (data (i32.const 32) "done\n")
  (data (i32.const 48) "a\e2\82\ac\f0\9f\98\80\c3\a9")
  (func (export "_start")
    (local $n i32) (local $i i32) (local $len i32) (local $k i32) (local $got i32) (local $c i32)
    (local.set $got (call $read (i32.const 0) (i32.const 16)))
    (block $done
      (loop $digits
        (br_if $done (i32.ge_u (local.get $i) (local.get $got)))
        (local.set $c (i32.load8_u (local.get $i)))
        (br_if $done (i32.or (i32.lt_u (local.get $c) (i32.const 48)) (i32.gt_u (local.get $c) (i32.const 57))))
        (local.set $n (i32.add (i32.mul (local.get $n) (i32.const 10)) (i32.sub (local.get $c) (i32.const 48))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $digits)))
    ;; room for 65536 + N bytes
    (if (i32.lt_s (memory.grow (i32.sub (i32.div_u (i32.add (local.get $n) (i32.const 131071)) (i32.const 65536))
                                        (memory.size)))
                  (i32.const 0))
      (then unreachable))
    (memory.copy (i32.const 65536) (i32.const 48) (i32.const 10))
    (local.set $len (i32.const 10))
    (block $full
      (loop $double
        (br_if $full (i32.ge_u (local.get $len) (local.get $n)))
        (local.set $k (local.get $len))
        (if (i32.gt_u (local.get $k) (i32.sub (local.get $n) (local.get $len)))
          (then (local.set $k (i32.sub (local.get $n) (local.get $len)))))
        (memory.copy (i32.add (i32.const 65536) (local.get $len)) (i32.const 65536) (local.get $k))
        (local.set $len (i32.add (local.get $len) (local.get $k)))
        (br $double)))
    (drop (call $write (i32.const 1) (i32.const 65536) (local.get $n)))
    (drop (call $write (i32.const 2) (i32.const 32) (i32.const 5)))))
