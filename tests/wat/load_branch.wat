;; Conditional branches on a value loaded just before them (tests/unit/test_load_branch.c):
;; the compiler fuses the load into the branch (code.h, RI_CODE_LOADBR_OPS) for i32.load and
;; i32.load8_u, address local or local + constant (wrapping as i32.add does), tested against a
;; local, a constant, or zero (br_if on the value itself, on its i32.eqz), taken or not, and
;; for `if` (the negated branch), a loop's back-edge (strlen) and the load's trap.
;; <load>_<address>_<test>(p, b): 1 when the test holds, else 0. The load reads offset 4 of
;; the address (p, or p + 8). Gas: block, the address, the load, the test, br_if, then
;; i32.const and return or end.
(module
  (memory (export "memory") 1)
  (func (export "load_p_eq_s") (param $p i32) (param $b i32) (result i32)
    (block $taken
      local.get $p
      i32.load offset=4
      local.get $b
      i32.eq
      br_if $taken
      i32.const 0
      return)
    i32.const 1)
  (func (export "load_p_ne_s") (param $p i32) (param $b i32) (result i32)
    (block $taken
      local.get $p
      i32.load offset=4
      local.get $b
      i32.ne
      br_if $taken
      i32.const 0
      return)
    i32.const 1)
  (func (export "load_p_eq_i") (param $p i32) (param $b i32) (result i32)
    (block $taken
      local.get $p
      i32.load offset=4
      i32.const 7
      i32.eq
      br_if $taken
      i32.const 0
      return)
    i32.const 1)
  (func (export "load_p_ne_i") (param $p i32) (param $b i32) (result i32)
    (block $taken
      local.get $p
      i32.load offset=4
      i32.const 7
      i32.ne
      br_if $taken
      i32.const 0
      return)
    i32.const 1)
  (func (export "load_p_eqz") (param $p i32) (param $b i32) (result i32)
    (block $taken
      local.get $p
      i32.load offset=4
      i32.eqz
      br_if $taken
      i32.const 0
      return)
    i32.const 1)
  (func (export "load_p_nz") (param $p i32) (param $b i32) (result i32)
    (block $taken
      local.get $p
      i32.load offset=4
      br_if $taken
      i32.const 0
      return)
    i32.const 1)
  (func (export "load_xi_eq_s") (param $p i32) (param $b i32) (result i32)
    (block $taken
      local.get $p
      i32.const 8
      i32.add
      i32.load offset=4
      local.get $b
      i32.eq
      br_if $taken
      i32.const 0
      return)
    i32.const 1)
  (func (export "load_xi_ne_s") (param $p i32) (param $b i32) (result i32)
    (block $taken
      local.get $p
      i32.const 8
      i32.add
      i32.load offset=4
      local.get $b
      i32.ne
      br_if $taken
      i32.const 0
      return)
    i32.const 1)
  (func (export "load_xi_eq_i") (param $p i32) (param $b i32) (result i32)
    (block $taken
      local.get $p
      i32.const 8
      i32.add
      i32.load offset=4
      i32.const 7
      i32.eq
      br_if $taken
      i32.const 0
      return)
    i32.const 1)
  (func (export "load_xi_ne_i") (param $p i32) (param $b i32) (result i32)
    (block $taken
      local.get $p
      i32.const 8
      i32.add
      i32.load offset=4
      i32.const 7
      i32.ne
      br_if $taken
      i32.const 0
      return)
    i32.const 1)
  (func (export "load_xi_eqz") (param $p i32) (param $b i32) (result i32)
    (block $taken
      local.get $p
      i32.const 8
      i32.add
      i32.load offset=4
      i32.eqz
      br_if $taken
      i32.const 0
      return)
    i32.const 1)
  (func (export "load_xi_nz") (param $p i32) (param $b i32) (result i32)
    (block $taken
      local.get $p
      i32.const 8
      i32.add
      i32.load offset=4
      br_if $taken
      i32.const 0
      return)
    i32.const 1)
  (func (export "load8u_p_eq_s") (param $p i32) (param $b i32) (result i32)
    (block $taken
      local.get $p
      i32.load8_u offset=4
      local.get $b
      i32.eq
      br_if $taken
      i32.const 0
      return)
    i32.const 1)
  (func (export "load8u_p_ne_s") (param $p i32) (param $b i32) (result i32)
    (block $taken
      local.get $p
      i32.load8_u offset=4
      local.get $b
      i32.ne
      br_if $taken
      i32.const 0
      return)
    i32.const 1)
  (func (export "load8u_p_eq_i") (param $p i32) (param $b i32) (result i32)
    (block $taken
      local.get $p
      i32.load8_u offset=4
      i32.const 7
      i32.eq
      br_if $taken
      i32.const 0
      return)
    i32.const 1)
  (func (export "load8u_p_ne_i") (param $p i32) (param $b i32) (result i32)
    (block $taken
      local.get $p
      i32.load8_u offset=4
      i32.const 7
      i32.ne
      br_if $taken
      i32.const 0
      return)
    i32.const 1)
  (func (export "load8u_p_eqz") (param $p i32) (param $b i32) (result i32)
    (block $taken
      local.get $p
      i32.load8_u offset=4
      i32.eqz
      br_if $taken
      i32.const 0
      return)
    i32.const 1)
  (func (export "load8u_p_nz") (param $p i32) (param $b i32) (result i32)
    (block $taken
      local.get $p
      i32.load8_u offset=4
      br_if $taken
      i32.const 0
      return)
    i32.const 1)
  (func (export "load8u_xi_eq_s") (param $p i32) (param $b i32) (result i32)
    (block $taken
      local.get $p
      i32.const 8
      i32.add
      i32.load8_u offset=4
      local.get $b
      i32.eq
      br_if $taken
      i32.const 0
      return)
    i32.const 1)
  (func (export "load8u_xi_ne_s") (param $p i32) (param $b i32) (result i32)
    (block $taken
      local.get $p
      i32.const 8
      i32.add
      i32.load8_u offset=4
      local.get $b
      i32.ne
      br_if $taken
      i32.const 0
      return)
    i32.const 1)
  (func (export "load8u_xi_eq_i") (param $p i32) (param $b i32) (result i32)
    (block $taken
      local.get $p
      i32.const 8
      i32.add
      i32.load8_u offset=4
      i32.const 7
      i32.eq
      br_if $taken
      i32.const 0
      return)
    i32.const 1)
  (func (export "load8u_xi_ne_i") (param $p i32) (param $b i32) (result i32)
    (block $taken
      local.get $p
      i32.const 8
      i32.add
      i32.load8_u offset=4
      i32.const 7
      i32.ne
      br_if $taken
      i32.const 0
      return)
    i32.const 1)
  (func (export "load8u_xi_eqz") (param $p i32) (param $b i32) (result i32)
    (block $taken
      local.get $p
      i32.const 8
      i32.add
      i32.load8_u offset=4
      i32.eqz
      br_if $taken
      i32.const 0
      return)
    i32.const 1)
  (func (export "load8u_xi_nz") (param $p i32) (param $b i32) (result i32)
    (block $taken
      local.get $p
      i32.const 8
      i32.add
      i32.load8_u offset=4
      br_if $taken
      i32.const 0
      return)
    i32.const 1)
  ;; The same tests through `if` (the branch to the else is the negated test).
  (func (export "load_if_eq") (param $p i32) (param $b i32) (result i32)
    local.get $p
    i32.load offset=4
    local.get $b
    i32.eq
    if (result i32)
      i32.const 1
    else
      i32.const 0
    end)
  (func (export "load8u_if_nz") (param $p i32) (param $b i32) (result i32)
    local.get $p
    i32.const 8
    i32.add
    i32.load8_u offset=4
    if (result i32)
      i32.const 1
    else
      i32.const 0
    end)

  ;; The loaded value kept in a local (local.tee) and used after the branch: v, or -1 if 0.
  (func (export "load_tee") (param $p i32) (param $b i32) (result i32)
    (local $v i32)
    (block $zero
      local.get $p
      i32.load offset=4
      local.tee $v
      i32.eqz
      br_if $zero
      local.get $v
      return)
    i32.const -1)

  ;; strlen(p): the loop's back-edge is the byte load's branch (q = q + 1; byte at q - 1).
  (func (export "strlen") (param $p i32) (param $b i32) (result i32)
    (local $q i32)
    local.get $p
    local.set $q
    (loop $l
      local.get $q
      i32.const 1
      i32.add
      local.tee $q
      i32.const -1
      i32.add
      i32.load8_u
      br_if $l)
    local.get $q
    local.get $p
    i32.sub
    i32.const 1
    i32.sub)
)
