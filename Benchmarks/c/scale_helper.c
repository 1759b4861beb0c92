// The scale group's C helper (Benchmarks/run --only scale): the generator of the big remote and every timed
// loop of the scale rows. Compiled by the runner with gcc -O2 into its work folder.
// usage: scale_helper MODE ... (the modes below).
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}
static void die(const char *what, const char *path) {
    fprintf(stderr, "%s %s: %s\n", what, path, strerror(errno));
    exit(1);
}
static int compare_doubles(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}
static void pause_briefly(void) {  /* 1 ms between polls: tight, without flooding the daemon with lookups */
    struct timespec ts = {0, 1000000};
    nanosleep(&ts, NULL);
}
static char *name_in(const char *dir, long i) {
    static char buffer[4096];
    snprintf(buffer, sizeof buffer, "%s/f%07ld", dir, i);
    return buffer;
}

int main(int argc, char **argv) {
    if (argc < 3) { fprintf(stderr, "usage: scale-helper MODE ...\n"); return 2; }
    const char *mode = argv[1];
    if (!strcmp(mode, "generate")) {          /* generate DRIVE FOLDERS PER_FOLDER: dNNNN/fNNNNNNN, small files */
        const char *drive = argv[2];
        long folders = atol(argv[3]), per_folder = atol(argv[4]);
        double start = now();
        char folder[4096], name[64], content[128];
        for (long d = 0; d < folders; d++) {
            snprintf(folder, sizeof folder, "%s/d%04ld", drive, d);
            if (mkdir(folder, 0755) != 0 && errno != EEXIST) die("mkdir", folder);
            int dirfd = open(folder, O_RDONLY | O_DIRECTORY);
            if (dirfd < 0) die("open", folder);
            for (long i = 0; i < per_folder; i++) {
                snprintf(name, sizeof name, "f%07ld", i);
                int length = snprintf(content, sizeof content, "folio scale item %ld of folder %ld\n", i, d);
                int fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_TRUNC, 0644);
                if (fd < 0) die("create", name);
                if (write(fd, content, length) != length) die("write", name);
                if (close(fd) != 0) die("close", name);
            }
            close(dirfd);
        }
        printf("%.9f %ld\n", now() - start, folders * per_folder);
    } else if (!strcmp(mode, "watch")) {      /* watch MOUNT_FILE SECONDS: the change loop's stat polls, idle */
        double seconds = atof(argv[3]), start = now();
        struct stat st;
        long polls = 0;
        while (now() - start < seconds) {
            if (stat(argv[2], &st) != 0 && errno != ENOENT) die("stat", argv[2]);
            polls++;
            pause_briefly();
        }
        printf("%.9f %ld\n", now() - start, polls);
    } else if (!strcmp(mode, "change")) {     /* change add|modify|delete REMOTE_FILE MOUNT_FILE TIMEOUT */
        const char *kind = argv[2], *remote = argv[3], *mounted = argv[4];
        double timeout = atof(argv[5]);
        const char *content = "changed on the remote, a longer content than the first\n";
        off_t wanted = -1;  /* the size the mount must show; -1: gone */
        if (!strcmp(kind, "add") || !strcmp(kind, "modify")) {
            int add = !strcmp(kind, "add");
            const char *text = add ? "x\n" : content;
            int fd = open(remote, O_WRONLY | O_CREAT | O_TRUNC, 0644);
            if (fd < 0) die("open", remote);
            if (write(fd, text, strlen(text)) != (ssize_t)strlen(text)) die("write", remote);
            if (close(fd) != 0) die("close", remote);
            wanted = strlen(text);
        } else if (!strcmp(kind, "delete")) {
            if (unlink(remote) != 0) die("unlink", remote);
        } else {
            fprintf(stderr, "unknown change %s\n", kind);
            return 2;
        }
        double start = now();
        struct stat st;
        for (;;) {
            int found = stat(mounted, &st) == 0;
            if (wanted < 0 ? !found : found && st.st_size == wanted) break;
            if (!found && errno != ENOENT) die("stat", mounted);
            if (now() - start > timeout) {
                fprintf(stderr, "%s of %s not visible after %.0f s\n", kind, mounted, timeout);
                return 3;
            }
            pause_briefly();
        }
        printf("%.9f 1\n", now() - start);
    } else if (!strcmp(mode, "readall")) {    /* readall DIR COUNT: read f0000000.. to the end (materializes) */
        long count = atol(argv[3]);
        char buffer[65536];
        for (long i = 0; i < count; i++) {
            int fd = open(name_in(argv[2], i), O_RDONLY);
            if (fd < 0) die("open", name_in(argv[2], i));
            ssize_t n;
            while ((n = read(fd, buffer, sizeof buffer)) > 0) {}
            if (n < 0) die("read", name_in(argv[2], i));
            close(fd);
        }
        printf("0 %ld\n", count);
    } else if (!strcmp(mode, "statloop")) {   /* statloop DIR FILES ITERATIONS [COMMAND ...] */
        /* stat + open + close of DIR/f0000000..; ITERATIONS times, or, with a COMMAND, until it exits
           (started here, so the loop covers its whole run). Prints p50 p99 max count. */
        const char *dir = argv[2];
        long files = atol(argv[3]), iterations = atol(argv[4]);
        pid_t child = 0;
        if (argc > 5) {
            child = fork();
            if (child < 0) die("fork", argv[5]);
            if (child == 0) {
                int null = open("/dev/null", O_WRONLY);
                dup2(null, 1); dup2(null, 2);
                execvp(argv[5], argv + 5);
                _exit(127);
            }
        }
        long capacity = 1 << 16, count = 0;
        double *samples = malloc(sizeof(double) * capacity);
        struct stat st;
        int status = 0;
        for (long i = 0;; i++) {
            if (child) {
                if (waitpid(child, &status, WNOHANG) == child) break;
            } else if (i >= iterations) {
                break;
            }
            const char *path = name_in(dir, i % files);
            double start = now();
            if (stat(path, &st) != 0) die("stat", path);
            int fd = open(path, O_RDONLY);
            if (fd < 0) die("open", path);
            close(fd);
            if (count == capacity) samples = realloc(samples, sizeof(double) * (capacity *= 2));
            samples[count++] = now() - start;
        }
        if (child && !(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
            fprintf(stderr, "%s failed (status %d)\n", argv[5], status);
            return 1;
        }
        qsort(samples, count, sizeof(double), compare_doubles);
        printf("%.9f %.9f %.9f %ld\n", samples[count / 2], samples[count * 99 / 100], samples[count - 1], count);
    } else {
        fprintf(stderr, "unknown mode %s\n", mode);
        return 2;
    }
    return 0;
}
