(module
  (type (;0;) (func (result i32)))
  (func (;0;) (type 0) (result i32)
    (local i32 i32)
    global.get 0
    i32.eqz
    if  ;; label = @1
      i32.const -127
      return
    end
    global.get 0
    i32.const 1
    i32.sub
    global.set 0
    i32.const 32
    local.get 0
    i32.add
    i32.const 0
    i32.load8_u offset=2
    i32.xor
    drop
    i32.const 0
    i32.const 0
    i32.load8_u offset=5
    i32.xor
    local.tee 0
    i32.const 5
    i32.shl
    local.get 0
    i32.add
    local.get 0
    i32.const 5
    i32.shl
    i32.load8_u offset=6
    i32.xor
    local.tee 0
    i32.const 5
    i32.shl
    local.get 0
    i32.add
    i32.const 0
    i32.load8_u offset=7
    i32.xor
    local.tee 0
    i32.const 5
    i32.shl
    local.get 0
    i32.add
    i32.const 0
    i32.load8_u offset=8
    i32.xor
    local.tee 0
    i32.const 5
    i32.shl
    local.get 0
    i32.add
    i32.const 0
    i32.load8_u offset=9
    i32.xor
    local.tee 0
    local.get 0
    i32.add
    local.get 1
    i32.xor
    local.tee 0
    i32.const 0
    i32.shl
    local.get 0
    i32.add
    i32.const 0
    i32.load8_u offset=11
    i32.xor
    local.tee 0
    local.get 0
    i32.add
    i32.const 0
    i32.load8_u offset=12
    i32.xor
    local.tee 0
    i32.const 5
    i32.shl
    local.get 0
    i32.add
    i32.const 0
    i32.load8_u offset=13
    i32.xor
    local.tee 0
    i32.const 5
    i32.shl
    local.get 0
    i32.const 5
    i32.shl
    i32.add
    i32.const 0
    i32.load8_u offset=14
    i32.xor
    i32.const 0
    i32.add
    i32.const 0
    i32.load8_u offset=15
    i32.xor)
  (memory (;0;) 16 17)
  (global (;0;) (mut i32) (i32.const 10))
  (export "hashMemory" (func 0)))
