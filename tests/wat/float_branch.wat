;; Float compare-and-branch (tests/unit/test_float_branch.c): the compiler fuses f32/f64
;; lt, le, gt, ge (gt and ge as lt and le with the operands swapped) into br_if (BR_IF_<cmp>),
;; into if (the negated branch, BR_IFNOT_<cmp>), and the same on the compare's i32.eqz.
;; <type>_<cmp>_<form>(a, b): br, if: 1 when a <cmp> b, else 0; nbr, nif (on i32.eqz of the
;; compare): 1 when not a <cmp> b (a NaN makes every one of these compares false).
(module
  (func (export "f32_lt_br") (param $a f32) (param $b f32) (result i32)
    (block $yes
      local.get $a
      local.get $b
      f32.lt
      br_if $yes
      i32.const 0
      return)
    i32.const 1)
  (func (export "f32_lt_nbr") (param $a f32) (param $b f32) (result i32)
    (block $yes
      local.get $a
      local.get $b
      f32.lt
      i32.eqz
      br_if $yes
      i32.const 0
      return)
    i32.const 1)
  (func (export "f32_lt_if") (param $a f32) (param $b f32) (result i32)
    local.get $a
    local.get $b
    f32.lt
    if (result i32)
      i32.const 1
    else
      i32.const 0
    end)
  (func (export "f32_lt_nif") (param $a f32) (param $b f32) (result i32)
    local.get $a
    local.get $b
    f32.lt
    i32.eqz
    if (result i32)
      i32.const 1
    else
      i32.const 0
    end)
  (func (export "f32_le_br") (param $a f32) (param $b f32) (result i32)
    (block $yes
      local.get $a
      local.get $b
      f32.le
      br_if $yes
      i32.const 0
      return)
    i32.const 1)
  (func (export "f32_le_nbr") (param $a f32) (param $b f32) (result i32)
    (block $yes
      local.get $a
      local.get $b
      f32.le
      i32.eqz
      br_if $yes
      i32.const 0
      return)
    i32.const 1)
  (func (export "f32_le_if") (param $a f32) (param $b f32) (result i32)
    local.get $a
    local.get $b
    f32.le
    if (result i32)
      i32.const 1
    else
      i32.const 0
    end)
  (func (export "f32_le_nif") (param $a f32) (param $b f32) (result i32)
    local.get $a
    local.get $b
    f32.le
    i32.eqz
    if (result i32)
      i32.const 1
    else
      i32.const 0
    end)
  (func (export "f32_gt_br") (param $a f32) (param $b f32) (result i32)
    (block $yes
      local.get $a
      local.get $b
      f32.gt
      br_if $yes
      i32.const 0
      return)
    i32.const 1)
  (func (export "f32_gt_nbr") (param $a f32) (param $b f32) (result i32)
    (block $yes
      local.get $a
      local.get $b
      f32.gt
      i32.eqz
      br_if $yes
      i32.const 0
      return)
    i32.const 1)
  (func (export "f32_gt_if") (param $a f32) (param $b f32) (result i32)
    local.get $a
    local.get $b
    f32.gt
    if (result i32)
      i32.const 1
    else
      i32.const 0
    end)
  (func (export "f32_gt_nif") (param $a f32) (param $b f32) (result i32)
    local.get $a
    local.get $b
    f32.gt
    i32.eqz
    if (result i32)
      i32.const 1
    else
      i32.const 0
    end)
  (func (export "f32_ge_br") (param $a f32) (param $b f32) (result i32)
    (block $yes
      local.get $a
      local.get $b
      f32.ge
      br_if $yes
      i32.const 0
      return)
    i32.const 1)
  (func (export "f32_ge_nbr") (param $a f32) (param $b f32) (result i32)
    (block $yes
      local.get $a
      local.get $b
      f32.ge
      i32.eqz
      br_if $yes
      i32.const 0
      return)
    i32.const 1)
  (func (export "f32_ge_if") (param $a f32) (param $b f32) (result i32)
    local.get $a
    local.get $b
    f32.ge
    if (result i32)
      i32.const 1
    else
      i32.const 0
    end)
  (func (export "f32_ge_nif") (param $a f32) (param $b f32) (result i32)
    local.get $a
    local.get $b
    f32.ge
    i32.eqz
    if (result i32)
      i32.const 1
    else
      i32.const 0
    end)
  (func (export "f64_lt_br") (param $a f64) (param $b f64) (result i32)
    (block $yes
      local.get $a
      local.get $b
      f64.lt
      br_if $yes
      i32.const 0
      return)
    i32.const 1)
  (func (export "f64_lt_nbr") (param $a f64) (param $b f64) (result i32)
    (block $yes
      local.get $a
      local.get $b
      f64.lt
      i32.eqz
      br_if $yes
      i32.const 0
      return)
    i32.const 1)
  (func (export "f64_lt_if") (param $a f64) (param $b f64) (result i32)
    local.get $a
    local.get $b
    f64.lt
    if (result i32)
      i32.const 1
    else
      i32.const 0
    end)
  (func (export "f64_lt_nif") (param $a f64) (param $b f64) (result i32)
    local.get $a
    local.get $b
    f64.lt
    i32.eqz
    if (result i32)
      i32.const 1
    else
      i32.const 0
    end)
  (func (export "f64_le_br") (param $a f64) (param $b f64) (result i32)
    (block $yes
      local.get $a
      local.get $b
      f64.le
      br_if $yes
      i32.const 0
      return)
    i32.const 1)
  (func (export "f64_le_nbr") (param $a f64) (param $b f64) (result i32)
    (block $yes
      local.get $a
      local.get $b
      f64.le
      i32.eqz
      br_if $yes
      i32.const 0
      return)
    i32.const 1)
  (func (export "f64_le_if") (param $a f64) (param $b f64) (result i32)
    local.get $a
    local.get $b
    f64.le
    if (result i32)
      i32.const 1
    else
      i32.const 0
    end)
  (func (export "f64_le_nif") (param $a f64) (param $b f64) (result i32)
    local.get $a
    local.get $b
    f64.le
    i32.eqz
    if (result i32)
      i32.const 1
    else
      i32.const 0
    end)
  (func (export "f64_gt_br") (param $a f64) (param $b f64) (result i32)
    (block $yes
      local.get $a
      local.get $b
      f64.gt
      br_if $yes
      i32.const 0
      return)
    i32.const 1)
  (func (export "f64_gt_nbr") (param $a f64) (param $b f64) (result i32)
    (block $yes
      local.get $a
      local.get $b
      f64.gt
      i32.eqz
      br_if $yes
      i32.const 0
      return)
    i32.const 1)
  (func (export "f64_gt_if") (param $a f64) (param $b f64) (result i32)
    local.get $a
    local.get $b
    f64.gt
    if (result i32)
      i32.const 1
    else
      i32.const 0
    end)
  (func (export "f64_gt_nif") (param $a f64) (param $b f64) (result i32)
    local.get $a
    local.get $b
    f64.gt
    i32.eqz
    if (result i32)
      i32.const 1
    else
      i32.const 0
    end)
  (func (export "f64_ge_br") (param $a f64) (param $b f64) (result i32)
    (block $yes
      local.get $a
      local.get $b
      f64.ge
      br_if $yes
      i32.const 0
      return)
    i32.const 1)
  (func (export "f64_ge_nbr") (param $a f64) (param $b f64) (result i32)
    (block $yes
      local.get $a
      local.get $b
      f64.ge
      i32.eqz
      br_if $yes
      i32.const 0
      return)
    i32.const 1)
  (func (export "f64_ge_if") (param $a f64) (param $b f64) (result i32)
    local.get $a
    local.get $b
    f64.ge
    if (result i32)
      i32.const 1
    else
      i32.const 0
    end)
  (func (export "f64_ge_nif") (param $a f64) (param $b f64) (result i32)
    local.get $a
    local.get $b
    f64.ge
    i32.eqz
    if (result i32)
      i32.const 1
    else
      i32.const 0
    end)
  ;; The compare's result also kept in a local (local.tee): not fused away.
  (func (export "f64_lt_tee") (param $a f64) (param $b f64) (result i32)
    (local $r i32)
    (block $yes
      local.get $a
      local.get $b
      f64.lt
      local.tee $r
      i32.eqz
      br_if $yes
      local.get $r
      i32.const 10
      i32.add
      return)
    local.get $r
    i32.const 20
    i32.add)

  ;; A loop on a float compare: halves x until x < limit; returns the number of halvings.
  ;; Gas: entry (block, loop) 2; per halving (LOOP: local.get, local.get, f64.lt, br_if) 4
  ;; and (local.get, f64.const, f64.mul, local.set, local.get, i32.const, i32.add,
  ;; local.set, br) 9; the last LOOP 4; then local.get, end 2.
  (func (export "halvings") (param $x f64) (param $limit f64) (result i32)
    (local $n i32)
    (block $done
      (loop $l
        local.get $x
        local.get $limit
        f64.lt
        br_if $done
        local.get $x
        f64.const 0.5
        f64.mul
        local.set $x
        local.get $n
        i32.const 1
        i32.add
        local.set $n
        br $l))
    local.get $n)
)
