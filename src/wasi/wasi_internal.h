/*
 * Private to src/wasi/: the WASI context and the contracts between the files (one
 * concern each):
 *
 *   mem.c      guest memory: bounds-checked ranges, little-endian loads and stores
 *   table.c    the wasi_snapshot_preview1 function table (names, signatures, handlers)
 *              and the dispatcher
 *   ctx.c      the context: configuration copies, lifetime, copy (fork)
 *   args.c     args_*, environ_*
 *   clock.c    clock_res_get, clock_time_get: the virtual clocks
 *   random.c   random_get
 *   fd.c       the descriptor table: fd_close, fd_renumber, fd_fdstat_*, fd_prestat_*
 *   stdio.c    the standard streams: callbacks, buffers, stdin input and waiting
 *   fd_io.c    fd_read, fd_write, fd_pread, fd_pwrite, fd_seek, fd_tell and the other fd_*
 *   path.c     path_*
 *   poll.c     poll_oneoff
 *   proc.c     proc_exit, proc_raise, sched_yield, sock_* (fixed answers)
 *   state.c    the state a snapshot holds: serialization and parsing
 *
 * Guest layouts are wasm32 little-endian with the witx's byte offsets; nothing is ever
 * copied as a host struct.
 */
#ifndef RI_WASI_INTERNAL_H
#define RI_WASI_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ri/engine.h"
#include "ri/wasi.h"
#include "wasi/wasi.h"
#include "util/buf.h"
#include "util/le.h"

/* ---- errno (typenames.witx) --------------------------------------------------------- */
enum {
    WASI_ESUCCESS = 0, WASI_E2BIG = 1, WASI_EACCES = 2, WASI_EAGAIN = 6, WASI_EBADF = 8, WASI_EBUSY = 10,
    WASI_EEXIST = 20, WASI_EFAULT = 21, WASI_EFBIG = 22, WASI_EILSEQ = 25, WASI_EINVAL = 28, WASI_EIO = 29,
    WASI_EISDIR = 31, WASI_ELOOP = 32, WASI_EMFILE = 33, WASI_ENAMETOOLONG = 37, WASI_ENOENT = 44, WASI_ENOMEM = 48,
    WASI_ENOSPC = 51, WASI_ENOSYS = 52, WASI_ENOTDIR = 54, WASI_ENOTEMPTY = 55, WASI_ENOTSOCK = 57,
    WASI_ENOTSUP = 58, WASI_EOVERFLOW = 61, WASI_EPERM = 63, WASI_ESPIPE = 70, WASI_EXDEV = 75,
    WASI_ENOTCAPABLE = 76,
};

/* rights (bit numbers of typenames.witx) */
#define WASI_RIGHT(n) (UINT64_C(1) << (n))
enum {
    R_FD_DATASYNC = 0, R_FD_READ = 1, R_FD_SEEK = 2, R_FD_FDSTAT_SET_FLAGS = 3, R_FD_SYNC = 4, R_FD_TELL = 5,
    R_FD_WRITE = 6, R_FD_ADVISE = 7, R_FD_ALLOCATE = 8, R_PATH_CREATE_DIRECTORY = 9, R_PATH_CREATE_FILE = 10,
    R_PATH_LINK_SOURCE = 11, R_PATH_LINK_TARGET = 12, R_PATH_OPEN = 13, R_FD_READDIR = 14,
    R_PATH_READLINK = 15, R_PATH_RENAME_SOURCE = 16, R_PATH_RENAME_TARGET = 17, R_PATH_FILESTAT_GET = 18,
    R_PATH_FILESTAT_SET_SIZE = 19, R_PATH_FILESTAT_SET_TIMES = 20, R_FD_FILESTAT_GET = 21,
    R_FD_FILESTAT_SET_SIZE = 22, R_FD_FILESTAT_SET_TIMES = 23, R_PATH_SYMLINK = 24,
    R_PATH_REMOVE_DIRECTORY = 25, R_PATH_UNLINK_FILE = 26, R_POLL_FD_READWRITE = 27, R_SOCK_SHUTDOWN = 28,
    R_SOCK_ACCEPT = 29,
};
#define WASI_RIGHTS_ALL ((UINT64_C(1) << 30) - 1)

/* filetype (u8), fdflags (u16), whence (u8), eventtype (u8), subclockflags (u16) */
enum { FT_UNKNOWN = 0, FT_CHARACTER_DEVICE = 2, FT_DIRECTORY = 3, FT_REGULAR_FILE = 4, FT_SYMBOLIC_LINK = 7 };
enum { FDFL_APPEND = 1, FDFL_DSYNC = 2, FDFL_NONBLOCK = 4, FDFL_RSYNC = 8, FDFL_SYNC = 16 };
enum { WHENCE_SET = 0, WHENCE_CUR = 1, WHENCE_END = 2 };
enum { EV_CLOCK = 0, EV_FD_READ = 1, EV_FD_WRITE = 2 };
enum { SUBCLOCK_ABSTIME = 1 };
enum { CLOCK_REALTIME_ID = 0, CLOCK_MONOTONIC_ID = 1, CLOCK_PROCESS_CPUTIME_ID = 2, CLOCK_THREAD_CPUTIME_ID = 3 };

/* ---- guest memory (mem.c) ------------------------------------------------------------- */

typedef struct wasi_mem {
    uint8_t *data; /* NULL: the module has no memory 0 (every access faults) */
    uint64_t size;
} wasi_mem;

wasi_mem wasi_mem_of(ri_host_call *call);
/* The guest bytes [ptr, ptr + len), or NULL if any of them is outside the memory. */
uint8_t *wasi_mem_range(const wasi_mem *m, uint32_t ptr, uint64_t len);
/* Loads and stores; false (EFAULT) outside the memory. */
bool wasi_load_u32(const wasi_mem *m, uint32_t ptr, uint32_t *out);
bool wasi_load_u64(const wasi_mem *m, uint32_t ptr, uint64_t *out);
bool wasi_store_u32(const wasi_mem *m, uint32_t ptr, uint32_t v);
bool wasi_store_u64(const wasi_mem *m, uint32_t ptr, uint64_t v);
/* Host-buffer encoders for structs built before one checked copy. */

/* An iovec/ciovec array, checked: every entry's buffer inside the memory, the total
 * within UINT32_MAX (else EINVAL, as the total must fit the u32 size result). */
typedef struct wasi_iovs {
    uint32_t n;
    uint8_t *entries; /* n * 8 guest bytes: buf u32 @0, buf_len u32 @4 */
    uint64_t total;
} wasi_iovs;
uint32_t wasi_iovs_get(const wasi_mem *m, uint32_t iovs, uint32_t n, wasi_iovs *out);
/* Entry i's buffer (already checked by wasi_iovs_get). */
uint8_t *wasi_iov_buf(const wasi_mem *m, const wasi_iovs *v, uint32_t i, uint32_t *len);
/* Scatter src into the iovecs, returns the bytes copied (at most total). */
uint64_t wasi_iovs_scatter(const wasi_mem *m, const wasi_iovs *v, const uint8_t *src, uint64_t len);

/* ---- the descriptor table (fd.c) -------------------------------------------------------- */

typedef enum wasi_fd_kind {
    WASI_FD_FREE = 0,
    WASI_FD_STDIN,
    WASI_FD_STDOUT,
    WASI_FD_STDERR,
    WASI_FD_PREOPEN, /* a preopened directory of the workspace */
    WASI_FD_FILE,    /* a regular file (or symlink opened with nofollow) of the workspace */
    WASI_FD_DIR,     /* a directory of the workspace opened by path_open */
} wasi_fd_kind;

typedef struct wasi_fd {
    wasi_fd_kind kind;
    uint16_t fdflags;
    uint64_t rights_base, rights_inheriting;
    uint64_t ino;     /* workspace inode (PREOPEN, FILE, DIR) */
    uint64_t offset;  /* FILE: the file offset */
    char *name;       /* PREOPEN: the guest path ("/") */
} wasi_fd;

/* The descriptor fd if open, else NULL. */
wasi_fd *wasi_fd_get(ri_wasi *w, uint32_t fd);
/* The descriptor fd if open and holding every right in `rights`: errno via *e. */
wasi_fd *wasi_fd_check(ri_wasi *w, uint32_t fd, uint64_t rights, uint32_t *e);
/* A free descriptor number (the lowest), the table grown if needed: errno (EMFILE when
 * WASI_MAX_FDS are open, ENOMEM). */
uint32_t wasi_fd_alloc(ri_wasi *w, uint32_t *fd);
void wasi_fd_release(ri_wasi *w, wasi_fd *f);
#define WASI_MAX_FDS 1024u

/* ---- the workspace's files (fs.c) ------------------------------------------------------- */

/* Descriptors of kind FILE, DIR and PREOPEN name workspace inodes; these serve them. */
void wasi_fs_unpin(ri_wasi *w, wasi_fd *f);
uint8_t wasi_fs_filetype(ri_wasi *w, uint64_t ino);
/* Read into / write from the iovecs at offset *off (advanced by the count; append: from
 * the end); *n the bytes moved. */
uint32_t wasi_fs_read(ri_wasi *w, wasi_fd *f, const wasi_mem *m, const wasi_iovs *v, uint64_t *off, uint64_t *n);
uint32_t wasi_fs_write(ri_wasi *w, wasi_fd *f, const wasi_mem *m, const wasi_iovs *v, uint64_t *off, bool append,
                       uint64_t *n);
/* filestat (64 bytes at p, the witx layout) of an inode. */
uint32_t wasi_fs_filestat(ri_wasi *w, uint64_t ino, uint8_t *p);
uint32_t wasi_fs_size(ri_wasi *w, uint64_t ino, uint64_t *size);
/* A wsfs_filestat (stat) in the witx layout at p (64 bytes). */
void wasi_filestat_put(uint8_t *p, const void *stat);
uint32_t wasi_fst_flags_check(uint32_t flags);
/* The context's own file system: a new empty one, a fork of w's, or one taken over. */
bool wasi_fs_create(ri_wasi *w);
void *wasi_fs_fork(const ri_wasi *w);
bool wasi_fs_attach(ri_wasi *w, void *fs);
void wasi_fs_free(ri_wasi *w);
/* Descriptor 3: the workspace's root, preopened as "/". */
bool wasi_fd_preopen_root(ri_wasi *w);
/* The rights a directory descriptor can use (path.c). */
uint64_t wasi_dir_rights(void);

/* ---- standard streams (stdio.c) ----------------------------------------------------------- */

/* Writes to stdout/stderr: errno. */
uint32_t wasi_stdio_write(ri_wasi *w, ri_wasi_stream s, const uint8_t *data, size_t len);
/* Makes stdin input available: pulls from the callback when the buffer is empty.
 * WASI_IN_READY (bytes buffered), WASI_IN_EOF, WASI_IN_AGAIN (none yet), WASI_IN_ERROR. */
typedef enum wasi_in_state { WASI_IN_READY, WASI_IN_EOF, WASI_IN_AGAIN, WASI_IN_ERROR } wasi_in_state;
wasi_in_state wasi_stdin_poll(ri_wasi *w);
/* Takes up to cap buffered bytes (after a READY poll). */
size_t wasi_stdin_take(ri_wasi *w, uint8_t *dst, size_t cap);
size_t wasi_stdin_buffered(const ri_wasi *w);
/* Whether the call in progress may pause at a stop point (its run suspends on yields). */
bool wasi_may_pause(ri_host_call *call);
/* For a host function with no stdin input yet: true if the process may pause, and then
 * the process waits (WASI_WAIT_INPUT) once the function returns with ri_host_yield. */
bool wasi_stdin_wait(ri_wasi *w, ri_host_call *call);

/* ---- the call in progress --------------------------------------------------------------- */

/* A handler's outcome besides an errno (< 0x10000). */
#define WASI_R_EXIT 0x10000u   /* proc_exit: the process ends (w->exit_code) */
#define WASI_R_WAIT 0x10001u   /* no stdin yet: errno 0 now, completed on resume (w->wait) */
#define WASI_R_YIELD 0x10002u  /* sched_yield: errno 0, then a stop point */

typedef struct wasi_call {
    ri_wasi *w;
    ri_host_call *host;
    wasi_mem mem;
} wasi_call;

typedef uint32_t (*wasi_handler)(wasi_call *c, const ri_val *args);

/* A read or poll that waits for stdin: what to complete when input comes (resume). */
/* INPUT: a host function of another profile (an interpreter's own stdin read) returned
 * "nothing yet" and is called again by the program once input or its end has come:
 * nothing to complete. */
typedef enum wasi_wait_kind { WASI_WAIT_NONE = 0, WASI_WAIT_READ = 1, WASI_WAIT_POLL = 2, WASI_WAIT_INPUT = 3 } wasi_wait_kind;
typedef struct wasi_wait {
    wasi_wait_kind kind;
    uint32_t a, b, c, d; /* READ: iovs, iovs_len, nread_ptr; POLL: in, out, nsubscriptions, nevents_ptr */
} wasi_wait;

/* Complete a wait if stdin has input (or its end) now; false: still none. The call
 * returned 0 already, so a failure now (EIO) shows as 0 bytes. */
bool wasi_read_complete(wasi_call *c, uint32_t iovs, uint32_t niovs, uint32_t nread_ptr);
bool wasi_poll_complete(wasi_call *c, uint32_t in, uint32_t out, uint32_t nsubs, uint32_t nevents_ptr);

/* ---- the virtual clock (clock.c) ---------------------------------------------------------- */
uint64_t wasi_clock_now(const ri_wasi *w, uint32_t id); /* without advancing */
void wasi_clock_advance_to(ri_wasi *w, uint64_t monotonic_ns);
/* A subscription's deadline (absolute, or relative to the monotonic time `start`, on clock
 * id) as a monotonic time. */
uint64_t wasi_clock_deadline(const ri_wasi *w, uint32_t id, uint64_t timeout, bool absolute, uint64_t start);

/* ---- the context ----------------------------------------------------------------------------- */

typedef struct wasi_outbuf {
    uint8_t *data;
    size_t len, cap;
} wasi_outbuf;

struct ri_wasi {
    /* configuration (owned copies) */
    uint32_t argc, nenv;
    char **argv, **env;
    ri_wasi_write_fn write;
    void *write_user;
    ri_wasi_read_fn read;
    void *read_user;
    uint64_t clock_step_ns, max_output;
    int64_t realtime_base_ns; /* the event time */
    ri_wasi_services services;

    /* state (state.c serializes it) */
    uint64_t monotonic_ns;    /* the virtual clock: ns since the process began */
    uint8_t *in;              /* stdin bytes received, not yet read */
    size_t in_len, in_cap;
    bool in_closed;           /* the embedder closed stdin (or the callback said EOF) */
    wasi_outbuf out[2];       /* stdout, stderr when buffered */
    wasi_fd *fds;
    uint32_t nfds;
    bool exited;
    uint32_t exit_code;
    wasi_wait wait;
    void *fs;                 /* the workspace file system (not yet wired) */
    bool yield_pauses;        /* sched_yield is a stop point */
    bool no_preopen;          /* configuration: descriptor 3 is not the workspace */
    uint32_t terminals;       /* configuration: RI_WASI_TERMINAL_* of the standard streams */
};

/* Handlers, one per function (table.c lists them). */
#define WASI_HANDLER(name) uint32_t wasi_##name(wasi_call *c, const ri_val *args)
WASI_HANDLER(args_get); WASI_HANDLER(args_sizes_get); WASI_HANDLER(environ_get); WASI_HANDLER(environ_sizes_get);
WASI_HANDLER(clock_res_get); WASI_HANDLER(clock_time_get);
WASI_HANDLER(fd_advise); WASI_HANDLER(fd_allocate); WASI_HANDLER(fd_close); WASI_HANDLER(fd_datasync);
WASI_HANDLER(fd_fdstat_get); WASI_HANDLER(fd_fdstat_set_flags); WASI_HANDLER(fd_fdstat_set_rights);
WASI_HANDLER(fd_filestat_get); WASI_HANDLER(fd_filestat_set_size); WASI_HANDLER(fd_filestat_set_times);
WASI_HANDLER(fd_pread); WASI_HANDLER(fd_prestat_get); WASI_HANDLER(fd_prestat_dir_name); WASI_HANDLER(fd_pwrite);
WASI_HANDLER(fd_read); WASI_HANDLER(fd_readdir); WASI_HANDLER(fd_renumber); WASI_HANDLER(fd_seek);
WASI_HANDLER(fd_sync); WASI_HANDLER(fd_tell); WASI_HANDLER(fd_write);
WASI_HANDLER(path_create_directory); WASI_HANDLER(path_filestat_get); WASI_HANDLER(path_filestat_set_times);
WASI_HANDLER(path_link); WASI_HANDLER(path_open); WASI_HANDLER(path_readlink); WASI_HANDLER(path_remove_directory);
WASI_HANDLER(path_rename); WASI_HANDLER(path_symlink); WASI_HANDLER(path_unlink_file);
WASI_HANDLER(poll_oneoff); WASI_HANDLER(proc_exit); WASI_HANDLER(proc_raise); WASI_HANDLER(sched_yield);
WASI_HANDLER(random_get);
WASI_HANDLER(sock_accept); WASI_HANDLER(sock_recv); WASI_HANDLER(sock_send); WASI_HANDLER(sock_shutdown);

/* Arguments as the unsigned values the witx declares. */
static inline uint32_t wasi_arg32(const ri_val *args, int i) { return (uint32_t)args[i].of.i32; }
static inline uint64_t wasi_arg64(const ri_val *args, int i) { return (uint64_t)args[i].of.i64; }

#endif
