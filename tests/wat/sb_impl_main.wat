;; Fixture for tests/unit/test_sandbox_impl_*.c: imports the sandbox memory and the
;; system functions; exports one function per behaviour under test.
(module
  (import "env" "memory" (memory 1))
  (import "env" "__get_time" (func $time (result i32)))
  (import "env" "__get_random" (func $random (result i32)))

  (type $ii (func (param i32) (result i32)))
  (type $v_i (func (result i32)))
  (table 2 funcref)
  (elem (i32.const 0) $id)

  (func $id (param i32) (result i32) local.get 0)

  (func (export "add") (param i32 i32) (result i32)
    local.get 0 local.get 1 i32.add)
  (func (export "add64") (param i64 i64) (result i64)
    local.get 0 local.get 1 i64.add)
  (func (export "mulf32") (param f32 f32) (result f32)
    local.get 0 local.get 1 f32.mul)
  (func (export "divf64") (param f64 f64) (result f64)
    local.get 0 local.get 1 f64.div)
  (func (export "pair") (result i32 i64) i32.const 7 i64.const -8)
  (func (export "nothing"))

  ;; fib(n) iteratively, one __get_time call per step: n + 1 import calls.
  (func (export "fib") (param $n i32) (result i32)
    (local $a i32) (local $b i32) (local $i i32) (local $t i32)
    i32.const 0 local.set $a
    i32.const 1 local.set $b
    (block $done
      (loop $step
        call $time drop
        local.get $i local.get $n i32.ge_s br_if $done
        local.get $a local.get $b i32.add local.set $t
        local.get $b local.set $a
        local.get $t local.set $b
        local.get $i i32.const 1 i32.add local.set $i
        br $step))
    local.get $a)

  (func $fibr (export "fibr") (param $n i32) (result i32)
    local.get $n i32.const 2 i32.lt_s
    if (result i32) local.get $n
    else
      local.get $n i32.const 1 i32.sub call $fibr
      local.get $n i32.const 2 i32.sub call $fibr
      i32.add
    end)

  (func (export "time") (result i32) call $time)
  (func (export "random") (result i32) call $random)
  (func (export "random2") (result i32) call $random drop call $random)

  ;; Loops forever: without any call, and with an import call per iteration.
  (func (export "spin") (loop $l br $l))
  (func (export "spin_host") (loop $l call $time drop br $l))

  (func (export "grow") (param i32) (result i32) local.get 0 memory.grow)
  (func (export "pages") (result i32) memory.size)

  ;; A counter at address 16 (memory, which WSNP v1 holds).
  (func (export "incr") (result i32)
    i32.const 16
    i32.const 16 i32.load i32.const 1 i32.add
    i32.store
    i32.const 16 i32.load)
  ;; Random number stored at address 32.
  (func (export "store_random") (result i32)
    i32.const 32 call $random i32.store
    i32.const 32 i32.load)

  ;; Traps.
  (func (export "div") (param i32 i32) (result i32) local.get 0 local.get 1 i32.div_s)
  (func (export "boom") unreachable)
  (func (export "oob") (result i32) i32.const -4 i32.load)
  (func $deep (export "deep") (param i32) (result i32)
    local.get 0 i32.const 1 i32.add call $deep)
  (func (export "trunc") (param f64) (result i32) local.get 0 i32.trunc_f64_s)
  (func (export "trunc_nan") (result i32) f64.const nan i32.trunc_f64_s)
  (func (export "call_null") (result i32) i32.const 5 i32.const 1 call_indirect (type $ii))
  (func (export "call_oob") (result i32) i32.const 5 i32.const 9 call_indirect (type $ii))
  (func (export "call_mismatch") (result i32) i32.const 0 call_indirect (type $v_i))

  ;; JSON convention: a bump allocator whose pointer lives at address 0 (start 1024).
  (func (export "__alloc") (param $len i32) (result i32)
    (local $p i32)
    i32.const 0 i32.load local.set $p
    local.get $p i32.eqz if i32.const 1024 local.set $p end
    i32.const 0 local.get $p local.get $len i32.add i32.store
    local.get $p)
  ;; Echo: the payload itself is the result, packed 16+16.
  (func (export "echo") (param $ptr i32) (param $len i32) (result i32)
    local.get $len i32.const 16 i32.shl local.get $ptr i32.or)
  ;; Echo, packed 32+32 in an i64.
  (func (export "echo64") (param $ptr i32) (param $len i32) (result i64)
    local.get $len i64.extend_i32_u i64.const 32 i64.shl
    local.get $ptr i64.extend_i32_u i64.or)
  ;; Copies the payload above 64 KiB (growing the memory) and returns it there, packed in an i64.
  (func (export "echo_high") (param $ptr i32) (param $len i32) (result i64)
    i32.const 1 memory.grow drop
    i32.const 70000 local.get $ptr local.get $len memory.copy
    local.get $len i64.extend_i32_u i64.const 32 i64.shl
    i64.const 70000 i64.or)
  ;; Returns a result that lies outside the memory.
  (func (export "bad_result") (param i32 i32) (result i32) i32.const 0x7FFFFFF0)
  ;; Returns bytes that are not JSON ("{{" at address 8).
  (func (export "not_json") (param i32 i32) (result i32)
    i32.const 8 i32.const 0x7B7B i32.store16
    i32.const 0x00020008)
  (func (export "no_value") (param i32 i32))
  (func (export "wrong_shape") (param i32) (result i32) local.get 0)
)
