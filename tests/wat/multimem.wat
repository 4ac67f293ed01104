;; wat2wasm: --enable-multi-memory --enable-memory64
;; Two memories (multiple memories) for test_multi_memory.c: a run that writes and reads
;; both (pausable, snapshotted mid-run), accessors of memory 1, and grows of each.
;; Compiled with --enable-multi-memory (CMakeLists.txt: fixtures named multimem*).
(module
  (memory $a 1 8)
  (memory $b 1 8)
  (data (memory $b) (i32.const 16) "memory one")
  (data $passive "passive")

  ;; For i in [0, n): a[4i] = i * 3; b[8i] = a[4i] + i * 7 (an i64); grows b by a page
  ;; at i = n / 2; copies a's first 64 bytes into b at 65536 (the new page); returns a
  ;; checksum of both memories' words.
  (func (export "mix") (param $n i32) (result i32)
    (local $i i32) (local $sum i32)
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
        (i32.store $a (i32.shl (local.get $i) (i32.const 2)) (i32.mul (local.get $i) (i32.const 3)))
        (i64.store $b offset=64 (i32.shl (local.get $i) (i32.const 3))
          (i64.extend_i32_u (i32.add (i32.load $a (i32.shl (local.get $i) (i32.const 2)))
                                     (i32.mul (local.get $i) (i32.const 7)))))
        (if (i32.eq (local.get $i) (i32.shr_u (local.get $n) (i32.const 1)))
          (then (drop (memory.grow $b (i32.const 1)))
                (memory.copy $b $a (i32.const 65536) (i32.const 0) (i32.const 64))))
        (local.set $sum (i32.add (i32.mul (local.get $sum) (i32.const 31))
                                 (i32.wrap_i64 (i64.load $b offset=64 (i32.shl (local.get $i) (i32.const 3))))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $next)))
    (i32.add (local.get $sum)
             (i32.add (i32.load8_u $b (i32.const 16))
                      (i32.mul (memory.size $b) (i32.const 1000)))))

  (func (export "poke1") (param i32 i32) (i32.store $b (local.get 0) (local.get 1)))
  (func (export "peek1") (param i32) (result i32) (i32.load $b (local.get 0)))
  ;; b[0] += 1, and memory 1 grows by a page: the new value
  (func (export "bump1") (result i32)
    (drop (memory.grow $b (i32.const 1)))
    (i32.store $b (i32.const 0) (i32.add (i32.load $b (i32.const 0)) (i32.const 1)))
    (i32.load $b (i32.const 0)))
  (func (export "fill1") (param i32 i32 i32) (memory.fill $b (local.get 0) (local.get 1) (local.get 2)))
  (func (export "init1") (param i32 i32 i32) (memory.init $b $passive (local.get 0) (local.get 1) (local.get 2)))
  (func (export "grow0") (param i32) (result i32) (memory.grow $a (local.get 0)))
  (func (export "grow1") (param i32) (result i32) (memory.grow $b (local.get 0)))
  (func (export "size0") (result i32) (memory.size $a))
  (func (export "size1") (result i32) (memory.size $b))
)
