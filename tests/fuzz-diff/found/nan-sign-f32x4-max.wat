(module
 (type $none_=>_none (func))
 (type $none_=>_i32_i64_i32_i64_v128 (func (result i32 i64 i32 i64 v128)))
 (type $i32_=>_none (func (param i32)))
 (type $i64_=>_none (func (param i64)))
 (type $f64_=>_none (func (param f64)))
 (type $none_=>_i32 (func (result i32)))
 (type $f64_v128_f32_=>_i64 (func (param f64 v128 f32) (result i64)))
 (type $none_=>_f64 (func (result f64)))
 (type $none_=>_f32 (func (result f32)))
 (type $f64_i32_=>_i32 (func (param f64 i32) (result i32)))
 (type $f32_v128_=>_f32 (func (param f32 v128) (result f32)))
 (type $f32_=>_i64 (func (param f32) (result i64)))
 (type $f32_=>_f32 (func (param f32) (result f32)))
 (type $f64_=>_f64 (func (param f64) (result f64)))
 (import "fuzzing-support" "log-i32" (func $fimport$0 (param i32)))
 (import "fuzzing-support" "log-i64" (func $fimport$1 (param i64)))
 (import "fuzzing-support" "log-f64" (func $fimport$2 (param f64)))
 (global $global$0 (mut f32) (f32.const 0))
 (global $global$1 (mut i32) (i32.const -8388609))
 (global $global$2 (mut i32) (i32.const 2147483647))
 (global $global$3 (mut i32) (i32.const -128))
 (global $global$4 (mut i32) (i32.const -15))
 (global $global$5 (mut f32) (f32.const 0))
 (global $global$6 (mut i32) (i32.const 10))
 (memory $0 16 17)
 (elem declare func $fimport$0 $fimport$2)
 (export "memory" (memory $0))
 (export "func" (func $1))
 (export "func_3" (func $4))
 (export "func_6" (func $5))
 (export "func_7" (func $6))
 (export "func_12" (func $7))
 (export "func_12_invoker" (func $8))
 (export "func_19" (func $9))
 (export "func_19_invoker" (func $8))
 (export "hangLimitInitializer" (func $10))
 (export "func_invoker" (func $2))
 (export "func_0" (func $3))
 (func $0 (result i32)
  (local $0 i32)
  (if
   (i32.eqz
    (i32.const 0)
   )
   (return
    (i32.const -28)
   )
  )
  (global.set $global$6
   (i32.sub
    (global.get $global$6)
    (i32.const 1)
   )
  )
  (i32.xor
   (i32.load8_u
    (i32.const 15)
   )
   (i32.add
    (i32.shl
     (local.tee $0
      (i32.xor
       (i32.load8_u
        (i32.const 14)
       )
       (i32.add
        (i32.shl
         (local.tee $0
          (i32.xor
           (i32.load8_u
            (i32.const 13)
           )
           (i32.add
            (i32.shl
             (local.tee $0
              (i32.xor
               (i32.load8_u
                (i32.const 12)
               )
               (i32.add
                (i32.shl
                 (local.tee $0
                  (i32.xor
                   (i32.load8_u
                    (i32.const 11)
                   )
                   (i32.add
                    (i32.shl
                     (local.tee $0
                      (i32.xor
                       (i32.load8_u
                        (i32.const 10)
                       )
                       (i32.add
                        (i32.shl
                         (local.tee $0
                          (i32.xor
                           (i32.load8_u
                            (i32.const 9)
                           )
                           (i32.add
                            (i32.shl
                             (local.tee $0
                              (i32.xor
                               (i32.load8_u
                                (i32.const 8)
                               )
                               (i32.add
                                (i32.shl
                                 (local.tee $0
                                  (i32.xor
                                   (i32.load8_u
                                    (i32.const 7)
                                   )
                                   (i32.add
                                    (i32.shl
                                     (local.tee $0
                                      (i32.xor
                                       (i32.load8_u
                                        (i32.const 6)
                                       )
                                       (i32.add
                                        (i32.shl
                                         (local.tee $0
                                          (i32.xor
                                           (i32.load8_u
                                            (i32.const 5)
                                           )
                                           (i32.add
                                            (i32.shl
                                             (local.tee $0
                                              (i32.xor
                                               (i32.load8_u
                                                (i32.const 4)
                                               )
                                               (i32.add
                                                (i32.shl
                                                 (local.tee $0
                                                  (i32.xor
                                                   (i32.load8_u
                                                    (i32.const 3)
                                                   )
                                                   (i32.add
                                                    (i32.shl
                                                     (local.tee $0
                                                      (i32.xor
                                                       (i32.load8_u
                                                        (i32.const 2)
                                                       )
                                                       (i32.add
                                                        (i32.shl
                                                         (local.tee $0
                                                          (i32.xor
                                                           (i32.load8_u
                                                            (i32.const 1)
                                                           )
                                                           (i32.add
                                                            (i32.shl
                                                             (local.tee $0
                                                              (i32.xor
                                                               (i32.load8_u
                                                                (i32.const 0)
                                                               )
                                                               (i32.add
                                                                (i32.shl
                                                                 (local.tee $0
                                                                  (i32.const 5381)
                                                                 )
                                                                 (i32.const 5)
                                                                )
                                                                (local.get $0)
                                                               )
                                                              )
                                                             )
                                                             (i32.const 5)
                                                            )
                                                            (local.get $0)
                                                           )
                                                          )
                                                         )
                                                         (i32.const 5)
                                                        )
                                                        (local.get $0)
                                                       )
                                                      )
                                                     )
                                                     (i32.const 5)
                                                    )
                                                    (local.get $0)
                                                   )
                                                  )
                                                 )
                                                 (i32.const 5)
                                                )
                                                (local.get $0)
                                               )
                                              )
                                             )
                                             (i32.const 5)
                                            )
                                            (local.get $0)
                                           )
                                          )
                                         )
                                         (i32.const 5)
                                        )
                                        (local.get $0)
                                       )
                                      )
                                     )
                                     (i32.const 5)
                                    )
                                    (local.get $0)
                                   )
                                  )
                                 )
                                 (i32.const 5)
                                )
                                (local.get $0)
                               )
                              )
                             )
                             (i32.const 5)
                            )
                            (local.get $0)
                           )
                          )
                         )
                         (i32.const 5)
                        )
                        (local.get $0)
                       )
                      )
                     )
                     (i32.const 5)
                    )
                    (local.get $0)
                   )
                  )
                 )
                 (i32.const 5)
                )
                (local.get $0)
               )
              )
             )
             (i32.const 5)
            )
            (local.get $0)
           )
          )
         )
         (i32.const 5)
        )
        (local.get $0)
       )
      )
     )
     (i32.const 5)
    )
    (local.get $0)
   )
  )
 )
 (func $1 (param $0 f64) (param $1 v128) (param $2 f32) (result i64)
  (drop
   (call $12
    (local.get $0)
   )
  )
  (drop
   (call $11
    (local.get $2)
   )
  )
  (if
   (i32.eqz
    (global.get $global$6)
   )
   (return
    (i64.const -78)
   )
  )
  (global.set $global$6
   (i32.sub
    (global.get $global$6)
    (i32.const 1)
   )
  )
  (call $fimport$0
   (call $0)
  )
  (i64.const -6320)
 )
 (func $2
  (if
   (i32.eqz
    (global.get $global$6)
   )
   (return)
  )
  (global.set $global$6
   (i32.sub
    (global.get $global$6)
    (i32.const 1)
   )
  )
  (drop
   (call $1
    (call $12
     (f64.const 0.171)
    )
    (v128.const i32x4 0x0007ffff 0x00fff044 0xffebe000 0x9d1fdfff)
    (call $11
     (f32.const -128)
    )
   )
  )
 )
 (func $3 (result f64)
  (if
   (i32.eqz
    (global.get $global$6)
   )
   (return
    (call $12
     (f64.const -27540)
    )
   )
  )
  (global.set $global$6
   (i32.sub
    (global.get $global$6)
    (i32.const 1)
   )
  )
  (call $12
   (f64x2.extract_lane 0
    (f32x4.max
     (v128.const i32x4 0xffffffff 0x0000ffb7 0xffffff86 0xff8c3873)
     (v128.const i32x4 0xffd90000 0xfff24d3d 0xff98a809 0xff9ddb3e)
    )
   )
  )
 )
 (func $4 (result f32)
  (local $0 i64)
  (local $1 f64)
  (local $2 v128)
  (if
   (i32.eqz
    (global.get $global$6)
   )
   (return
    (call $11
     (f32.const 4611686018427387904)
    )
   )
  )
  (global.set $global$6
   (i32.sub
    (global.get $global$6)
    (i32.const 1)
   )
  )
  (call $fimport$0
   (i64.eqz
    (i64.trunc_sat_f64_s
     (call $12
      (f64.const -1)
     )
    )
   )
  )
  (call $fimport$0
   (call $0)
  )
  (loop $label$2
   (if
    (i32.eqz
     (global.get $global$6)
    )
    (return
     (call $11
      (f32.const 2147483648)
     )
    )
   )
   (global.set $global$6
    (i32.sub
     (global.get $global$6)
     (i32.const 1)
    )
   )
   (drop
    (call $12
     (f64.promote_f32
      (call $11
       (f32.sub
        (select
         (call $11
          (f32.const 65439)
         )
         (call $11
          (f32.const -108)
         )
         (global.get $global$3)
        )
        (f32.const 0)
       )
      )
     )
    )
   )
   (drop
    (call $11
     (f32.nearest
      (f32.const 0)
     )
    )
   )
   (drop
    (if (result funcref)
     (global.get $global$1)
     (block (result funcref)
      (drop
       (if (result i32)
        (i64.eq
         (call $1
          (call $12
           (f64.const 0)
          )
          (local.get $2)
          (call $11
           (global.get $global$5)
          )
         )
         (local.tee $0
          (i64.const 2147483648)
         )
        )
        (block (result i32)
         (call $fimport$0
          (call $0)
         )
         (i32.const 0)
        )
        (block (result i32)
         (drop
          (i64.trunc_f32_u
           (f32.const 0)
          )
         )
         (call $fimport$0
          (call $0)
         )
         (return
          (f32.const 0)
         )
        )
       )
      )
      (ref.func $fimport$2)
     )
     (ref.func $fimport$0)
    )
   )
   (if
    (i32.eqz
     (global.get $global$6)
    )
    (return
     (call $11
      (f32.const 215)
     )
    )
   )
   (global.set $global$6
    (i32.sub
     (global.get $global$6)
     (i32.const 1)
    )
   )
   (if
    (i32.load8_s offset=22
     (i32.and
      (i32.const 8388608)
      (i32.const 15)
     )
    )
    (block
     (if
      (i32.eqz
       (global.get $global$6)
      )
      (return
       (f32.const 0)
      )
     )
     (global.set $global$6
      (i32.sub
       (global.get $global$6)
       (i32.const 1)
      )
     )
     (global.set $global$0
      (call $11
       (global.get $global$0)
      )
     )
     (call $fimport$1
      (local.get $0)
     )
     (br $label$2)
    )
    (block
     (call $fimport$2
      (call $12
       (f64.mul
        (call $12
         (f64.const 262143.859)
        )
        (block $label$12 (result f64)
         (if
          (i32.eqz
           (global.get $global$6)
          )
          (return
           (f32.const 0)
          )
         )
         (global.set $global$6
          (i32.sub
           (global.get $global$6)
           (i32.const 1)
          )
         )
         (f64.const 0)
        )
       )
      )
     )
     (call $fimport$0
      (call $0)
     )
    )
   )
  )
  (if (result f32)
   (loop $label$14 (result i32)
    (if
     (i32.eqz
      (global.get $global$6)
     )
     (return
      (call $11
       (f32.const 9007199254740992)
      )
     )
    )
    (global.set $global$6
     (i32.sub
      (global.get $global$6)
      (i32.const 1)
     )
    )
    (block $label$16 (result i32)
     (call $fimport$0
      (i32.const -121)
     )
     (br_if $label$14
      (i32.load16_u offset=3 align=1
       (i32.and
        (br_if $label$16
         (global.get $global$4)
         (f32.eq
          (loop $label$17 (result f32)
           (if
            (i32.eqz
             (global.get $global$6)
            )
            (return
             (f32.const 0)
            )
           )
           (global.set $global$6
            (i32.sub
             (global.get $global$6)
             (i32.const 1)
            )
           )
           (br_if $label$17
            (i32.const 127)
           )
           (call $11
            (f32.const 2097151.375)
           )
          )
          (call $11
           (f32.const 32768)
          )
         )
        )
        (i32.const 15)
       )
      )
     )
     (return
      (f32.const 0)
     )
    )
   )
   (block (result f32)
    (v128.store offset=4 align=1
     (i32.and
      (select
       (call $0)
       (loop $label$20 (result i32)
        (if
         (i32.eqz
          (global.get $global$6)
         )
         (return
          (call $11
           (f32.const 110)
          )
         )
        )
        (global.set $global$6
         (i32.sub
          (global.get $global$6)
          (i32.const 1)
         )
        )
        (call $fimport$2
         (local.get $1)
        )
        (br_if $label$20
         (i32.eqz
          (i32.const -129)
         )
        )
        (i16x8.extract_lane_s 5
         (i16x8.ne
          (i32x4.ge_s
           (local.get $2)
           (local.get $2)
          )
          (v128.load offset=2 align=4
           (i32.and
            (global.get $global$2)
            (i32.const 15)
           )
          )
         )
        )
       )
       (i32.const 189)
      )
      (i32.const 15)
     )
     (f64x2.splat
      (local.get $1)
     )
    )
    (call $11
     (f32.const 1)
    )
   )
   (call $11
    (f32.const 144115188075855872)
   )
  )
 )
 (func $5 (param $0 f64) (param $1 i32) (result i32)
  (local.set $0
   (call $12
    (local.get $0)
   )
  )
  (if
   (i32.eqz
    (global.get $global$6)
   )
   (return
    (i32.const -79)
   )
  )
  (global.set $global$6
   (i32.sub
    (global.get $global$6)
    (i32.const 1)
   )
  )
  (select
   (i32.load8_s offset=22
    (i32.and
     (local.get $1)
     (i32.const 15)
    )
   )
   (i32.const -100)
   (block $label$2 (result i32)
    (f32.store offset=2 align=2
     (i32.and
      (i32.xor
       (loop $label$3 (result i32)
        (if
         (i32.eqz
          (global.get $global$6)
         )
         (return
          (local.get $1)
         )
        )
        (global.set $global$6
         (i32.sub
          (global.get $global$6)
          (i32.const 1)
         )
        )
        (block $label$5 (result i32)
         (call $fimport$2
          (call $12
           (f64.min
            (local.get $0)
            (if (result f64)
             (global.get $global$4)
             (block (result f64)
              (drop
               (br_if $label$5
                (global.get $global$1)
                (i32.const 128)
               )
              )
              (br $label$3)
             )
             (loop $label$8 (result f64)
              (if
               (i32.eqz
                (global.get $global$6)
               )
               (return
                (local.get $1)
               )
              )
              (global.set $global$6
               (i32.sub
                (global.get $global$6)
                (i32.const 1)
               )
              )
              (br_if $label$8
               (local.get $1)
              )
              (call $12
               (f64.const -1)
              )
             )
            )
           )
          )
         )
         (local.get $1)
        )
       )
       (if (result i32)
        (select
         (global.get $global$2)
         (local.tee $1
          (i32.const -6335)
         )
         (i32.load16_u offset=22
          (i32.and
           (if (result i32)
            (local.get $1)
            (local.get $1)
            (call $5
             (local.get $0)
             (i32.trunc_sat_f64_u
              (call $12
               (f64.div
                (local.get $0)
                (call $12
                 (f64.const -17592186044415.82)
                )
               )
              )
             )
            )
           )
           (i32.const 15)
          )
         )
        )
        (return
         (local.get $1)
        )
        (if (result i32)
         (local.get $1)
         (block (result i32)
          (drop
           (if (result f64)
            (local.get $1)
            (local.get $0)
            (call $12
             (f64.mul
              (call $12
               (f64.const 165)
              )
              (call $12
               (f64.const 536870912)
              )
             )
            )
           )
          )
          (return
           (local.get $1)
          )
         )
         (i32.const -26064)
        )
       )
      )
      (i32.const 15)
     )
     (call $11
      (f32.const -1125899906842624)
     )
    )
    (global.get $global$3)
   )
  )
 )
 (func $6 (result i32 i64 i32 i64 v128)
  (if
   (i32.eqz
    (global.get $global$6)
   )
   (return
    (tuple.make
     (i32.const 268435455)
     (i64.const 65535)
     (i32.const -2147483648)
     (i64.const -2147483648)
     (v128.const i32x4 0xca208000 0x57070000 0x002e00c1 0xffba0001)
    )
   )
  )
  (global.set $global$6
   (i32.sub
    (global.get $global$6)
    (i32.const 1)
   )
  )
  (tuple.make
   (i32.const 151)
   (i64.const 131072)
   (i32.const -101)
   (i64.const 65536)
   (v128.const i32x4 0x0000008b 0xffffffc6 0xffffc910 0x0000ffb4)
  )
 )
 (func $7 (param $0 f32) (param $1 v128) (result f32)
  (unreachable)
 )
 (func $8
  (nop)
 )
 (func $9 (param $0 f32) (result i64)
  (unreachable)
 )
 (func $10
  (global.set $global$6
   (i32.const 10)
  )
 )
 (func $11 (param $0 f32) (result f32)
  (select
   (local.get $0)
   (f32.const 0)
   (f32.eq
    (local.get $0)
    (local.get $0)
   )
  )
 )
 (func $12 (param $0 f64) (result f64)
  (select
   (local.get $0)
   (f64.const 0)
   (f64.eq
    (local.get $0)
    (local.get $0)
   )
  )
 )
)
