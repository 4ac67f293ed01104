;; Generated from the C code in tests/unit/test_fusion.c (between its markers, with export
;; attributes; clang-19 --target=wasm32 -O2 -fno-builtin -nostdlib -Wl,--no-entry, then
;; wasm2wat): code shaped so that the engine's fused instructions are used (sha256's rounds,
;; nbody's updates, an unrolled daxpy, a C comparator through a function pointer, a byte-fill
;; loop, return a + b).
(module $fusion.wasm
  (type (;0;) (func (param i32 i32) (result i32)))
  (type (;1;) (func (param i32 i32 i32) (result i32)))
  (type (;2;) (func (param i32) (result i32)))
  (func $sha (type 0) (param i32 i32) (result i32)
    (local i32 i32 i32 i32 i32 i32 i32 i32 i32 i32 i32 i32 i32 i32 i32 i32 i32 i32 i32 i32 i32)
    i32.const 0
    local.get 0
    i32.store offset=1040
    i32.const 0
    local.get 0
    i32.const 4
    i32.shl
    i32.const 1161830871
    i32.add
    i32.store offset=1100
    i32.const 0
    local.get 0
    i32.const 15
    i32.mul
    i32.const -1492604898
    i32.add
    i32.store offset=1096
    i32.const 0
    local.get 0
    i32.const 14
    i32.mul
    i32.const 147926629
    i32.add
    i32.store offset=1092
    i32.const 0
    local.get 0
    i32.const 13
    i32.mul
    i32.const 1788458156
    i32.add
    i32.store offset=1088
    i32.const 0
    local.get 0
    i32.const 12
    i32.mul
    i32.const -865977613
    i32.add
    i32.store offset=1084
    i32.const 0
    local.get 0
    i32.const 11
    i32.mul
    i32.const 774553914
    i32.add
    i32.store offset=1080
    i32.const 0
    local.get 0
    i32.const 10
    i32.mul
    i32.const -1879881855
    i32.add
    i32.store offset=1076
    i32.const 0
    local.get 0
    i32.const 9
    i32.mul
    i32.const -239350328
    i32.add
    i32.store offset=1072
    i32.const 0
    local.get 0
    i32.const 3
    i32.shl
    i32.const 1401181199
    i32.add
    i32.store offset=1068
    i32.const 0
    local.get 0
    i32.const 7
    i32.mul
    i32.const -1253254570
    i32.add
    i32.store offset=1064
    i32.const 0
    local.get 0
    i32.const 6
    i32.mul
    i32.const 387276957
    i32.add
    i32.store offset=1060
    i32.const 0
    local.get 0
    i32.const 5
    i32.mul
    i32.const 2027808484
    i32.add
    i32.store offset=1056
    i32.const 0
    local.get 0
    i32.const 2
    i32.shl
    i32.const -626627285
    i32.add
    i32.store offset=1052
    i32.const 0
    local.get 0
    i32.const 3
    i32.mul
    i32.const 1013904242
    i32.add
    i32.store offset=1048
    i32.const 0
    local.get 0
    i32.const 1
    i32.shl
    i32.const -1640531527
    i32.add
    i32.store offset=1044
    i32.const -192
    local.set 2
    loop  ;; label = @1
      local.get 2
      i32.const 1296
      i32.add
      local.get 2
      i32.const 1236
      i32.add
      i32.load
      local.tee 3
      i32.const 25
      i32.rotl
      local.get 3
      i32.const 14
      i32.rotl
      i32.xor
      local.get 3
      i32.const 3
      i32.shr_u
      i32.xor
      local.get 0
      i32.add
      local.get 2
      i32.const 1268
      i32.add
      i32.load
      i32.add
      local.get 2
      i32.const 1288
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
      local.get 3
      local.set 0
      local.get 2
      i32.const 4
      i32.add
      local.tee 2
      br_if 0 (;@1;)
    end
    block  ;; label = @1
      local.get 1
      br_if 0 (;@1;)
      i32.const -970497813
      return
    end
    i32.const 1359893119
    local.set 4
    i32.const -1694144372
    local.set 5
    i32.const 528734635
    local.set 6
    i32.const 1541459225
    local.set 7
    i32.const 0
    local.set 8
    i32.const -1521486534
    local.set 0
    i32.const 1013904242
    local.set 9
    i32.const -1150833019
    local.set 3
    i32.const 1779033703
    local.set 10
    loop  ;; label = @1
      i32.const -256
      local.set 11
      i32.const -1116352408
      local.set 12
      i32.const 0
      local.set 13
      loop  ;; label = @2
        local.get 0
        local.set 14
        local.get 9
        local.set 0
        local.get 3
        local.set 9
        local.get 10
        local.tee 3
        i32.const 30
        i32.rotl
        local.get 3
        i32.const 19
        i32.rotl
        i32.xor
        local.get 3
        i32.const 10
        i32.rotl
        i32.xor
        local.tee 15
        local.get 3
        local.get 9
        local.get 0
        i32.xor
        i32.and
        local.get 9
        local.get 0
        i32.and
        i32.xor
        local.tee 16
        i32.add
        local.get 7
        local.tee 17
        local.get 4
        local.tee 2
        i32.const 26
        i32.rotl
        local.get 2
        i32.const 21
        i32.rotl
        i32.xor
        local.get 2
        i32.const 7
        i32.rotl
        i32.xor
        local.tee 18
        i32.add
        local.get 6
        local.tee 19
        local.get 2
        i32.const -1
        i32.xor
        i32.and
        local.get 5
        local.tee 20
        local.get 2
        i32.and
        i32.or
        local.tee 21
        i32.add
        local.get 13
        i32.const 1116352408
        i32.mul
        i32.add
        local.get 11
        i32.const 1296
        i32.add
        i32.load
        local.tee 22
        i32.add
        i32.add
        local.set 10
        local.get 12
        i32.const 1116352408
        i32.add
        local.tee 12
        local.get 17
        local.get 14
        i32.add
        local.get 22
        i32.add
        local.get 18
        i32.add
        local.get 21
        i32.add
        i32.add
        local.set 4
        local.get 13
        i32.const 1
        i32.add
        local.set 13
        local.get 19
        local.set 7
        local.get 20
        local.set 6
        local.get 2
        local.set 5
        local.get 11
        i32.const 4
        i32.add
        local.tee 11
        br_if 0 (;@2;)
      end
      local.get 17
      local.get 22
      i32.add
      local.get 18
      i32.add
      local.tee 11
      local.get 14
      i32.add
      local.get 21
      i32.add
      local.tee 13
      local.get 12
      i32.add
      local.set 4
      local.get 11
      local.get 15
      i32.add
      local.get 16
      i32.add
      local.get 21
      i32.add
      local.tee 11
      local.get 12
      i32.add
      local.set 10
      local.get 19
      local.set 7
      local.get 20
      local.set 6
      local.get 2
      local.set 5
      local.get 8
      i32.const 1
      i32.add
      local.tee 8
      local.get 1
      i32.ne
      br_if 0 (;@1;)
    end
    local.get 2
    local.get 13
    local.get 12
    i32.add
    i32.xor
    local.get 20
    i32.xor
    local.get 19
    i32.xor
    local.get 0
    i32.xor
    local.get 9
    i32.xor
    local.get 3
    i32.xor
    local.get 11
    local.get 12
    i32.add
    i32.xor)
  (func $bodies (type 0) (param i32 i32) (result i32)
    (local f64 f64 f64 f64 f64 f64 f64 f64 f64 f64 f64 f64 f64 f64 f64 f64 f64 f64 f64 f64 f64 f64 f64 f64 i32 i32 i32 i32 i32 i32 i32 i32)
    i32.const 0
    i64.const 0
    i64.store offset=1336
    i32.const 0
    i64.const 0
    i64.store offset=1312
    i32.const 0
    i64.const -4613937818241073152
    i64.store offset=1304
    i32.const 0
    i64.const 0
    i64.store offset=1328
    i32.const 0
    i64.const 0
    i64.store offset=1392
    i32.const 0
    i64.const 4598175219545276416
    i64.store offset=1368
    i32.const 0
    i64.const -4620693217682128896
    i64.store offset=1360
    i32.const 0
    i64.const 4607182418800017408
    i64.store offset=1344
    i32.const 0
    i64.const 0
    i64.store offset=1320
    i32.const 0
    i64.const 0
    i64.store offset=1384
    i32.const 0
    i64.const 0
    i64.store offset=1448
    i32.const 0
    i64.const 4602678819172646912
    i64.store offset=1424
    i32.const 0
    i64.const 4602678819172646912
    i64.store offset=1416
    i32.const 0
    i64.const 4611686018427387904
    i64.store offset=1400
    i32.const 0
    i64.const 0
    i64.store offset=1376
    i32.const 0
    i64.const 0
    i64.store offset=1440
    i32.const 0
    local.get 0
    f64.convert_i32_u
    local.tee 2
    f64.store offset=1296
    i32.const 0
    local.get 0
    i32.const 3
    i32.add
    f64.convert_i32_u
    local.tee 3
    f64.store offset=1352
    i32.const 0
    local.get 0
    i32.const 6
    i32.add
    f64.convert_i32_u
    local.tee 4
    f64.store offset=1408
    i32.const 0
    i64.const 0
    i64.store offset=1504
    i32.const 0
    i64.const 4604930618986332160
    i64.store offset=1480
    i32.const 0
    i64.const 4609434218613702656
    i64.store offset=1472
    i32.const 0
    local.get 0
    i32.const 9
    i32.add
    f64.convert_i32_u
    local.tee 5
    f64.store offset=1464
    i32.const 0
    i64.const 4613937818241073152
    i64.store offset=1456
    i32.const 0
    i64.const 0
    i64.store offset=1432
    i32.const 0
    i64.const 0
    i64.store offset=1496
    i32.const 0
    i64.const 4616189618054758400
    i64.store offset=1512
    i32.const 0
    i64.const 0
    i64.store offset=1488
    f64.const -0x1.8p+0 (;=-1.5;)
    local.set 6
    block  ;; label = @1
      block  ;; label = @2
        local.get 1
        br_if 0 (;@2;)
        f64.const -0x1p-1 (;=-0.5;)
        local.set 7
        f64.const 0x1p-2 (;=0.25;)
        local.set 8
        f64.const 0x1p-1 (;=0.5;)
        local.set 9
        f64.const 0x1.8p+0 (;=1.5;)
        local.set 10
        f64.const 0x1.8p-1 (;=0.75;)
        local.set 11
        f64.const 0x0p+0 (;=0;)
        local.set 12
        f64.const 0x0p+0 (;=0;)
        local.set 13
        f64.const 0x0p+0 (;=0;)
        local.set 14
        f64.const 0x0p+0 (;=0;)
        local.set 15
        f64.const 0x0p+0 (;=0;)
        local.set 16
        f64.const 0x0p+0 (;=0;)
        local.set 17
        f64.const 0x1p-1 (;=0.5;)
        local.set 18
        f64.const 0x0p+0 (;=0;)
        local.set 19
        f64.const 0x0p+0 (;=0;)
        local.set 20
        f64.const 0x0p+0 (;=0;)
        local.set 21
        f64.const 0x0p+0 (;=0;)
        local.set 22
        f64.const 0x0p+0 (;=0;)
        local.set 23
        f64.const 0x0p+0 (;=0;)
        local.set 24
        f64.const 0x0p+0 (;=0;)
        local.set 25
        br 1 (;@1;)
      end
      f64.const 0x0p+0 (;=0;)
      local.set 25
      f64.const -0x1p-1 (;=-0.5;)
      local.set 7
      f64.const 0x1p-2 (;=0.25;)
      local.set 8
      f64.const 0x1p-1 (;=0.5;)
      local.set 9
      f64.const 0x1.8p+0 (;=1.5;)
      local.set 10
      f64.const 0x1.8p-1 (;=0.75;)
      local.set 11
      f64.const 0x1p-1 (;=0.5;)
      local.set 18
      i32.const 0
      local.set 26
      loop  ;; label = @2
        i32.const 0
        local.set 27
        i32.const 3
        local.set 28
        i32.const 1296
        local.set 29
        loop  ;; label = @3
          block  ;; label = @4
            local.get 27
            i32.const 2
            i32.gt_u
            br_if 0 (;@4;)
            local.get 27
            i32.const 56
            i32.mul
            local.tee 0
            i32.const 1344
            i32.add
            f64.load
            local.set 16
            local.get 0
            i32.const 1312
            i32.add
            f64.load
            local.set 19
            local.get 0
            i32.const 1304
            i32.add
            f64.load
            local.set 20
            local.get 0
            i32.const 1296
            i32.add
            local.tee 30
            f64.load
            local.set 21
            local.get 29
            local.set 0
            local.get 28
            local.set 31
            loop  ;; label = @5
              local.get 30
              local.get 30
              f64.load offset=24
              local.get 0
              i32.const 104
              i32.add
              f64.load
              local.tee 17
              local.get 21
              local.get 0
              i32.const 56
              i32.add
              local.tee 32
              f64.load
              f64.sub
              local.tee 13
              f64.mul
              f64.const 0x1.47ae147ae147bp-7 (;=0.01;)
              local.get 19
              local.get 0
              i32.const 72
              i32.add
              f64.load
              f64.sub
              local.tee 14
              local.get 14
              f64.mul
              local.get 13
              local.get 13
              f64.mul
              local.get 20
              local.get 0
              i32.const 64
              i32.add
              f64.load
              f64.sub
              local.tee 15
              local.get 15
              f64.mul
              f64.add
              f64.add
              local.tee 12
              local.get 12
              f64.sqrt
              f64.mul
              f64.div
              local.tee 12
              f64.mul
              f64.sub
              f64.store offset=24
              local.get 30
              local.get 30
              f64.load offset=32
              local.get 17
              local.get 15
              f64.mul
              local.get 12
              f64.mul
              f64.sub
              f64.store offset=32
              local.get 30
              local.get 30
              f64.load offset=40
              local.get 17
              local.get 14
              f64.mul
              local.get 12
              f64.mul
              f64.sub
              f64.store offset=40
              local.get 0
              i32.const 80
              i32.add
              local.tee 33
              local.get 13
              local.get 16
              f64.mul
              local.get 12
              f64.mul
              local.get 33
              f64.load
              f64.add
              f64.store
              local.get 0
              i32.const 88
              i32.add
              local.tee 33
              local.get 15
              local.get 16
              f64.mul
              local.get 12
              f64.mul
              local.get 33
              f64.load
              f64.add
              f64.store
              local.get 0
              i32.const 96
              i32.add
              local.tee 0
              local.get 14
              local.get 16
              f64.mul
              local.get 12
              f64.mul
              local.get 0
              f64.load
              f64.add
              f64.store
              local.get 32
              local.set 0
              local.get 31
              i32.const -1
              i32.add
              local.tee 31
              br_if 0 (;@5;)
            end
          end
          local.get 29
          i32.const 56
          i32.add
          local.set 29
          local.get 28
          i32.const -1
          i32.add
          local.set 28
          local.get 27
          i32.const 1
          i32.add
          local.tee 27
          i32.const 4
          i32.ne
          br_if 0 (;@3;)
        end
        i32.const 0
        i32.const 0
        f64.load offset=1320
        local.tee 24
        f64.const 0x1.47ae147ae147bp-7 (;=0.01;)
        f64.mul
        local.get 2
        f64.add
        local.tee 2
        f64.store offset=1296
        i32.const 0
        i32.const 0
        f64.load offset=1328
        local.tee 23
        f64.const 0x1.47ae147ae147bp-7 (;=0.01;)
        f64.mul
        local.get 6
        f64.add
        local.tee 6
        f64.store offset=1304
        i32.const 0
        i32.const 0
        f64.load offset=1336
        local.tee 22
        f64.const 0x1.47ae147ae147bp-7 (;=0.01;)
        f64.mul
        local.get 25
        f64.add
        local.tee 25
        f64.store offset=1312
        i32.const 0
        i32.const 0
        f64.load offset=1376
        local.tee 21
        f64.const 0x1.47ae147ae147bp-7 (;=0.01;)
        f64.mul
        local.get 3
        f64.add
        local.tee 3
        f64.store offset=1352
        i32.const 0
        i32.const 0
        f64.load offset=1384
        local.tee 20
        f64.const 0x1.47ae147ae147bp-7 (;=0.01;)
        f64.mul
        local.get 7
        f64.add
        local.tee 7
        f64.store offset=1360
        i32.const 0
        i32.const 0
        f64.load offset=1392
        local.tee 19
        f64.const 0x1.47ae147ae147bp-7 (;=0.01;)
        f64.mul
        local.get 8
        f64.add
        local.tee 8
        f64.store offset=1368
        i32.const 0
        i32.const 0
        f64.load offset=1432
        local.tee 17
        f64.const 0x1.47ae147ae147bp-7 (;=0.01;)
        f64.mul
        local.get 4
        f64.add
        local.tee 4
        f64.store offset=1408
        i32.const 0
        i32.const 0
        f64.load offset=1440
        local.tee 16
        f64.const 0x1.47ae147ae147bp-7 (;=0.01;)
        f64.mul
        local.get 18
        f64.add
        local.tee 18
        f64.store offset=1416
        i32.const 0
        i32.const 0
        f64.load offset=1448
        local.tee 15
        f64.const 0x1.47ae147ae147bp-7 (;=0.01;)
        f64.mul
        local.get 9
        f64.add
        local.tee 9
        f64.store offset=1424
        i32.const 0
        i32.const 0
        f64.load offset=1488
        local.tee 14
        f64.const 0x1.47ae147ae147bp-7 (;=0.01;)
        f64.mul
        local.get 5
        f64.add
        local.tee 5
        f64.store offset=1464
        i32.const 0
        i32.const 0
        f64.load offset=1496
        local.tee 13
        f64.const 0x1.47ae147ae147bp-7 (;=0.01;)
        f64.mul
        local.get 10
        f64.add
        local.tee 10
        f64.store offset=1472
        i32.const 0
        i32.const 0
        f64.load offset=1504
        local.tee 12
        f64.const 0x1.47ae147ae147bp-7 (;=0.01;)
        f64.mul
        local.get 11
        f64.add
        local.tee 11
        f64.store offset=1480
        local.get 26
        i32.const 1
        i32.add
        local.tee 26
        local.get 1
        i32.ne
        br_if 0 (;@2;)
      end
    end
    block  ;; label = @1
      local.get 2
      local.get 6
      f64.add
      local.get 25
      f64.add
      local.get 24
      f64.add
      local.get 23
      f64.add
      local.get 22
      f64.add
      f64.const 0x0p+0 (;=0;)
      f64.add
      local.get 3
      local.get 7
      f64.add
      local.get 8
      f64.add
      local.get 21
      f64.add
      local.get 20
      f64.add
      local.get 19
      f64.add
      f64.add
      local.get 4
      local.get 18
      f64.add
      local.get 9
      f64.add
      local.get 17
      f64.add
      local.get 16
      f64.add
      local.get 15
      f64.add
      f64.add
      local.get 5
      local.get 10
      f64.add
      local.get 11
      f64.add
      local.get 14
      f64.add
      local.get 13
      f64.add
      local.get 12
      f64.add
      f64.add
      f64.const 0x1.e848p+19 (;=1e+06;)
      f64.mul
      local.tee 12
      f64.abs
      f64.const 0x1p+31 (;=2.14748e+09;)
      f64.lt
      i32.eqz
      br_if 0 (;@1;)
      local.get 12
      i32.trunc_f64_s
      return
    end
    i32.const -2147483648)
  (func $matmul (type 0) (param i32 i32) (result i32)
    (local i32 i32 i32 i32 i32 i32 i32 i32 i32 i32 i32 i32 i32 f64)
    block  ;; label = @1
      local.get 0
      br_if 0 (;@1;)
      i32.const 0
      return
    end
    local.get 1
    i32.const -6
    i32.add
    local.set 2
    local.get 1
    i32.const 7
    i32.mul
    local.tee 3
    i32.const -5
    i32.add
    local.set 4
    i32.const 0
    local.set 5
    local.get 0
    i32.const 64
    local.get 0
    i32.const 64
    i32.lt_u
    select
    local.tee 6
    local.get 6
    i32.mul
    local.tee 7
    local.set 8
    loop  ;; label = @1
      local.get 5
      i32.const 67056
      i32.add
      i64.const 0
      i64.store
      local.get 5
      i32.const 34288
      i32.add
      local.get 4
      local.get 3
      i32.const 11
      i32.div_u
      i32.const 11
      i32.mul
      i32.sub
      f64.convert_i32_s
      f64.store
      local.get 5
      i32.const 1520
      i32.add
      local.get 2
      local.get 1
      i32.const 13
      i32.div_u
      i32.const 13
      i32.mul
      i32.sub
      f64.convert_i32_s
      f64.store
      local.get 1
      i32.const 1
      i32.add
      local.set 1
      local.get 2
      i32.const 1
      i32.add
      local.set 2
      local.get 3
      i32.const 1
      i32.add
      local.set 3
      local.get 4
      i32.const 1
      i32.add
      local.set 4
      local.get 5
      i32.const 8
      i32.add
      local.set 5
      local.get 8
      i32.const -1
      i32.add
      local.tee 8
      br_if 0 (;@1;)
    end
    block  ;; label = @1
      local.get 0
      br_if 0 (;@1;)
      i32.const 0
      return
    end
    local.get 6
    i32.const 3
    i32.shl
    local.set 9
    local.get 6
    i32.const 126
    i32.and
    local.set 4
    local.get 6
    i32.const 1
    i32.and
    local.set 10
    i32.const 0
    local.set 11
    i32.const 67056
    local.set 12
    loop  ;; label = @1
      local.get 11
      local.get 6
      i32.mul
      local.set 13
      i32.const 34288
      local.set 14
      i32.const 0
      local.set 8
      loop  ;; label = @2
        local.get 8
        local.get 13
        i32.add
        i32.const 3
        i32.shl
        i32.const 1520
        i32.add
        f64.load
        local.set 15
        i32.const 0
        local.set 2
        block  ;; label = @3
          local.get 0
          i32.const 1
          i32.eq
          br_if 0 (;@3;)
          i32.const 0
          local.set 2
          local.get 12
          local.set 5
          local.get 14
          local.set 1
          loop  ;; label = @4
            local.get 5
            local.get 15
            local.get 1
            f64.load
            f64.mul
            local.get 5
            f64.load
            f64.add
            f64.store
            local.get 5
            i32.const 8
            i32.add
            local.tee 3
            local.get 15
            local.get 1
            i32.const 8
            i32.add
            f64.load
            f64.mul
            local.get 3
            f64.load
            f64.add
            f64.store
            local.get 5
            i32.const 16
            i32.add
            local.set 5
            local.get 1
            i32.const 16
            i32.add
            local.set 1
            local.get 4
            local.get 2
            i32.const 2
            i32.add
            local.tee 2
            i32.ne
            br_if 0 (;@4;)
          end
        end
        block  ;; label = @3
          local.get 10
          i32.eqz
          br_if 0 (;@3;)
          local.get 2
          local.get 13
          i32.add
          i32.const 3
          i32.shl
          i32.const 67056
          i32.add
          local.tee 5
          local.get 15
          local.get 2
          local.get 8
          local.get 6
          i32.mul
          i32.add
          i32.const 3
          i32.shl
          i32.const 34288
          i32.add
          f64.load
          f64.mul
          local.get 5
          f64.load
          f64.add
          f64.store
        end
        local.get 14
        local.get 9
        i32.add
        local.set 14
        local.get 8
        i32.const 1
        i32.add
        local.tee 8
        local.get 6
        i32.ne
        br_if 0 (;@2;)
      end
      local.get 12
      local.get 9
      i32.add
      local.set 12
      local.get 11
      i32.const 1
      i32.add
      local.tee 11
      local.get 6
      i32.ne
      br_if 0 (;@1;)
    end
    block  ;; label = @1
      local.get 0
      br_if 0 (;@1;)
      i32.const 0
      return
    end
    i32.const 1
    local.set 5
    local.get 7
    i32.const 1
    i32.and
    local.set 14
    block  ;; label = @1
      block  ;; label = @2
        local.get 7
        i32.const 1
        i32.ne
        br_if 0 (;@2;)
        f64.const 0x0p+0 (;=0;)
        local.set 15
        i32.const 0
        local.set 5
        br 1 (;@1;)
      end
      i32.const 0
      local.set 4
      i32.const 0
      local.get 7
      i32.const -4
      i32.and
      i32.sub
      local.set 8
      f64.const 0x0p+0 (;=0;)
      local.set 15
      i32.const 67056
      local.set 1
      i32.const 2
      local.set 2
      i32.const 0
      local.set 3
      loop  ;; label = @2
        local.get 1
        i32.const 8
        i32.add
        f64.load
        local.get 2
        local.get 5
        i32.const 7
        i32.div_u
        i32.const 7
        i32.mul
        i32.sub
        f64.convert_i32_u
        f64.mul
        local.get 1
        f64.load
        local.get 5
        local.get 3
        i32.const 7
        i32.div_u
        i32.const 7
        i32.mul
        i32.sub
        f64.convert_i32_u
        f64.mul
        local.get 15
        f64.add
        f64.add
        local.set 15
        local.get 5
        i32.const 2
        i32.add
        local.set 5
        local.get 2
        i32.const 2
        i32.add
        local.set 2
        local.get 1
        i32.const 16
        i32.add
        local.set 1
        local.get 3
        i32.const 2
        i32.add
        local.set 3
        local.get 8
        local.get 4
        i32.const -2
        i32.add
        local.tee 4
        i32.ne
        br_if 0 (;@2;)
      end
      i32.const 0
      local.get 4
      i32.sub
      local.set 5
    end
    block  ;; label = @1
      local.get 14
      i32.eqz
      br_if 0 (;@1;)
      local.get 5
      i32.const 3
      i32.shl
      i32.const 67056
      i32.add
      f64.load
      local.get 5
      i32.const 7
      i32.rem_u
      i32.const 1
      i32.add
      f64.convert_i32_u
      f64.mul
      local.get 15
      f64.add
      local.set 15
    end
    block  ;; label = @1
      local.get 15
      f64.abs
      f64.const 0x1p+31 (;=2.14748e+09;)
      f64.lt
      i32.eqz
      br_if 0 (;@1;)
      local.get 15
      i32.trunc_f64_s
      return
    end
    i32.const -2147483648)
  (func $cmp_i32 (type 0) (param i32 i32) (result i32)
    local.get 0
    i32.load
    local.tee 0
    local.get 1
    i32.load
    local.tee 1
    i32.gt_s
    local.get 0
    local.get 1
    i32.lt_s
    i32.sub)
  (func $cmp_u32 (type 0) (param i32 i32) (result i32)
    local.get 0
    i32.load
    local.tee 0
    local.get 1
    i32.load
    local.tee 1
    i32.gt_u
    local.get 0
    local.get 1
    i32.lt_u
    i32.sub)
  (func $compare (type 1) (param i32 i32 i32) (result i32)
    local.get 1
    local.get 2
    local.get 0
    i32.const 1
    i32.and
    i32.const 2
    i32.shl
    i32.const 1024
    i32.add
    i32.load
    call_indirect (type 0))
  (func $mark (type 1) (param i32 i32 i32) (result i32)
    (local i32 i32 i32 i32 i32)
    local.get 1
    i32.const 4095
    local.get 1
    i32.const 4095
    i32.lt_u
    select
    local.tee 3
    i32.const 1
    i32.add
    local.tee 4
    i32.const 7
    i32.and
    local.set 5
    i32.const 0
    local.set 6
    block  ;; label = @1
      local.get 1
      i32.const 7
      i32.lt_u
      br_if 0 (;@1;)
      local.get 4
      i32.const 8184
      i32.and
      local.set 7
      i32.const 0
      local.set 6
      loop  ;; label = @2
        local.get 6
        i32.const 99824
        i32.add
        i64.const 72340172838076673
        i64.store
        local.get 7
        local.get 6
        i32.const 8
        i32.add
        local.tee 6
        i32.ne
        br_if 0 (;@2;)
      end
    end
    block  ;; label = @1
      local.get 5
      i32.eqz
      br_if 0 (;@1;)
      local.get 6
      i32.const 99824
      i32.add
      local.set 6
      loop  ;; label = @2
        local.get 6
        i32.const 1
        i32.store8
        local.get 6
        i32.const 1
        i32.add
        local.set 6
        local.get 5
        i32.const -1
        i32.add
        local.tee 5
        br_if 0 (;@2;)
      end
    end
    block  ;; label = @1
      local.get 3
      local.get 0
      i32.lt_u
      br_if 0 (;@1;)
      loop  ;; label = @2
        local.get 0
        i32.const 99824
        i32.add
        i32.const 0
        i32.store8
        local.get 0
        local.get 2
        i32.add
        local.tee 0
        local.get 3
        i32.le_u
        br_if 0 (;@2;)
      end
    end
    local.get 4
    i32.const 3
    i32.and
    local.set 5
    block  ;; label = @1
      block  ;; label = @2
        local.get 1
        i32.const 3
        i32.ge_u
        br_if 0 (;@2;)
        i32.const 0
        local.set 6
        i32.const 0
        local.set 0
        br 1 (;@1;)
      end
      local.get 4
      i32.const 8188
      i32.and
      local.set 3
      i32.const 0
      local.set 6
      i32.const 0
      local.set 0
      loop  ;; label = @2
        local.get 0
        i32.const 3
        i32.mul
        local.get 6
        i32.const 99824
        i32.add
        i32.load8_u
        i32.add
        i32.const 3
        i32.mul
        local.get 6
        i32.const 99825
        i32.add
        i32.load8_u
        i32.add
        i32.const 3
        i32.mul
        local.get 6
        i32.const 99826
        i32.add
        i32.load8_u
        i32.add
        i32.const 3
        i32.mul
        local.get 6
        i32.const 99827
        i32.add
        i32.load8_u
        i32.add
        local.set 0
        local.get 3
        local.get 6
        i32.const 4
        i32.add
        local.tee 6
        i32.ne
        br_if 0 (;@2;)
      end
    end
    block  ;; label = @1
      local.get 5
      i32.eqz
      br_if 0 (;@1;)
      local.get 6
      i32.const 99824
      i32.add
      local.set 6
      loop  ;; label = @2
        local.get 0
        i32.const 3
        i32.mul
        local.get 6
        i32.load8_u
        i32.add
        local.set 0
        local.get 6
        i32.const 1
        i32.add
        local.set 6
        local.get 5
        i32.const -1
        i32.add
        local.tee 5
        br_if 0 (;@2;)
      end
    end
    local.get 0)
  (func $mark_at (type 1) (param i32 i32 i32) (result i32)
    (local i32)
    i32.const 0
    local.set 3
    loop  ;; label = @1
      local.get 0
      local.get 3
      i32.add
      i32.const 0
      i32.store8
      local.get 3
      local.get 2
      i32.add
      local.tee 3
      local.get 1
      i32.le_u
      br_if 0 (;@1;)
    end
    local.get 1)
  (func $fib (type 2) (param i32) (result i32)
    (local i32 i32 i32)
    block  ;; label = @1
      local.get 0
      i32.const 2
      i32.ge_s
      br_if 0 (;@1;)
      local.get 0
      i32.const 0
      i32.add
      return
    end
    i32.const 0
    local.set 1
    loop  ;; label = @1
      local.get 0
      i32.const -1
      i32.add
      call $fib
      local.get 1
      i32.add
      local.set 1
      local.get 0
      i32.const 3
      i32.gt_u
      local.set 2
      local.get 0
      i32.const -2
      i32.add
      local.tee 3
      local.set 0
      local.get 2
      br_if 0 (;@1;)
    end
    local.get 3
    local.get 1
    i32.add)
  (table (;0;) 3 3 funcref)
  (memory (;0;) 3)
  (global $__stack_pointer (mut i32) (i32.const 169456))
  (export "memory" (memory 0))
  (export "sha" (func $sha))
  (export "bodies" (func $bodies))
  (export "matmul" (func $matmul))
  (export "compare" (func $compare))
  (export "mark" (func $mark))
  (export "mark_at" (func $mark_at))
  (export "fib" (func $fib))
  (elem (;0;) (i32.const 1) func $cmp_i32 $cmp_u32)
  (data $.data (i32.const 1024) "\01\00\00\00\02\00\00\00"))
