;; br_table and metering (tests/unit/test_table_gas.c): the compiler fuses the charge of a
;; br_table's target into the br_table when every target is a GAS or LOOP charge (code.h,
;; "Metering"). Each function is shaped so that the regions have distinct costs, and the
;; tests count the instructions of each region by hand (the unfused semantics).
(module
  ;; switch (i): every target is a forward label (a GAS). Regions (costs):
  ;;   entry: block x5, local.get, br_table                                  7
  ;;   case 0: i32.const, local.set, br                                      3
  ;;   case 1: i32.const, local.set, local.get, i32.const, i32.add, local.set, br   7
  ;;   case 2: i32.const, local.set, nop, nop, br                            5
  ;;   default: i32.const, local.set, nop, end                               4
  ;;   after $done: local.get, end                                           2
  (func (export "sw") (param $i i32) (result i32)
    (local $acc i32)
    (block $done
      (block $d
        (block $c2
          (block $c1
            (block $c0
              local.get $i
              br_table $c0 $c1 $c2 $d)
            i32.const 10
            local.set $acc
            br $done)
          i32.const 21
          local.set $acc
          local.get $acc
          i32.const 1
          i32.add
          local.set $acc
          br $done)
        i32.const 32
        local.set $acc
        nop
        nop
        br $done)
      i32.const 99
      local.set $acc
      nop)
    local.get $acc)

  ;; A state machine: k = 1, 2, ...; stop when k > n; k % 3 selects s0, s1, or the loop
  ;; header itself (a LOOP target). Regions (costs):
  ;;   entry: block, loop                                                     2
  ;;   LOOP: block, block, local.get, i32.const, i32.add, local.tee, local.get, i32.gt_u, br_if   9
  ;;   after br_if: local.get, i32.const, i32.rem_u, br_table                4
  ;;   s0: local.get, i32.const, i32.mul, i32.const, i32.add, local.set, br  7
  ;;   s1: local.get, local.get, i32.xor, local.set, br                      5
  ;;   after $exit: local.get, end                                           2
  (func (export "machine") (param $n i32) (result i32)
    (local $acc i32) (local $k i32)
    (block $exit
      (loop $top
        (block $s1
          (block $s0
            local.get $k
            i32.const 1
            i32.add
            local.tee $k
            local.get $n
            i32.gt_u
            br_if $exit
            local.get $k
            i32.const 3
            i32.rem_u
            br_table $s0 $s1 $top)
          local.get $acc
          i32.const 3
          i32.mul
          i32.const 1
          i32.add
          local.set $acc
          br $top)
        local.get $acc
        local.get $k
        i32.xor
        local.set $acc
        br $top))
    local.get $acc)

  ;; Mixed targets: two forward labels and the function's own label (a return, through a
  ;; stub), all carrying a value. Regions (costs):
  ;;   entry: block, block, i32.const, local.get, br_table                   5
  ;;   after $b0: i32.const, i32.add, end                                    3
  ;;   after $b1: i32.const, i32.mul, end                                    3
  ;; i = 0: (100 + 1) * 2, i = 1: 100 * 2, otherwise 100 (returned by the br_table).
  (func (export "mixed") (param $i i32) (result i32)
    (block $b1 (result i32)
      (block $b0 (result i32)
        i32.const 100
        local.get $i
        br_table $b0 $b1 2)
      i32.const 1
      i32.add)
    i32.const 2
    i32.mul)

  ;; Not a br_table: a loop's back-edge right after a copy: n -= 1; acc = acc * 5 ^ n; last = acc, until n is 0; returns
  ;; last * 2 + acc.
  ;; Regions (costs):
  ;;   entry: block, loop                                                    2
  ;;   LOOP: local.get, i32.eqz, br_if                                       3
  ;;   after br_if: local.get, i32.const, i32.sub, local.set, local.get, i32.const,
  ;;     i32.mul, local.get, i32.xor, local.set, local.get, local.set, br   13
  ;;   after $exit: local.get, i32.const, i32.mul, local.get, i32.add, end  6
  (func (export "copy_loop") (param $n i32) (result i32)
    (local $acc i32) (local $last i32)
    (block $exit
      (loop $top
        local.get $n
        i32.eqz
        br_if $exit
        local.get $n
        i32.const 1
        i32.sub
        local.set $n
        local.get $acc
        i32.const 5
        i32.mul
        local.get $n
        i32.xor
        local.set $acc
        local.get $acc
        local.set $last
        br $top))
    local.get $last
    i32.const 2
    i32.mul
    local.get $acc
    i32.add)

  ;; A loop whose only back-edge is a br_table (every entry the loop): runs until stopped
  ;; (out of gas or interrupted). Regions: entry: loop (1); LOOP: local.get, br_table (2).
  (func (export "spin_table") (param $i i32)
    (loop $top
      local.get $i
      br_table $top $top))
)
