;; Array element loads (tests/unit/test_index_load.c): the compiler fuses i32.load with the
;; address a + (i << k) or (i << k) + base computed just before it into a temporary
;; (I32_LOAD_SX, I32_LOAD_SXI), and ((v & mask) << k) + base (I32_LOAD_MSXI). The address wraps around 2^32 as i32.add and i32.shl do,
;; and i32.shl takes its count modulo 32.
(module
  (memory (export "memory") 1)
  ;; mem32[a + (i << 2) + 4]
  (func (export "elem") (param $a i32) (param $i i32) (result i32)
    local.get $a
    local.get $i
    i32.const 2
    i32.shl
    i32.add
    i32.load offset=4)
  ;; mem32[(i << 34) + 1024]: the count is 34 mod 32 = 2
  (func (export "elem_const") (param $a i32) (param $i i32) (result i32)
    local.get $i
    i32.const 34
    i32.shl
    i32.const 1024
    i32.add
    i32.load)
  ;; Table lookups (I32_LOAD_MSXI): mem32[((v ^ b) & 255) << 2 + 2048 + 4], and with a
  ;; mask of -16 and a count of 34 (2): mem32[((v & -16) << 2) + 16], wrapping.
  (func (export "lookup") (param $v i32) (param $b i32) (result i32)
    local.get $v
    local.get $b
    i32.xor
    i32.const 255
    i32.and
    i32.const 2
    i32.shl
    i32.const 2048
    i32.add
    i32.load offset=4)
  (func (export "lookup_wrap") (param $v i32) (param $b i32) (result i32)
    local.get $v
    i32.const -16
    i32.and
    i32.const 34
    i32.shl
    i32.const 16
    i32.add
    i32.load)
  ;; The address kept in a local (local.tee) as well: not fused away; returns the element
  ;; plus the address.
  (func (export "elem_tee") (param $a i32) (param $i i32) (result i32)
    (local $p i32)
    local.get $a
    local.get $i
    i32.const 2
    i32.shl
    i32.add
    local.tee $p
    i32.load
    local.get $p
    i32.add)
  ;; sum of mem32[a + 4j], j < n: a loop over an array
  (func (export "sum") (param $a i32) (param $n i32) (result i32)
    (local $j i32) (local $s i32)
    (block $done
      (loop $l
        local.get $j
        local.get $n
        i32.ge_u
        br_if $done
        local.get $a
        local.get $j
        i32.const 2
        i32.shl
        i32.add
        i32.load
        local.get $s
        i32.xor
        local.set $s
        local.get $j
        i32.const 1
        i32.add
        local.set $j
        br $l))
    local.get $s)
)
