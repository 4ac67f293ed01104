;; Fixtures for tests/unit/test_exec.c: metering, call depth, interruption, NaNs.
(module
  (memory (export "memory") 1 4)

  ;; Straight-line code: one basic block.
  (func (export "add3") (param i32 i32 i32) (result i32)
    local.get 0
    local.get 1
    i32.add
    local.get 2
    i32.add)

  ;; Counts n down to zero: a loop whose body is one basic block per iteration.
  (func (export "countdown") (param $n i32) (result i32)
    (local $iters i32)
    (block $done
      (loop $again
        local.get $n
        i32.eqz
        br_if $done
        local.get $n
        i32.const 1
        i32.sub
        local.set $n
        local.get $iters
        i32.const 1
        i32.add
        local.set $iters
        br $again))
    local.get $iters)

  ;; Recursion n deep: uses n + 1 frames.
  (func $depth (export "depth") (param $n i32) (result i32)
    local.get $n
    i32.eqz
    if (result i32)
      i32.const 0
    else
      local.get $n
      i32.const 1
      i32.sub
      call $depth
      i32.const 1
      i32.add
    end)

  ;; Never returns: only gas or an interrupt stops it.
  (func (export "spin")
    (loop $forever
      br $forever))

  ;; Never returns, and calls a function in its loop.
  (func $nothing)
  (func (export "spin_calls")
    (loop $forever
      call $nothing
      br $forever))

  ;; Bulk memory: costs in proportion to the length.
  (func (export "fill") (param $dst i32) (param $val i32) (param $len i32)
    local.get $dst
    local.get $val
    local.get $len
    memory.fill)

  ;; Floats: arithmetic canonicalises NaNs (when asked); bit operations never do.
  (func (export "f32_add") (param f32 f32) (result f32)
    local.get 0
    local.get 1
    f32.add)
  (func (export "f64_mul") (param f64 f64) (result f64)
    local.get 0
    local.get 1
    f64.mul)
  (func (export "f32_neg") (param f32) (result f32)
    local.get 0
    f32.neg)
  (func (export "f64_sqrt") (param f64) (result f64)
    local.get 0
    f64.sqrt)
  (func (export "f32_store_load") (param f32) (result f32)
    i32.const 0
    local.get 0
    f32.store
    i32.const 0
    f32.load)
)
