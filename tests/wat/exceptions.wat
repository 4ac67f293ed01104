;; wat2wasm: --enable-exceptions
;; Exception handling (test_exceptions.c): throws that unwind frames to a catch two calls
;; down, a delegate to the caller, payloads of one and two values, catch_all, rethrow of a
;; caught exception, an uncaught throw, and a throw in a run nested under a host function.
(module
  (import "env" "reenter" (func $reenter (param i32) (result i32)))
  (import "env" "churn" (func $churn (param i32) (result i32)))
  (tag $e (param i32))
  (tag $f (param i32 i64))
  (tag $g)
  (memory 1)
  (global $acc (mut i64) (i64.const 0))

  ;; i % 4: 0 throws $e(i), 1 throws $f(i, 3i), 2 throws $g, 3 returns 2i
  (func $thrower (param $i i32) (result i32)
    (block $b3 (block $b2 (block $b1 (block $b0
      (br_table $b0 $b1 $b2 $b3 (i32.and (local.get $i) (i32.const 3))))
      (throw $e (local.get $i)))
      (throw $f (local.get $i) (i64.mul (i64.extend_i32_u (local.get $i)) (i64.const 3))))
      (throw $g))
    (i32.mul (local.get $i) (i32.const 2)))

  ;; a frame between the throw and its catch: its try hands everything to the caller
  (func $middle (param $i i32) (result i32)
    (try (result i32)
      (do (call $thrower (local.get $i)))
      (delegate 0)))

  (func $step (param $i i32) (result i32)
    (try (result i32)
      (do (i32.add (call $middle (local.get $i)) (i32.const 1)))
      (catch $e (i32.add (i32.const 100)))
      (catch $f (i32.add (i32.wrap_i64) (i32.const 200)) (i32.add))
      (catch_all (i32.const 300))))

  (func (export "run") (param $n i32) (result i64)
    (local $i i32)
    (loop $l
      (global.set $acc (i64.add (i64.mul (global.get $acc) (i64.const 31))
                                (i64.extend_i32_u (call $step (local.get $i)))))
      (i32.store (i32.shl (i32.and (local.get $i) (i32.const 255)) (i32.const 2)) (local.get $i))
      (br_if $l (i32.lt_u (local.tee $i (i32.add (local.get $i) (i32.const 1))) (local.get $n))))
    (global.get $acc))

  ;; catch_all keeps the exception for the rethrow; the inner try catches it as $e
  (func $rethrower (param $i i32) (result i32)
    (try (result i32)
      (do (call $thrower (local.get $i)))
      (catch_all
        (try (result i32)
          (do (rethrow 1))
          (catch $e)
          (catch_all (i32.const -1))))))

  (func (export "rethrow_loop") (param $n i32) (result i32)
    (local $i i32) (local $sum i32)
    (loop $l
      (local.set $sum (i32.add (local.get $sum) (call $rethrower (i32.shl (local.get $i) (i32.const 2)))))
      (br_if $l (i32.lt_u (local.tee $i (i32.add (local.get $i) (i32.const 1))) (local.get $n))))
    (local.get $sum))

  (func (export "throw_uncaught") (param $i i32) (result i32)
    (throw $e (local.get $i)))

  ;; throws and catches n exceptions
  (func (export "throw_many") (param $n i32) (result i32)
    (local $i i32)
    (loop $l
      (try (do (throw $e (local.get $i))) (catch $e (drop)))
      (br_if $l (i32.lt_u (local.tee $i (i32.add (local.get $i) (i32.const 1))) (local.get $n))))
    (local.get $n))

  ;; a kept exception survives a host call whose nested run throws many (the host function
  ;; calls throw_many): the rethrow after it finds it whole
  (func (export "keep_across_host") (param $i i32) (result i32)
    (try (result i32)
      (do (throw $e (local.get $i)))
      (catch_all
        (drop (call $churn (i32.const 300)))
        (try (result i32) (do (rethrow 1)) (catch $e)))))

  ;; the host function calls throw_uncaught: its failure is a trap here, not an exception
  (func (export "via_host") (param $i i32) (result i32)
    (try (result i32)
      (do (call $reenter (local.get $i)))
      (catch_all (i32.const 7))))
)
