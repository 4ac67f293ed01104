;; Every wasi_snapshot_preview1 function behind one export, for the WASI fuzz harness
;; (tests/fuzz/fuzz_wasi.c): call(index, a0..a8) calls function `index` (in the order of
;; src/wasi's table) with the arguments it takes, i32 ones wrapped from the i64s; it returns
;; the errno (0 for proc_exit), or -1 for an index past the last function.
(module
  (import "wasi_snapshot_preview1" "args_get" (func $f0 (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "args_sizes_get" (func $f1 (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "environ_get" (func $f2 (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "environ_sizes_get" (func $f3 (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "clock_res_get" (func $f4 (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "clock_time_get" (func $f5 (param i32 i64 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_advise" (func $f6 (param i32 i64 i64 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_allocate" (func $f7 (param i32 i64 i64) (result i32)))
  (import "wasi_snapshot_preview1" "fd_close" (func $f8 (param i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_datasync" (func $f9 (param i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_fdstat_get" (func $f10 (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_fdstat_set_flags" (func $f11 (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_fdstat_set_rights" (func $f12 (param i32 i64 i64) (result i32)))
  (import "wasi_snapshot_preview1" "fd_filestat_get" (func $f13 (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_filestat_set_size" (func $f14 (param i32 i64) (result i32)))
  (import "wasi_snapshot_preview1" "fd_filestat_set_times" (func $f15 (param i32 i64 i64 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_pread" (func $f16 (param i32 i32 i32 i64 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_prestat_get" (func $f17 (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_prestat_dir_name" (func $f18 (param i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_pwrite" (func $f19 (param i32 i32 i32 i64 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_read" (func $f20 (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_readdir" (func $f21 (param i32 i32 i32 i64 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_renumber" (func $f22 (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_seek" (func $f23 (param i32 i64 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_sync" (func $f24 (param i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_tell" (func $f25 (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_write" (func $f26 (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "path_create_directory" (func $f27 (param i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "path_filestat_get" (func $f28 (param i32 i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "path_filestat_set_times" (func $f29 (param i32 i32 i32 i32 i64 i64 i32) (result i32)))
  (import "wasi_snapshot_preview1" "path_link" (func $f30 (param i32 i32 i32 i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "path_open" (func $f31 (param i32 i32 i32 i32 i32 i64 i64 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "path_readlink" (func $f32 (param i32 i32 i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "path_remove_directory" (func $f33 (param i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "path_rename" (func $f34 (param i32 i32 i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "path_symlink" (func $f35 (param i32 i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "path_unlink_file" (func $f36 (param i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "poll_oneoff" (func $f37 (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "proc_exit" (func $f38 (param i32)))
  (import "wasi_snapshot_preview1" "proc_raise" (func $f39 (param i32) (result i32)))
  (import "wasi_snapshot_preview1" "sched_yield" (func $f40 (result i32)))
  (import "wasi_snapshot_preview1" "random_get" (func $f41 (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "sock_accept" (func $f42 (param i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "sock_recv" (func $f43 (param i32 i32 i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "sock_send" (func $f44 (param i32 i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "sock_shutdown" (func $f45 (param i32 i32) (result i32)))
  (memory (export "memory") 1 4)
  (func (export "call") (param $i i32) (param $a0 i64) (param $a1 i64) (param $a2 i64) (param $a3 i64)
        (param $a4 i64) (param $a5 i64) (param $a6 i64) (param $a7 i64) (param $a8 i64) (result i32)
    (block $b45
    (block $b44
    (block $b43
    (block $b42
    (block $b41
    (block $b40
    (block $b39
    (block $b38
    (block $b37
    (block $b36
    (block $b35
    (block $b34
    (block $b33
    (block $b32
    (block $b31
    (block $b30
    (block $b29
    (block $b28
    (block $b27
    (block $b26
    (block $b25
    (block $b24
    (block $b23
    (block $b22
    (block $b21
    (block $b20
    (block $b19
    (block $b18
    (block $b17
    (block $b16
    (block $b15
    (block $b14
    (block $b13
    (block $b12
    (block $b11
    (block $b10
    (block $b9
    (block $b8
    (block $b7
    (block $b6
    (block $b5
    (block $b4
    (block $b3
    (block $b2
    (block $b1
    (block $b0
    (block $none
      (br_table $b0 $b1 $b2 $b3 $b4 $b5 $b6 $b7 $b8 $b9 $b10 $b11 $b12 $b13 $b14 $b15 $b16 $b17 $b18 $b19 $b20 $b21 $b22 $b23 $b24 $b25 $b26 $b27 $b28 $b29 $b30 $b31 $b32 $b33 $b34 $b35 $b36 $b37 $b38 $b39 $b40 $b41 $b42 $b43 $b44 $b45 $none (local.get $i)))
    (return (i32.const -1)))
    (return (call $f0 (i32.wrap_i64 (local.get $a0)) (i32.wrap_i64 (local.get $a1)))))
    (return (call $f1 (i32.wrap_i64 (local.get $a0)) (i32.wrap_i64 (local.get $a1)))))
    (return (call $f2 (i32.wrap_i64 (local.get $a0)) (i32.wrap_i64 (local.get $a1)))))
    (return (call $f3 (i32.wrap_i64 (local.get $a0)) (i32.wrap_i64 (local.get $a1)))))
    (return (call $f4 (i32.wrap_i64 (local.get $a0)) (i32.wrap_i64 (local.get $a1)))))
    (return (call $f5 (i32.wrap_i64 (local.get $a0)) (local.get $a1) (i32.wrap_i64 (local.get $a2)))))
    (return (call $f6 (i32.wrap_i64 (local.get $a0)) (local.get $a1) (local.get $a2) (i32.wrap_i64 (local.get $a3)))))
    (return (call $f7 (i32.wrap_i64 (local.get $a0)) (local.get $a1) (local.get $a2))))
    (return (call $f8 (i32.wrap_i64 (local.get $a0)))))
    (return (call $f9 (i32.wrap_i64 (local.get $a0)))))
    (return (call $f10 (i32.wrap_i64 (local.get $a0)) (i32.wrap_i64 (local.get $a1)))))
    (return (call $f11 (i32.wrap_i64 (local.get $a0)) (i32.wrap_i64 (local.get $a1)))))
    (return (call $f12 (i32.wrap_i64 (local.get $a0)) (local.get $a1) (local.get $a2))))
    (return (call $f13 (i32.wrap_i64 (local.get $a0)) (i32.wrap_i64 (local.get $a1)))))
    (return (call $f14 (i32.wrap_i64 (local.get $a0)) (local.get $a1))))
    (return (call $f15 (i32.wrap_i64 (local.get $a0)) (local.get $a1) (local.get $a2) (i32.wrap_i64 (local.get $a3)))))
    (return (call $f16 (i32.wrap_i64 (local.get $a0)) (i32.wrap_i64 (local.get $a1)) (i32.wrap_i64 (local.get $a2)) (local.get $a3) (i32.wrap_i64 (local.get $a4)))))
    (return (call $f17 (i32.wrap_i64 (local.get $a0)) (i32.wrap_i64 (local.get $a1)))))
    (return (call $f18 (i32.wrap_i64 (local.get $a0)) (i32.wrap_i64 (local.get $a1)) (i32.wrap_i64 (local.get $a2)))))
    (return (call $f19 (i32.wrap_i64 (local.get $a0)) (i32.wrap_i64 (local.get $a1)) (i32.wrap_i64 (local.get $a2)) (local.get $a3) (i32.wrap_i64 (local.get $a4)))))
    (return (call $f20 (i32.wrap_i64 (local.get $a0)) (i32.wrap_i64 (local.get $a1)) (i32.wrap_i64 (local.get $a2)) (i32.wrap_i64 (local.get $a3)))))
    (return (call $f21 (i32.wrap_i64 (local.get $a0)) (i32.wrap_i64 (local.get $a1)) (i32.wrap_i64 (local.get $a2)) (local.get $a3) (i32.wrap_i64 (local.get $a4)))))
    (return (call $f22 (i32.wrap_i64 (local.get $a0)) (i32.wrap_i64 (local.get $a1)))))
    (return (call $f23 (i32.wrap_i64 (local.get $a0)) (local.get $a1) (i32.wrap_i64 (local.get $a2)) (i32.wrap_i64 (local.get $a3)))))
    (return (call $f24 (i32.wrap_i64 (local.get $a0)))))
    (return (call $f25 (i32.wrap_i64 (local.get $a0)) (i32.wrap_i64 (local.get $a1)))))
    (return (call $f26 (i32.wrap_i64 (local.get $a0)) (i32.wrap_i64 (local.get $a1)) (i32.wrap_i64 (local.get $a2)) (i32.wrap_i64 (local.get $a3)))))
    (return (call $f27 (i32.wrap_i64 (local.get $a0)) (i32.wrap_i64 (local.get $a1)) (i32.wrap_i64 (local.get $a2)))))
    (return (call $f28 (i32.wrap_i64 (local.get $a0)) (i32.wrap_i64 (local.get $a1)) (i32.wrap_i64 (local.get $a2)) (i32.wrap_i64 (local.get $a3)) (i32.wrap_i64 (local.get $a4)))))
    (return (call $f29 (i32.wrap_i64 (local.get $a0)) (i32.wrap_i64 (local.get $a1)) (i32.wrap_i64 (local.get $a2)) (i32.wrap_i64 (local.get $a3)) (local.get $a4) (local.get $a5) (i32.wrap_i64 (local.get $a6)))))
    (return (call $f30 (i32.wrap_i64 (local.get $a0)) (i32.wrap_i64 (local.get $a1)) (i32.wrap_i64 (local.get $a2)) (i32.wrap_i64 (local.get $a3)) (i32.wrap_i64 (local.get $a4)) (i32.wrap_i64 (local.get $a5)) (i32.wrap_i64 (local.get $a6)))))
    (return (call $f31 (i32.wrap_i64 (local.get $a0)) (i32.wrap_i64 (local.get $a1)) (i32.wrap_i64 (local.get $a2)) (i32.wrap_i64 (local.get $a3)) (i32.wrap_i64 (local.get $a4)) (local.get $a5) (local.get $a6) (i32.wrap_i64 (local.get $a7)) (i32.wrap_i64 (local.get $a8)))))
    (return (call $f32 (i32.wrap_i64 (local.get $a0)) (i32.wrap_i64 (local.get $a1)) (i32.wrap_i64 (local.get $a2)) (i32.wrap_i64 (local.get $a3)) (i32.wrap_i64 (local.get $a4)) (i32.wrap_i64 (local.get $a5)))))
    (return (call $f33 (i32.wrap_i64 (local.get $a0)) (i32.wrap_i64 (local.get $a1)) (i32.wrap_i64 (local.get $a2)))))
    (return (call $f34 (i32.wrap_i64 (local.get $a0)) (i32.wrap_i64 (local.get $a1)) (i32.wrap_i64 (local.get $a2)) (i32.wrap_i64 (local.get $a3)) (i32.wrap_i64 (local.get $a4)) (i32.wrap_i64 (local.get $a5)))))
    (return (call $f35 (i32.wrap_i64 (local.get $a0)) (i32.wrap_i64 (local.get $a1)) (i32.wrap_i64 (local.get $a2)) (i32.wrap_i64 (local.get $a3)) (i32.wrap_i64 (local.get $a4)))))
    (return (call $f36 (i32.wrap_i64 (local.get $a0)) (i32.wrap_i64 (local.get $a1)) (i32.wrap_i64 (local.get $a2)))))
    (return (call $f37 (i32.wrap_i64 (local.get $a0)) (i32.wrap_i64 (local.get $a1)) (i32.wrap_i64 (local.get $a2)) (i32.wrap_i64 (local.get $a3)))))
    (call $f38 (i32.wrap_i64 (local.get $a0))) (return (i32.const 0)))
    (return (call $f39 (i32.wrap_i64 (local.get $a0)))))
    (return (call $f40)))
    (return (call $f41 (i32.wrap_i64 (local.get $a0)) (i32.wrap_i64 (local.get $a1)))))
    (return (call $f42 (i32.wrap_i64 (local.get $a0)) (i32.wrap_i64 (local.get $a1)) (i32.wrap_i64 (local.get $a2)))))
    (return (call $f43 (i32.wrap_i64 (local.get $a0)) (i32.wrap_i64 (local.get $a1)) (i32.wrap_i64 (local.get $a2)) (i32.wrap_i64 (local.get $a3)) (i32.wrap_i64 (local.get $a4)) (i32.wrap_i64 (local.get $a5)))))
    (return (call $f44 (i32.wrap_i64 (local.get $a0)) (i32.wrap_i64 (local.get $a1)) (i32.wrap_i64 (local.get $a2)) (i32.wrap_i64 (local.get $a3)) (i32.wrap_i64 (local.get $a4)))))
    (return (call $f45 (i32.wrap_i64 (local.get $a0)) (i32.wrap_i64 (local.get $a1))))
    (i32.const -1)))
