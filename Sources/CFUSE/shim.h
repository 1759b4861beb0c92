#ifndef FOLIO_CFUSE_SHIM_H
#define FOLIO_CFUSE_SHIM_H

#define FUSE_USE_VERSION 312
#include <fuse_lowlevel.h>
#include <sys/xattr.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#endif
#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif
#ifndef O_PATH
#define O_PATH 010000000
#endif
#ifndef XATTR_CREATE
#define XATTR_CREATE 0x1
#endif
#ifndef XATTR_REPLACE
#define XATTR_REPLACE 0x2
#endif

static const unsigned int cfuse_rename_noreplace = RENAME_NOREPLACE;
static const unsigned int cfuse_rename_exchange = RENAME_EXCHANGE;
static const int cfuse_xattr_create = XATTR_CREATE;
static const int cfuse_xattr_replace = XATTR_REPLACE;
/// A descriptor that names a file without opening it.
static const int cfuse_o_path = O_PATH;
/// `utimensat`'s "leave this time alone".
static const long cfuse_utime_omit = UTIME_OMIT;
/// `utimensat`'s "set this time to now".
static const long cfuse_utime_now = UTIME_NOW;

/// Closes every descriptor from `first` on (inherited ones a helper must not keep).
static inline int cfuse_close_from(unsigned int first) {
#ifdef SYS_close_range
    return (int)syscall(SYS_close_range, first, ~0U, 0);
#else
    return -1;
#endif
}


/// FUSE_ARGS_INIT is a macro; build an empty argument vector.
static inline struct fuse_args cfuse_args_init(int argc, char **argv) {
    struct fuse_args args = FUSE_ARGS_INIT(argc, argv);
    return args;
}

/// Sets the fd-backed buffer vector for a zero-copy read reply.
static inline int cfuse_reply_fd(fuse_req_t req, int fd, off_t offset, size_t size) {
    struct fuse_bufvec buf = FUSE_BUFVEC_INIT(size);
    buf.buf[0].flags = (enum fuse_buf_flags)(FUSE_BUF_IS_FD | FUSE_BUF_FD_SEEK);
    buf.buf[0].fd = fd;
    buf.buf[0].pos = offset;
    return fuse_reply_data(req, &buf, FUSE_BUF_SPLICE_MOVE);
}

#endif
