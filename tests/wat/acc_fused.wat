;; Generated from the C code in tests/unit/test_acc.c (between its markers; clang-19
;; --target=wasm32 -O2 -fno-builtin -nostdlib -Wl,--no-entry, then wasm2wat): SHA-256, a
;; table CRC-32, hash probing, byte sums and table lookups, shaped so that the fused
;; accumulator variants (I32_CH_ADD_A7, I32_LOAD_MSXI_A2, ...) are used.
(module $acc_fused.wasm
  (type (;0;) (func (param i32 i32) (result i32)))
  (func $sha (type 0) (param i32 i32) (result i32)
    (local i32 i32 i32 i32 i32 i32 i32 i32 i32 i32 i32 i32 i32 i32 i32 i32 i32 i32 i32 i32 i32 i32 i32)
    global.get $__stack_pointer
    i32.const 256
    i32.sub
    local.tee 2
    global.set $__stack_pointer
    i32.const -1801003452
    local.set 3
    block  ;; label = @1
      local.get 1
      i32.eqz
      br_if 0 (;@1;)
      local.get 1
      i32.const 4
      local.get 1
      i32.const 4
      i32.lt_u
      select
      local.tee 4
      i32.const 448
      i32.mul
      local.set 5
      local.get 0
      i32.const 31
      i32.mul
      local.set 6
      i32.const 0
      local.set 7
      i32.const 1280
      local.set 0
      loop  ;; label = @2
        local.get 0
        local.get 6
        local.get 7
        i32.add
        local.tee 8
        i32.store8
        local.get 0
        i32.const 3
        i32.add
        local.get 8
        i32.const 21
        i32.add
        i32.store8
        local.get 0
        i32.const 2
        i32.add
        local.get 8
        i32.const 14
        i32.add
        i32.store8
        local.get 0
        i32.const 1
        i32.add
        local.get 8
        i32.const 7
        i32.add
        i32.store8
        local.get 0
        i32.const 4
        i32.add
        local.set 0
        local.get 5
        local.get 7
        i32.const 28
        i32.add
        local.tee 7
        i32.ne
        br_if 0 (;@2;)
      end
      local.get 1
      i32.eqz
      br_if 0 (;@1;)
      i32.const 1541459225
      local.set 9
      i32.const 528734635
      local.set 10
      i32.const -1694144372
      local.set 11
      i32.const 1359893119
      local.set 12
      i32.const -1521486534
      local.set 13
      i32.const 1013904242
      local.set 14
      i32.const -1150833019
      local.set 15
      i32.const 1779033703
      local.set 16
      i32.const 0
      local.set 17
      i32.const 1280
      local.set 18
      loop  ;; label = @2
        i32.const 0
        local.set 0
        loop  ;; label = @3
          local.get 2
          local.get 0
          i32.add
          local.get 18
          local.get 0
          i32.add
          i32.load
          local.tee 8
          i32.const 24
          i32.shl
          local.get 8
          i32.const 65280
          i32.and
          i32.const 8
          i32.shl
          i32.or
          local.get 8
          i32.const 8
          i32.shr_u
          i32.const 65280
          i32.and
          local.get 8
          i32.const 24
          i32.shr_u
          i32.or
          i32.or
          i32.store
          local.get 0
          i32.const 4
          i32.add
          local.tee 0
          i32.const 64
          i32.ne
          br_if 0 (;@3;)
        end
        i32.const 0
        local.set 7
        local.get 2
        i32.load
        local.set 8
        loop  ;; label = @3
          local.get 2
          local.get 7
          i32.add
          local.tee 0
          i32.const 64
          i32.add
          local.get 0
          i32.const 36
          i32.add
          i32.load
          local.get 8
          i32.add
          local.get 0
          i32.const 4
          i32.add
          i32.load
          local.tee 8
          i32.const 25
          i32.rotl
          local.get 8
          i32.const 14
          i32.rotl
          i32.xor
          local.get 8
          i32.const 3
          i32.shr_u
          i32.xor
          i32.add
          local.get 0
          i32.const 56
          i32.add
          i32.load
          local.tee 0
          i32.const 15
          i32.rotl
          local.get 0
          i32.const 13
          i32.rotl
          i32.xor
          local.get 0
          i32.const 10
          i32.shr_u
          i32.xor
          i32.add
          i32.store
          local.get 8
          local.set 8
          local.get 7
          i32.const 4
          i32.add
          local.tee 7
          i32.const 192
          i32.ne
          br_if 0 (;@3;)
        end
        i32.const 0
        local.set 7
        local.get 16
        local.set 1
        local.get 15
        local.set 8
        local.get 14
        local.set 5
        local.get 13
        local.set 19
        local.get 9
        local.set 20
        local.get 10
        local.set 21
        local.get 11
        local.set 22
        local.get 12
        local.set 3
        loop  ;; label = @3
          local.get 5
          local.tee 6
          local.get 8
          local.tee 5
          i32.xor
          local.get 1
          local.tee 8
          i32.and
          local.get 6
          local.get 5
          i32.and
          i32.xor
          local.get 8
          i32.const 30
          i32.rotl
          local.get 8
          i32.const 19
          i32.rotl
          i32.xor
          local.get 8
          i32.const 10
          i32.rotl
          i32.xor
          i32.add
          local.get 7
          i32.const 1024
          i32.add
          i32.load
          local.get 20
          i32.add
          local.get 21
          local.tee 23
          local.get 3
          local.tee 0
          i32.const -1
          i32.xor
          i32.and
          local.get 0
          local.get 22
          local.tee 24
          i32.and
          i32.or
          i32.add
          local.get 2
          local.get 7
          i32.add
          i32.load
          i32.add
          local.get 0
          i32.const 26
          i32.rotl
          local.get 0
          i32.const 21
          i32.rotl
          i32.xor
          local.get 0
          i32.const 7
          i32.rotl
          i32.xor
          i32.add
          local.tee 3
          i32.add
          local.set 1
          local.get 3
          local.get 19
          i32.add
          local.set 3
          local.get 6
          local.set 19
          local.get 23
          local.set 20
          local.get 24
          local.set 21
          local.get 0
          local.set 22
          local.get 7
          i32.const 4
          i32.add
          local.tee 7
          i32.const 256
          i32.ne
          br_if 0 (;@3;)
        end
        local.get 18
        i32.const 64
        i32.add
        local.set 18
        local.get 23
        local.get 9
        i32.add
        local.set 9
        local.get 24
        local.get 10
        i32.add
        local.set 10
        local.get 0
        local.get 11
        i32.add
        local.set 11
        local.get 3
        local.get 12
        i32.add
        local.set 12
        local.get 6
        local.get 13
        i32.add
        local.set 13
        local.get 5
        local.get 14
        i32.add
        local.set 14
        local.get 8
        local.get 15
        i32.add
        local.set 15
        local.get 1
        local.get 16
        i32.add
        local.set 16
        local.get 17
        i32.const 1
        i32.add
        local.tee 17
        local.get 4
        i32.ne
        br_if 0 (;@2;)
      end
      local.get 13
      local.get 16
      i32.xor
      local.get 9
      i32.xor
      local.set 3
    end
    local.get 2
    i32.const 256
    i32.add
    global.set $__stack_pointer
    local.get 3)
  (func $crc (type 0) (param i32 i32) (result i32)
    (local i32 i32 i32 i32 i32)
    i32.const 0
    local.set 2
    i32.const 1536
    local.set 3
    loop  ;; label = @1
      local.get 3
      local.get 2
      i32.const 1
      i32.shr_u
      local.tee 4
      i32.const -306674912
      i32.xor
      local.get 4
      local.get 2
      i32.const 1
      i32.and
      select
      local.tee 4
      i32.const 1
      i32.shr_u
      local.tee 5
      i32.const -306674912
      i32.xor
      local.get 5
      local.get 4
      i32.const 1
      i32.and
      select
      local.tee 4
      i32.const 1
      i32.shr_u
      local.tee 5
      i32.const -306674912
      i32.xor
      local.get 5
      local.get 4
      i32.const 1
      i32.and
      select
      local.tee 4
      i32.const 1
      i32.shr_u
      local.tee 5
      i32.const -306674912
      i32.xor
      local.get 5
      local.get 4
      i32.const 1
      i32.and
      select
      local.tee 4
      i32.const 1
      i32.shr_u
      local.tee 5
      i32.const -306674912
      i32.xor
      local.get 5
      local.get 4
      i32.const 1
      i32.and
      select
      local.tee 4
      i32.const 1
      i32.shr_u
      local.tee 5
      i32.const -306674912
      i32.xor
      local.get 5
      local.get 4
      i32.const 1
      i32.and
      select
      local.tee 4
      i32.const 1
      i32.shr_u
      local.tee 5
      i32.const -306674912
      i32.xor
      local.get 5
      local.get 4
      i32.const 1
      i32.and
      select
      local.tee 4
      i32.const 1
      i32.shr_u
      local.tee 5
      i32.const -306674912
      i32.xor
      local.get 5
      local.get 4
      i32.const 1
      i32.and
      select
      i32.store
      local.get 3
      i32.const 4
      i32.add
      local.set 3
      local.get 2
      i32.const 1
      i32.add
      local.tee 2
      i32.const 256
      i32.ne
      br_if 0 (;@1;)
    end
    block  ;; label = @1
      local.get 1
      br_if 0 (;@1;)
      i32.const 0
      return
    end
    local.get 1
    i32.const 256
    local.get 1
    i32.const 256
    i32.lt_u
    select
    local.tee 6
    i32.const 3
    i32.and
    local.set 4
    i32.const 0
    local.set 2
    block  ;; label = @1
      local.get 1
      i32.const 4
      i32.lt_u
      br_if 0 (;@1;)
      local.get 6
      i32.const 508
      i32.and
      local.set 5
      i32.const 0
      local.set 2
      local.get 0
      local.set 3
      loop  ;; label = @2
        local.get 2
        i32.const 1283
        i32.add
        local.get 3
        i32.const 39
        i32.add
        i32.store8
        local.get 2
        i32.const 1282
        i32.add
        local.get 3
        i32.const 26
        i32.add
        i32.store8
        local.get 2
        i32.const 1281
        i32.add
        local.get 3
        i32.const 13
        i32.add
        i32.store8
        local.get 2
        i32.const 1280
        i32.add
        local.get 3
        i32.store8
        local.get 3
        i32.const 52
        i32.add
        local.set 3
        local.get 5
        local.get 2
        i32.const 4
        i32.add
        local.tee 2
        i32.ne
        br_if 0 (;@2;)
      end
    end
    block  ;; label = @1
      local.get 4
      i32.eqz
      br_if 0 (;@1;)
      local.get 2
      i32.const 1280
      i32.add
      local.set 3
      local.get 0
      local.get 2
      i32.const 13
      i32.mul
      i32.add
      local.set 2
      loop  ;; label = @2
        local.get 3
        local.get 2
        i32.store8
        local.get 2
        i32.const 13
        i32.add
        local.set 2
        local.get 3
        i32.const 1
        i32.add
        local.set 3
        local.get 4
        i32.const -1
        i32.add
        local.tee 4
        br_if 0 (;@2;)
      end
    end
    block  ;; label = @1
      local.get 1
      br_if 0 (;@1;)
      i32.const 0
      return
    end
    local.get 6
    i32.const 1
    i32.and
    local.set 5
    block  ;; label = @1
      block  ;; label = @2
        local.get 1
        i32.const 1
        i32.ne
        br_if 0 (;@2;)
        i32.const -1
        local.set 3
        i32.const 0
        local.set 2
        br 1 (;@1;)
      end
      local.get 6
      i32.const 510
      i32.and
      local.set 4
      i32.const -1
      local.set 3
      i32.const 0
      local.set 2
      loop  ;; label = @2
        local.get 2
        i32.const 1281
        i32.add
        i32.load8_u
        local.get 2
        i32.const 1280
        i32.add
        i32.load8_u
        local.get 3
        i32.xor
        i32.const 255
        i32.and
        i32.const 2
        i32.shl
        i32.const 1536
        i32.add
        i32.load
        local.get 3
        i32.const 8
        i32.shr_u
        i32.xor
        local.tee 3
        i32.xor
        i32.const 255
        i32.and
        i32.const 2
        i32.shl
        i32.const 1536
        i32.add
        i32.load
        local.get 3
        i32.const 8
        i32.shr_u
        i32.xor
        local.set 3
        local.get 4
        local.get 2
        i32.const 2
        i32.add
        local.tee 2
        i32.ne
        br_if 0 (;@2;)
      end
    end
    block  ;; label = @1
      local.get 5
      i32.eqz
      br_if 0 (;@1;)
      local.get 2
      i32.const 1280
      i32.add
      i32.load8_u
      local.get 3
      i32.xor
      i32.const 255
      i32.and
      i32.const 2
      i32.shl
      i32.const 1536
      i32.add
      i32.load
      local.get 3
      i32.const 8
      i32.shr_u
      i32.xor
      local.set 3
    end
    local.get 3
    i32.const -1
    i32.xor)
  (func $probe (type 0) (param i32 i32) (result i32)
    (local i32 i32 i32 i32 i32 i32 i32)
    i32.const -4096
    local.set 2
    loop  ;; label = @1
      local.get 2
      i32.const 6680
      i32.add
      i64.const 0
      i64.store
      local.get 2
      i32.const 6672
      i32.add
      i64.const 0
      i64.store
      local.get 2
      i32.const 6664
      i32.add
      i64.const 0
      i64.store
      local.get 2
      i32.const 6656
      i32.add
      i64.const 0
      i64.store
      local.get 2
      i32.const 32
      i32.add
      local.tee 2
      br_if 0 (;@1;)
    end
    block  ;; label = @1
      block  ;; label = @2
        local.get 1
        br_if 0 (;@2;)
        i32.const 0
        local.set 3
        br 1 (;@1;)
      end
      local.get 1
      i32.const 700
      local.get 1
      i32.const 700
      i32.lt_u
      select
      local.set 4
      i32.const 0
      local.set 5
      i32.const 0
      local.set 3
      loop  ;; label = @2
        local.get 0
        i32.const 1664525
        i32.mul
        i32.const 1013904223
        i32.add
        local.tee 0
        i32.const 1
        i32.or
        local.tee 1
        i32.const -1640531535
        i32.mul
        i32.const 22
        i32.shr_u
        local.tee 6
        i32.const 2
        i32.shl
        i32.const 2560
        i32.add
        local.tee 7
        i32.load
        local.tee 2
        local.get 1
        i32.eq
        local.set 8
        block  ;; label = @3
          local.get 2
          i32.eqz
          br_if 0 (;@3;)
          local.get 2
          local.get 1
          i32.eq
          br_if 0 (;@3;)
          loop  ;; label = @4
            local.get 6
            i32.const 1
            i32.add
            i32.const 1023
            i32.and
            local.tee 6
            i32.const 2
            i32.shl
            i32.const 2560
            i32.add
            local.tee 7
            i32.load
            local.tee 2
            local.get 1
            i32.eq
            local.set 8
            local.get 2
            i32.eqz
            br_if 1 (;@3;)
            local.get 2
            local.get 1
            i32.ne
            br_if 0 (;@4;)
          end
        end
        local.get 7
        local.get 1
        i32.store
        local.get 3
        local.get 8
        i32.add
        local.set 3
        local.get 5
        i32.const 1
        i32.add
        local.tee 5
        local.get 4
        i32.ne
        br_if 0 (;@2;)
      end
    end
    i32.const -4096
    local.set 2
    loop  ;; label = @1
      local.get 2
      i32.const 6668
      i32.add
      i32.load
      local.get 2
      i32.const 6664
      i32.add
      i32.load
      local.get 2
      i32.const 6660
      i32.add
      i32.load
      local.get 2
      i32.const 6656
      i32.add
      i32.load
      local.get 3
      i32.const 31
      i32.mul
      i32.add
      i32.const 31
      i32.mul
      i32.add
      i32.const 31
      i32.mul
      i32.add
      i32.const 31
      i32.mul
      i32.add
      local.set 3
      local.get 2
      i32.const 16
      i32.add
      local.tee 2
      br_if 0 (;@1;)
    end
    local.get 3)
  (func $bytesum (type 0) (param i32 i32) (result i32)
    (local i32 i32 i32 i32 i32 i32)
    local.get 0
    i32.const 17
    i32.mul
    local.set 2
    i32.const 3
    local.set 0
    loop  ;; label = @1
      local.get 0
      i32.const 1280
      i32.add
      local.get 0
      local.get 0
      i32.mul
      local.get 2
      i32.add
      i32.store8
      local.get 0
      i32.const 1279
      i32.add
      local.get 0
      i32.const -1
      i32.add
      local.tee 3
      local.get 3
      i32.mul
      local.get 2
      i32.add
      i32.store8
      local.get 0
      i32.const 1278
      i32.add
      local.get 0
      i32.const -2
      i32.add
      local.tee 3
      local.get 3
      i32.mul
      local.get 2
      i32.add
      i32.store8
      local.get 0
      i32.const 1277
      i32.add
      local.get 0
      i32.const -3
      i32.add
      local.tee 3
      local.get 3
      i32.mul
      local.get 2
      i32.add
      i32.store8
      local.get 0
      i32.const 4
      i32.add
      local.tee 0
      i32.const 259
      i32.ne
      br_if 0 (;@1;)
    end
    block  ;; label = @1
      local.get 1
      br_if 0 (;@1;)
      i32.const 0
      return
    end
    local.get 1
    i32.const 250
    local.get 1
    i32.const 250
    i32.lt_u
    select
    local.tee 0
    i32.const 1
    i32.and
    local.set 4
    i32.const 0
    local.set 3
    i32.const 0
    i32.load8_u offset=1282
    local.set 5
    i32.const 0
    i32.load8_u offset=1281
    local.set 2
    i32.const 0
    i32.load8_u offset=1280
    local.set 6
    block  ;; label = @1
      block  ;; label = @2
        local.get 1
        i32.const 1
        i32.ne
        br_if 0 (;@2;)
        i32.const 3
        local.set 0
        br 1 (;@1;)
      end
      i32.const 0
      local.set 3
      i32.const 0
      local.get 0
      i32.const -2
      i32.and
      i32.sub
      local.set 7
      i32.const 3
      local.set 0
      local.get 6
      local.set 1
      loop  ;; label = @2
        local.get 2
        i32.const 255
        i32.and
        local.tee 2
        local.get 2
        local.get 3
        local.get 1
        i32.const 255
        i32.and
        i32.add
        i32.add
        local.get 5
        local.tee 6
        i32.const 255
        i32.and
        local.tee 3
        i32.add
        local.get 0
        i32.const 1280
        i32.add
        i32.load8_u
        local.tee 2
        i32.add
        i32.add
        local.get 3
        i32.add
        local.get 2
        i32.add
        local.get 0
        i32.const 1281
        i32.add
        i32.load8_u
        local.tee 5
        i32.add
        local.set 3
        local.get 6
        local.set 1
        local.get 7
        local.get 0
        i32.const 2
        i32.add
        local.tee 0
        i32.add
        i32.const 3
        i32.ne
        br_if 0 (;@2;)
      end
    end
    block  ;; label = @1
      local.get 4
      i32.eqz
      br_if 0 (;@1;)
      local.get 3
      local.get 6
      i32.const 255
      i32.and
      i32.add
      local.get 2
      i32.const 255
      i32.and
      i32.add
      local.get 5
      i32.const 255
      i32.and
      i32.add
      local.get 0
      i32.const 1280
      i32.add
      i32.load8_u
      i32.add
      local.set 3
    end
    local.get 3)
  (func $lookup (type 0) (param i32 i32) (result i32)
    (local i32 i32 i32)
    i32.const 0
    local.set 2
    i32.const -256
    local.set 3
    loop  ;; label = @1
      local.get 3
      i32.const 6912
      i32.add
      local.get 2
      local.get 0
      i32.xor
      i32.store
      local.get 3
      i32.const 6924
      i32.add
      local.get 2
      i32.const -626627285
      i32.add
      local.get 0
      i32.xor
      i32.store
      local.get 3
      i32.const 6920
      i32.add
      local.get 2
      i32.const 1013904242
      i32.add
      local.get 0
      i32.xor
      i32.store
      local.get 3
      i32.const 6916
      i32.add
      local.get 2
      i32.const -1640531527
      i32.add
      local.get 0
      i32.xor
      i32.store
      local.get 2
      i32.const 2027808484
      i32.add
      local.set 2
      local.get 3
      i32.const 16
      i32.add
      local.tee 3
      br_if 0 (;@1;)
    end
    block  ;; label = @1
      local.get 1
      br_if 0 (;@1;)
      i32.const 0
      return
    end
    local.get 1
    i32.const 1
    i32.and
    local.set 4
    block  ;; label = @1
      block  ;; label = @2
        local.get 1
        i32.const 1
        i32.ne
        br_if 0 (;@2;)
        i32.const 0
        local.set 2
        br 1 (;@1;)
      end
      local.get 1
      i32.const -2
      i32.and
      local.set 3
      i32.const 0
      local.set 2
      loop  ;; label = @2
        local.get 0
        i32.const 69069
        i32.mul
        local.set 1
        local.get 0
        i32.const 475559465
        i32.mul
        i32.const 69070
        i32.add
        local.tee 0
        i32.const 24
        i32.shr_u
        i32.const 252
        i32.and
        i32.const 6656
        i32.add
        i32.load
        local.get 1
        i32.const 1
        i32.add
        local.tee 1
        i32.const 24
        i32.shr_u
        i32.const 252
        i32.and
        i32.const 6656
        i32.add
        i32.load
        local.get 2
        i32.add
        local.get 1
        i32.const 8
        i32.shr_u
        i32.const 252
        i32.and
        i32.const 6656
        i32.add
        i32.load
        i32.add
        i32.add
        local.get 0
        i32.const 8
        i32.shr_u
        i32.const 252
        i32.and
        i32.const 6656
        i32.add
        i32.load
        i32.add
        local.set 2
        local.get 3
        i32.const -2
        i32.add
        local.tee 3
        br_if 0 (;@2;)
      end
    end
    block  ;; label = @1
      local.get 4
      i32.eqz
      br_if 0 (;@1;)
      local.get 0
      i32.const 69069
      i32.mul
      i32.const 1
      i32.add
      local.tee 3
      i32.const 24
      i32.shr_u
      i32.const 252
      i32.and
      i32.const 6656
      i32.add
      i32.load
      local.get 2
      i32.add
      local.get 3
      i32.const 8
      i32.shr_u
      i32.const 252
      i32.and
      i32.const 6656
      i32.add
      i32.load
      i32.add
      local.set 2
    end
    local.get 2)
  (table (;0;) 1 1 funcref)
  (memory (;0;) 2)
  (global $__stack_pointer (mut i32) (i32.const 72448))
  (export "memory" (memory 0))
  (export "sha" (func $sha))
  (export "crc" (func $crc))
  (export "probe" (func $probe))
  (export "bytesum" (func $bytesum))
  (export "lookup" (func $lookup))
  (data $.rodata (i32.const 1024) "\98/\8aB\91D7q\cf\fb\c0\b5\a5\db\b5\e9[\c2V9\f1\11\f1Y\a4\82?\92\d5^\1c\ab\98\aa\07\d8\01[\83\12\be\851$\c3}\0cUt]\ber\fe\b1\de\80\a7\06\dc\9bt\f1\9b\c1\c1i\9b\e4\86G\be\ef\c6\9d\c1\0f\cc\a1\0c$o,\e9-\aa\84tJ\dc\a9\b0\5c\da\88\f9vRQ>\98m\c61\a8\c8'\03\b0\c7\7fY\bf\f3\0b\e0\c6G\91\a7\d5Qc\ca\06g))\14\85\0a\b7'8!\1b.\fcm,M\13\0d8STs\0ae\bb\0ajv.\c9\c2\81\85,r\92\a1\e8\bf\a2Kf\1a\a8p\8bK\c2\a3Ql\c7\19\e8\92\d1$\06\99\d6\855\0e\f4p\a0j\10\16\c1\a4\19\08l7\1eLwH'\b5\bc\b04\b3\0c\1c9J\aa\d8NO\ca\9c[\f3o.h\ee\82\8ftoc\a5x\14x\c8\84\08\02\c7\8c\fa\ff\be\90\eblP\a4\f7\a3\f9\be\f2xq\c6"))
