;; Sandbox fixture: one export per trap kind.
(module
  (type $v_i (func (result i32)))
  (type $i_i (func (param i32) (result i32)))
  (memory 1)
  (table 3 funcref)
  ;; Slot 0: () -> i32; slot 1: (i32) -> i32; slot 2: null.
  (elem (i32.const 0) $seven $ident)
  (func $seven (type $v_i) i32.const 7)
  (func $ident (type $i_i) local.get 0)
  (func (export "ok") (result i32) i32.const 1)
  (func (export "unreachable") unreachable)
  (func (export "div0") (param i32 i32) (result i32)
    local.get 0
    local.get 1
    i32.div_s)
  (func (export "overflow") (result i32)
    i32.const 0x80000000
    i32.const -1
    i32.div_s)
  (func (export "badConversion") (result i32)
    f32.const nan
    i32.trunc_f32_s)
  (func (export "oobMemory") (result i32)
    i32.const 65536
    i32.load)
  (func (export "oobTable") (result i32)
    i32.const 10
    table.get 0
    ref.is_null)
  (func (export "callSlot") (param i32) (result i32)
    local.get 0
    call_indirect (type $v_i))
  ;; Recursion without end.
  (func $forever (export "recurse") (param i32) (result i32)
    local.get 0
    i32.const 1
    i32.add
    call $forever)
  ;; Recursion $n deep.
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
    end))
