// The floor of a first `find` through FUSE (issue 14's `find` row), in two forms.
//
// Without FLOOR_SOURCE: a read-only tree of folders (d0, d1, ...) holding FLOOR_ITEMS small files in all,
// FLOOR_PER_FOLDER to a folder (f0, f1, ...), computed from inode numbers. The server stores nothing, reads no
// disk and answers every request at once, with readdirplus, and attributes and entries cached as long as the
// kernel allows: what any FUSE filesystem pays for a walk of that shape on this kernel, before it does any work.
//
// With FLOOR_SOURCE=DIR: the same, but each folder's entries are those of the folder at the same place below DIR,
// read when the folder is first listed (`readdir`, and one `fstatat` per entry for its attributes), kept nowhere:
// the least a FUSE filesystem that lists a local remote on first look must do (no ids, no store, no merge).
// Folders are listed to a depth of two (DIR's folders and their entries), the generated remote's shape.
//
// Built and mounted by `Benchmarks/run --only scale`; usage: fuse_floor [-f] [-s] [-o OPTIONS] MOUNTPOINT
// (libfuse's own command line).
#define FUSE_USE_VERSION 34
#include <errno.h>
#include <fuse_lowlevel.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

static unsigned long folders = 100, per_folder = 1000, items = 100000;
static int source = -1;              // FLOOR_SOURCE's descriptor, or -1
static char **source_folders;        // with a source: the names of its folders, by folder number

static const double forever = 1e6;  // seconds: the kernel keeps what it is told

enum { root_ino = 1, first_folder_ino = 2, first_file_ino = 1UL << 32 };

static int is_folder(fuse_ino_t ino) { return ino == root_ino || (ino >= first_folder_ino && ino < first_folder_ino + folders); }

static unsigned long files_in(unsigned long folder) {
    unsigned long start = folder * per_folder;
    return start >= items ? 0 : (items - start < per_folder ? items - start : per_folder);
}

static int is_file(fuse_ino_t ino) {
    if (ino < first_file_ino) return 0;
    unsigned long index = ino - first_file_ino;
    return index / per_folder < folders && index % per_folder < files_in(index / per_folder);
}

static int describe(fuse_ino_t ino, struct stat *status) {
    memset(status, 0, sizeof *status);
    status->st_ino = ino;
    if (is_folder(ino)) {
        status->st_mode = S_IFDIR | 0755;
        status->st_nlink = 2;
        status->st_size = 4096;
    } else if (is_file(ino)) {
        status->st_mode = S_IFREG | 0644;
        status->st_nlink = 1;
        status->st_size = 100;
    } else {
        return ENOENT;
    }
    return 0;
}

static void entry_of(fuse_ino_t ino, struct fuse_entry_param *entry) {
    memset(entry, 0, sizeof *entry);
    entry->ino = ino;
    entry->attr_timeout = entry->entry_timeout = forever;
    describe(ino, &entry->attr);
}

static void floor_lookup(fuse_req_t req, fuse_ino_t parent, const char *name) {
    unsigned long number;
    char extra;
    struct fuse_entry_param entry;
    if (source >= 0) {
        // Folders of the root only: after a readdirplus the kernel looks nothing else up for a walk.
        for (number = 0; parent == root_ino && number < folders; number++) {
            if (strcmp(source_folders[number], name) == 0) {
                entry_of(first_folder_ino + number, &entry);
                fuse_reply_entry(req, &entry);
                return;
            }
        }
        fuse_reply_err(req, ENOENT);
        return;
    }
    if (parent == root_ino && sscanf(name, "d%lu%c", &number, &extra) == 1 && number < folders) {
        entry_of(first_folder_ino + number, &entry);
    } else if (is_folder(parent) && parent != root_ino && sscanf(name, "f%lu%c", &number, &extra) == 1 &&
               number < files_in(parent - first_folder_ino)) {
        entry_of(first_file_ino + (parent - first_folder_ino) * per_folder + number, &entry);
    } else {
        fuse_reply_err(req, ENOENT);
        return;
    }
    fuse_reply_entry(req, &entry);
}

static void floor_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi) {
    (void)fi;
    if (source >= 0 && !is_folder(ino)) {
        // A file of the source: its attributes came with readdirplus and are kept by the kernel; a walk never
        // asks again. An error here (rather than made-up attributes) makes a measurement that does fail.
        fuse_reply_err(req, ENOENT);
        return;
    }
    struct stat status;
    int error = describe(ino, &status);
    if (error) fuse_reply_err(req, error);
    else fuse_reply_attr(req, &status, forever);
}

// Adds one entry to a reply being filled (`*used` of `size` bytes); false when it does not fit.
static int add_entry(fuse_req_t req, char *buffer, size_t size, size_t *used, const char *name,
                     struct fuse_entry_param *entry, off_t next, int plus) {
    size_t needed = plus ? fuse_add_direntry_plus(req, buffer + *used, size - *used, name, entry, next)
                         : fuse_add_direntry(req, buffer + *used, size - *used, name, &entry->attr, next);
    if (needed > size - *used) return 0;
    *used += needed;
    return 1;
}

static void floor_list(fuse_req_t req, fuse_ino_t ino, size_t size, off_t offset, int plus) {
    char *buffer = malloc(size);
    if (!buffer) {
        fuse_reply_err(req, ENOMEM);
        return;
    }
    size_t used = 0;
    unsigned long count = ino == root_ino ? folders : files_in(ino - first_folder_ino);
    for (unsigned long position = (unsigned long)offset; position < count; position++) {
        char name[32];
        struct fuse_entry_param entry;
        if (ino == root_ino) {
            snprintf(name, sizeof name, "d%lu", position);
            entry_of(first_folder_ino + position, &entry);
        } else {
            snprintf(name, sizeof name, "f%lu", position);
            entry_of(first_file_ino + (ino - first_folder_ino) * per_folder + position, &entry);
        }
        if (!add_entry(req, buffer, size, &used, name, &entry, position + 1, plus)) break;
    }
    fuse_reply_buf(req, buffer, used);
    free(buffer);
}

// A folder of the source, read whole when it is opened: its entries and their status.
struct listing {
    unsigned long count;
    char **names;
    struct stat *statuses;
};

static void forget(struct listing *listing) {
    for (unsigned long i = 0; i < listing->count; i++) free(listing->names[i]);
    free(listing->names);
    free(listing->statuses);
    free(listing);
}

// Reads the folder `ino` of the source: `readdir`, and one `fstatat` per entry. Inode numbers are the source's,
// but a folder's is its number here (a lookup of it must find its place).
static struct listing *source_read(fuse_ino_t ino) {
    int folder = openat(source, ino == root_ino ? "." : source_folders[ino - first_folder_ino],
                        O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *entries = folder < 0 ? NULL : fdopendir(folder);
    struct listing *listing = calloc(1, sizeof *listing);
    if (!entries || !listing) {
        if (entries) closedir(entries);
        else if (folder >= 0) close(folder);
        free(listing);
        return NULL;
    }
    unsigned long capacity = 0;
    struct dirent *found;
    while ((found = readdir(entries)) != NULL) {
        if (found->d_name[0] == '.') continue;  // ".", "..", and Folio's own ".folio" of a remote
        if (listing->count == capacity) {
            capacity = capacity ? capacity * 2 : 64;
            listing->names = realloc(listing->names, capacity * sizeof *listing->names);
            listing->statuses = realloc(listing->statuses, capacity * sizeof *listing->statuses);
        }
        struct stat *status = &listing->statuses[listing->count];
        if (fstatat(dirfd(entries), found->d_name, status, AT_SYMLINK_NOFOLLOW) != 0) continue;
        status->st_ino += first_file_ino;
        if (ino == root_ino) {
            unsigned long number = 0;
            while (number < folders && strcmp(source_folders[number], found->d_name) != 0) number++;
            if (number == folders) continue;  // made after the start: not served
            status->st_ino = first_folder_ino + number;
        }
        listing->names[listing->count++] = strdup(found->d_name);
    }
    closedir(entries);
    return listing;
}

// A reply of the entries of a folder of the source from `offset` on.
static void source_list(fuse_req_t req, struct listing *listing, size_t size, off_t offset, int plus) {
    char *buffer = malloc(size);
    if (!buffer) {
        fuse_reply_err(req, ENOMEM);
        return;
    }
    size_t used = 0;
    for (unsigned long position = (unsigned long)offset; position < listing->count; position++) {
        struct fuse_entry_param entry;
        memset(&entry, 0, sizeof entry);
        entry.attr_timeout = entry.entry_timeout = forever;
        entry.attr = listing->statuses[position];
        entry.ino = entry.attr.st_ino;
        const char *name = listing->names[position];
        if (!add_entry(req, buffer, size, &used, name, &entry, position + 1, plus)) break;
    }
    fuse_reply_buf(req, buffer, used);
    free(buffer);
}

static void floor_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi) {
    if (!is_folder(ino)) {
        fuse_reply_err(req, ENOTDIR);
        return;
    }
    if (source >= 0) {
        struct listing *listing = source_read(ino);
        if (!listing) {
            fuse_reply_err(req, EIO);
            return;
        }
        fi->fh = (uint64_t)(uintptr_t)listing;
    }
    fi->cache_readdir = 1;
    fuse_reply_open(req, fi);
}

static void floor_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t offset, struct fuse_file_info *fi) {
    (void)fi;
    if (source >= 0) source_list(req, (struct listing *)(uintptr_t)fi->fh, size, offset, 0);
    else floor_list(req, ino, size, offset, 0);
}

static void floor_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t offset, struct fuse_file_info *fi) {
    (void)fi;
    if (source >= 0) source_list(req, (struct listing *)(uintptr_t)fi->fh, size, offset, 1);
    else floor_list(req, ino, size, offset, 1);
}

static void floor_releasedir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi) {
    (void)ino;
    if (source >= 0 && fi->fh) forget((struct listing *)(uintptr_t)fi->fh);
    fuse_reply_err(req, 0);
}

static const struct fuse_lowlevel_ops operations = {
    .lookup = floor_lookup,
    .getattr = floor_getattr,
    .opendir = floor_opendir,
    .readdir = floor_readdir,
    .readdirplus = floor_readdirplus,
    .releasedir = floor_releasedir,
};

static unsigned long setting(const char *name, unsigned long fallback) {
    const char *value = getenv(name);
    return value && *value ? strtoul(value, NULL, 10) : fallback;
}

int main(int argc, char **argv) {
    per_folder = setting("FLOOR_PER_FOLDER", per_folder);
    items = setting("FLOOR_ITEMS", items);
    if (per_folder == 0) {
        fprintf(stderr, "fuse_floor: FLOOR_PER_FOLDER must be above 0\n");
        return 2;
    }
    folders = (items + per_folder - 1) / per_folder;
    const char *source_path = getenv("FLOOR_SOURCE");
    if (source_path && *source_path) {
        source = open(source_path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        DIR *top = source < 0 ? NULL : fdopendir(openat(source, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
        if (!top) {
            fprintf(stderr, "fuse_floor: cannot open %s\n", source_path);
            return 2;
        }
        folders = 0;
        struct dirent *found;
        while ((found = readdir(top)) != NULL) {
            if (found->d_name[0] == '.' || found->d_type != DT_DIR) continue;
            source_folders = realloc(source_folders, (folders + 1) * sizeof *source_folders);
            source_folders[folders++] = strdup(found->d_name);
        }
        closedir(top);
    }
    struct fuse_args args = FUSE_ARGS_INIT(argc, argv);
    struct fuse_cmdline_opts options;
    if (fuse_parse_cmdline(&args, &options) != 0 || !options.mountpoint) {
        fprintf(stderr, "usage: fuse_floor [-f] [-s] [-o OPTIONS] MOUNTPOINT\n");
        return 2;
    }
    struct fuse_session *session = fuse_session_new(&args, &operations, sizeof operations, NULL);
    if (!session) return 1;
    if (fuse_set_signal_handlers(session) != 0 || fuse_session_mount(session, options.mountpoint) != 0) {
        fuse_session_destroy(session);
        return 1;
    }
    fuse_daemonize(options.foreground);
    int result = options.singlethread ? fuse_session_loop(session) : fuse_session_loop_mt(session, NULL);
    fuse_session_unmount(session);
    fuse_remove_signal_handlers(session);
    fuse_session_destroy(session);
    free(options.mountpoint);
    fuse_opt_free_args(&args);
    return result ? 1 : 0;
}
