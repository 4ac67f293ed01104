;; The module of the sandbox-operations benchmark (bench/sandbox_ops.c, bench/sandbox_ops.mjs).
;; Its imports are the original's environment: the sandbox's memory (env.memory, one page at
;; first, as the original creates it), the PRNG (env.__get_random) and one declared host
;; function (env.tick), each import call costing 1 gas.
;;
;;   add(a, b) -> a + b                 the original's add: add(17, 25) = 42, no host call
;;   fib(n)    -> fib(n)                iterative, one env.tick(i) per loop step (the original's
;;                                      fixture): n + 1 host calls, so fib(20) = 6765 for 21 gas
;;   grow(d)   -> memory.grow(d)        the snapshot of 256 pages grows the memory to 16 MiB
;;   fill()    -> r                     r = __get_random(); fills the whole memory with the byte
;;                                      (r & 0xFF) | 1, so every page is resident and non-zero
;;                                      and the PRNG state in the snapshot is not the seed's
(module
  (import "env" "memory" (memory 1))
  (import "env" "__get_random" (func $random (result i32)))
  (import "env" "tick" (func $tick (param i32)))

  (func (export "add") (param $a i32) (param $b i32) (result i32)
    local.get $a
    local.get $b
    i32.add)

  (func (export "fib") (param $n i32) (result i32)
    (local $a i32) (local $b i32) (local $i i32) (local $t i32)
    i32.const 1
    local.set $b
    (block $done
      (loop $step
        local.get $i
        call $tick
        local.get $i
        local.get $n
        i32.ge_s
        br_if $done
        local.get $a
        local.get $b
        i32.add
        local.set $t
        local.get $b
        local.set $a
        local.get $t
        local.set $b
        local.get $i
        i32.const 1
        i32.add
        local.set $i
        br $step))
    local.get $a)

  (func (export "grow") (param $delta i32) (result i32)
    local.get $delta
    memory.grow)

  (func (export "fill") (result i32)
    (local $r i32)
    call $random
    local.set $r
    i32.const 0
    local.get $r
    i32.const 0xFF
    i32.and
    i32.const 1
    i32.or
    memory.size
    i32.const 16
    i32.shl
    memory.fill
    local.get $r))
