;; The module of the ri-sandbox demo (examples/demo.sh, `make demo`).
;;
;; Its state lives in linear memory, which the sandbox provides as env.memory, so a WSNP
;; snapshot holds all of it: a counter, and how many dice were rolled. It reads the
;; sandbox's deterministic time and randomness (env.__get_time, env.__get_random), and
;; `deposit` speaks the JSON convention: the sandbox writes the JSON payload into memory
;; through __alloc and reads a packed (length << 16 | pointer) JSON reply.
;;
;; Memory layout:
;;   0       the counter (i32)
;;   4       dice rolled so far (i32)
;;   512     the pieces of deposit's reply (a data segment)
;;   1024    the payload area that __alloc hands out (up to 31 KiB)
;;   32768   deposit's reply
(module
  (import "env" "memory" (memory 1))
  (import "env" "__get_time" (func $time (result i32)))
  (import "env" "__get_random" (func $random (result i32)))

  ;; 512: {"counter":   523: ,"added":   532: ,"roll":   540: ,"time":
  (data (i32.const 512) "{\"counter\":,\"added\":,\"roll\":,\"time\":")

  ;; increment() -> the counter after adding 1
  (func (export "increment") (result i32)
    (i32.store (i32.const 0) (i32.add (i32.load (i32.const 0)) (i32.const 1)))
    (i32.load (i32.const 0)))

  ;; get() -> the counter
  (func (export "get") (result i32)
    (i32.load (i32.const 0)))

  ;; add(n) -> the counter after adding n (the direct convention with an argument)
  (func (export "add") (param $n i32) (result i32)
    (i32.store (i32.const 0) (i32.add (i32.load (i32.const 0)) (local.get $n)))
    (i32.load (i32.const 0)))

  ;; roll() -> a die, 1..6, from the sandbox's seeded PRNG; counts the rolls
  (func $roll (export "roll") (result i32)
    (i32.store (i32.const 4) (i32.add (i32.load (i32.const 4)) (i32.const 1)))
    (i32.add (i32.rem_u (call $random) (i32.const 6)) (i32.const 1)))

  ;; now() -> the event timestamp the sandbox injects (truncated to 32 bits, as the original)
  (func (export "now") (result i32)
    (call $time))

  ;; spin(): a loop without host calls, to show the limits that stop it
  (func (export "spin")
    (loop $forever (br $forever)))

  ;; __alloc(len) -> where the sandbox may write a payload of len bytes
  (func (export "__alloc") (param $len i32) (result i32)
    (if (i32.gt_u (local.get $len) (i32.const 31744)) (then unreachable))
    (i32.const 1024))

  ;; Copies n bytes from src to dst; returns dst + n.
  (func $copy (param $dst i32) (param $src i32) (param $n i32) (result i32)
    (memory.copy (local.get $dst) (local.get $src) (local.get $n))
    (i32.add (local.get $dst) (local.get $n)))

  ;; Writes v (unsigned) in decimal at dst; returns the end.
  (func $put_u32 (param $dst i32) (param $v i32) (result i32)
    (local $digits i32) (local $t i32) (local $p i32)
    (local.set $t (local.get $v))
    (local.set $digits (i32.const 1))
    (block $counted
      (loop $count
        (br_if $counted (i32.lt_u (local.get $t) (i32.const 10)))
        (local.set $t (i32.div_u (local.get $t) (i32.const 10)))
        (local.set $digits (i32.add (local.get $digits) (i32.const 1)))
        (br $count)))
    (local.set $p (i32.add (local.get $dst) (local.get $digits)))
    (loop $write
      (local.set $p (i32.sub (local.get $p) (i32.const 1)))
      (i32.store8 (local.get $p) (i32.add (i32.const 48) (i32.rem_u (local.get $v) (i32.const 10))))
      (local.set $v (i32.div_u (local.get $v) (i32.const 10)))
      (br_if $write (i32.gt_u (local.get $p) (local.get $dst))))
    (i32.add (local.get $dst) (local.get $digits)))

  ;; Writes v (signed) in decimal at dst; returns the end.
  (func $put_i32 (param $dst i32) (param $v i32) (result i32)
    (if (result i32) (i32.lt_s (local.get $v) (i32.const 0))
      (then
        (i32.store8 (local.get $dst) (i32.const 45)) ;; '-'
        (call $put_u32 (i32.add (local.get $dst) (i32.const 1)) (i32.sub (i32.const 0) (local.get $v))))
      (else (call $put_u32 (local.get $dst) (local.get $v)))))

  ;; deposit(ptr, len): the JSON convention. Adds the first number in the payload (e.g.
  ;; {"amount": 5}) to the counter, rolls a die, and replies
  ;; {"counter":C,"added":N,"roll":R,"time":T}.
  (func (export "deposit") (param $ptr i32) (param $len i32) (result i32)
    (local $i i32) (local $end i32) (local $c i32) (local $amount i32) (local $seen i32)
    (local $roll i32) (local $out i32)
    (local.set $i (local.get $ptr))
    (local.set $end (i32.add (local.get $ptr) (local.get $len)))
    (block $scanned
      (loop $scan
        (br_if $scanned (i32.ge_u (local.get $i) (local.get $end)))
        (local.set $c (i32.sub (i32.load8_u (local.get $i)) (i32.const 48)))
        (if (i32.lt_u (local.get $c) (i32.const 10))
          (then
            (local.set $amount (i32.add (i32.mul (local.get $amount) (i32.const 10)) (local.get $c)))
            (local.set $seen (i32.const 1)))
          (else (br_if $scanned (local.get $seen))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $scan)))
    (i32.store (i32.const 0) (i32.add (i32.load (i32.const 0)) (local.get $amount)))
    (local.set $roll (call $roll))
    (local.set $out (call $copy (i32.const 32768) (i32.const 512) (i32.const 11)))
    (local.set $out (call $put_u32 (local.get $out) (i32.load (i32.const 0))))
    (local.set $out (call $copy (local.get $out) (i32.const 523) (i32.const 9)))
    (local.set $out (call $put_u32 (local.get $out) (local.get $amount)))
    (local.set $out (call $copy (local.get $out) (i32.const 532) (i32.const 8)))
    (local.set $out (call $put_u32 (local.get $out) (local.get $roll)))
    (local.set $out (call $copy (local.get $out) (i32.const 540) (i32.const 8)))
    (local.set $out (call $put_i32 (local.get $out) (call $time)))
    (i32.store8 (local.get $out) (i32.const 125)) ;; '}'
    (local.set $out (i32.add (local.get $out) (i32.const 1)))
    (i32.or (i32.shl (i32.sub (local.get $out) (i32.const 32768)) (i32.const 16)) (i32.const 32768)))
)
