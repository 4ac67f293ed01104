;; Fork, rollback and incremental checkpoint fixture (issue 5): a memory that can grow
;; to 4 GiB, a mutable global, a funcref table, a passive data segment and the PRNG,
;; and ways to fail after writing (trap, endless loop, growing past the limit).
(module
  (import "env" "__get_random" (func $random (result i32)))
  (memory (export "memory") 1 65536)
  (global $g (mut i32) (i32.const 0))
  (table $t 2 100 funcref)
  (elem (i32.const 0) $one)
  (elem declare func $two)
  (data $blob "fork")
  (type $ret (func (result i32)))
  (func $one (result i32) i32.const 1)
  (func $two (result i32) i32.const 2)
  (func (export "grow") (param i32) (result i32) (memory.grow (local.get 0)))
  (func (export "pages") (result i32) memory.size)
  (func (export "store") (param i32 i32) (i32.store (local.get 0) (local.get 1)))
  (func (export "load") (param i32) (result i32) (i32.load (local.get 0)))
  (func (export "g") (result i32) global.get $g)
  ;; Stores val at the start of `count` pages: first, first + stride, ...
  (func (export "touch") (param $first i32) (param $count i32) (param $stride i32) (param $val i32)
    (local $k i32)
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $k) (local.get $count)))
        (i32.store
          (i32.mul (i32.add (local.get $first) (i32.mul (local.get $k) (local.get $stride))) (i32.const 65536))
          (local.get $val))
        (local.set $k (i32.add (local.get $k) (i32.const 1)))
        (br $next))))
  ;; Sum of the first word of every page (what a replay compares besides snapshots).
  (func (export "sum") (result i32)
    (local $p i32) (local $s i32)
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $p) (memory.size)))
        (local.set $s (i32.add (local.get $s) (i32.load (i32.mul (local.get $p) (i32.const 65536)))))
        (local.set $p (i32.add (local.get $p) (i32.const 1)))
        (br $next)))
    (local.get $s))
  ;; One step of a computation in memory, the global, the table and the PRNG.
  (func (export "mix") (param $page i32) (result i32)
    (local $a i32)
    (local.set $a (i32.add (i32.mul (local.get $page) (i32.const 65536)) (i32.const 16)))
    (i32.store (local.get $a) (i32.add (i32.mul (i32.load (local.get $a)) (i32.const 31)) (call $random)))
    (global.set $g (i32.add (global.get $g) (i32.load (local.get $a))))
    (table.set $t (i32.const 1) (ref.func $two))
    (global.get $g))
  (func (export "dropData") data.drop $blob)
  (func (export "tableGrow") (param i32) (result i32) (table.grow $t (ref.null func) (local.get 0)))
  (func (export "tableSize") (result i32) table.size $t)
  ;; Failures after changing state.
  (func (export "failAfterWrite") (param $page i32)
    (i32.store (i32.mul (local.get $page) (i32.const 65536)) (i32.const 99))
    (global.set $g (i32.const 12345))
    (drop (call $random))
    (drop (table.grow $t (ref.func $two) (i32.const 3)))
    unreachable)
  (func (export "spinAfterWrite") (param $page i32)
    (i32.store (i32.mul (local.get $page) (i32.const 65536)) (i32.const 77))
    (global.set $g (i32.const 777))
    (drop (call $random))
    (loop $forever (br $forever)))
  (func (export "growAfterWrite") (param $page i32) (param $by i32)
    (i32.store (i32.mul (local.get $page) (i32.const 65536)) (i32.const 55))
    (global.set $g (i32.const 555))
    (drop (memory.grow (local.get $by)))
    (i32.store (i32.sub (i32.mul (memory.size) (i32.const 65536)) (i32.const 4)) (i32.const 66))))
