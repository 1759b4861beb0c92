// The harness's C helper (Benchmarks/run): every timed loop of the main groups runs here, timed with
// CLOCK_MONOTONIC around the loop only. Compiled by the runner with gcc -O2 into its work folder.
// usage: helper MODE PATH ... (the modes below).
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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
static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint64_t next_random(void) {  /* splitmix64 */
    uint64_t z = (rng += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
static int compare_doubles(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}
static char *name_of(const char *dir, long i) {
    static char buffer[4096];
    snprintf(buffer, sizeof buffer, "%s/f%07ld", dir, i);
    return buffer;
}

int main(int argc, char **argv) {
    if (argc < 3) { fprintf(stderr, "usage: helper MODE PATH ...\n"); return 2; }
    const char *mode = argv[1], *path = argv[2];
    if (!strcmp(mode, "write")) {              /* write PATH BYTES BLOCK: write, fsync, close */
        long long total = atoll(argv[3]); size_t block = atol(argv[4]);
        char *buffer = malloc(block);
        for (size_t i = 0; i < block; i += 8) { uint64_t r = next_random(); memcpy(buffer + i, &r, 8); }
        double start = now();
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0) die("open", path);
        for (long long done = 0; done < total; done += block) {
            buffer[0] = (char)done;  /* every block differs a little */
            if (write(fd, buffer, block) != (ssize_t)block) die("write", path);
        }
        if (fsync(fd) != 0) die("fsync", path);
        if (close(fd) != 0) die("close", path);
        printf("%.9f %lld\n", now() - start, total);
    } else if (!strcmp(mode, "read")) {        /* read PATH BLOCK: read to the end */
        size_t block = atol(argv[3]);
        char *buffer = malloc(block);
        long long total = 0;
        double start = now();
        int fd = open(path, O_RDONLY);
        if (fd < 0) die("open", path);
        for (;;) {
            ssize_t n = read(fd, buffer, block);
            if (n < 0) die("read", path);
            if (n == 0) break;
            total += n;
        }
        close(fd);
        printf("%.9f %lld\n", now() - start, total);
    } else if (!strcmp(mode, "randread")) {    /* randread PATH COUNT: 4 KiB preads at aligned offsets */
        long count = atol(argv[3]);
        char buffer[4096];
        int fd = open(path, O_RDONLY);
        if (fd < 0) die("open", path);
        struct stat st;
        fstat(fd, &st);
        long long blocks = st.st_size / 4096;
        if (blocks < 1) { fprintf(stderr, "file too small\n"); return 1; }
        double start = now();
        for (long i = 0; i < count; i++) {
            off_t offset = (off_t)(next_random() % blocks) * 4096;
            if (pread(fd, buffer, 4096, offset) != 4096) die("pread", path);
        }
        double elapsed = now() - start;
        close(fd);
        printf("%.9f %ld\n", elapsed, count);
    } else if (!strcmp(mode, "create")) {      /* create DIR COUNT: open(O_CREAT|O_EXCL)+close */
        long count = atol(argv[3]);
        double start = now();
        for (long i = 0; i < count; i++) {
            int fd = open(name_of(path, i), O_WRONLY | O_CREAT | O_EXCL, 0644);
            if (fd < 0) die("create", name_of(path, i));
            if (close(fd) != 0) die("close", name_of(path, i));
        }
        printf("%.9f %ld\n", now() - start, count);
    } else if (!strcmp(mode, "stat")) {        /* stat DIR COUNT */
        long count = atol(argv[3]);
        struct stat st;
        double start = now();
        for (long i = 0; i < count; i++)
            if (stat(name_of(path, i), &st) != 0) die("stat", name_of(path, i));
        printf("%.9f %ld\n", now() - start, count);
    } else if (!strcmp(mode, "unlink")) {      /* unlink DIR COUNT */
        long count = atol(argv[3]);
        double start = now();
        for (long i = 0; i < count; i++)
            if (unlink(name_of(path, i)) != 0) die("unlink", name_of(path, i));
        printf("%.9f %ld\n", now() - start, count);
    } else if (!strcmp(mode, "latency")) {     /* latency PATH COUNT: median open+read(1)+close */
        long count = atol(argv[3]);
        double *samples = malloc(sizeof(double) * count);
        char byte;
        for (long i = 0; i < count; i++) {
            double start = now();
            int fd = open(path, O_RDONLY);
            if (fd < 0) die("open", path);
            if (read(fd, &byte, 1) != 1) die("read", path);
            close(fd);
            samples[i] = now() - start;
        }
        qsort(samples, count, sizeof(double), compare_doubles);
        printf("%.9f %.9f\n", samples[count / 2], samples[count * 99 / 100]);
    } else {
        fprintf(stderr, "unknown mode %s\n", mode);
        return 2;
    }
    return 0;
}
