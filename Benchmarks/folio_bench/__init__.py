"""Folio benchmark harness: the same workloads on a Folio mount and on the native directory, side by side.

Usage: Benchmarks/run [--quick] [--only NAME[,NAME...]] [--ls-via-mount] [--no-reference] [--keep]
                      [--scale-items N] [--scale-rows untar,big,changes] [--scale-profile DIR]
                      [--json-out FILE] [--compare BEFORE.json [--after AFTER.json]]

Mounts Folio over a fresh local remote (remote, state and native directory all live under one temporary
directory on the same filesystem: $BENCH_DIR or /var/tmp), runs each workload on both sides, and prints every
figure with its ratio to native and the target. The release binary is built with
`swift build -c release --product folio` unless FOLIO=/path/to/folio is set.

The targets are what libfuse's own passthrough example reaches on this machine, so a third side runs the same
workloads on libfuse's low-level passthrough example (passthrough_ll.c from libfuse3-dev, compiled on the fly and
mounted with cache=always over a folder in the same temporary directory) and prints its ratio to native next to
Folio's: what a plain FUSE layer costs in the same run. The verdict is Folio/native against the target only.
Skipped (with a message) when the example or its compilation is missing, or with --no-reference.

Timed operations run in a small C helper (Benchmarks/c/helper.c, compiled on the fly with gcc into the temporary
directory) or as child processes (ls, tar, git), each with a time-out, so a hung mount fails a row instead of the
harness.
Run as root for the cold-cache row (it writes /proc/sys/vm/drop_caches).

`--only webdav` (not part of a run without --only) measures issue 15's targets: Folio mounted over a private Apache
httpd with mod_dav on loopback, against curl and rclone on the same server (folio_bench/webdav.py).

`desktop` (issue 19) browses three folders of placeholders behind a simulated 20 MiB/s, 50 ms link with `gio list -a
standard::content-type` (time, and the most bytes fetched of one file) and reads a 200 MiB placeholder sequentially
against the link's bandwidth (folio_bench/desktop.py).

`--only scale` (not part of a run without --only) measures issue 14's targets on a generated remote of
--scale-items files (default 1,000,000: 1,000 folders of 1,000 small files), made once by a C helper
(Benchmarks/c/scale_helper.c) straight into
the remote's Drive folder and cached under $BENCH_DIR/folio-scale/N (a stamp says it is complete): first mount and
mount again, `ls -f` of folders never seen, `find` of the whole tree, the daemon's memory, remote changes to
visible (push and polling only, at N and at 1,000 items) with the daemon's CPU per change, stat latency while a
big file is written and fsynced, and the untar ratio against passthrough's (`--scale-rows` runs some of these
parts only). The `find` row's note also gives its floor (Benchmarks/c/fuse_floor.c, compiled on the fly): the first
`find` through a FUSE server doing no work per entry over a tree of the same shape, and through the same server
listing the remote's folders itself.

Issue 36's targets ("a first walk at the floor") are printed after the results, each with PASS/MISS from the rows
that measure them: in `scale`, the first find against that listing floor and against `rclone mount`'s first find of
the same folder, the daemon's RSS after the walk, stat+open+close while a write with fsync and a remote merge of
10,000 items run (p99 against idle, and the slowest), a walk after `--prefetch-listing` against a warm walk ("not
measured" while `folio mount` has no such option); in `untar`, Folio against passthrough_ll with `-o xattr`; warm
sequential read (`seq`) and unlink of 5,000 fresh files (`files`) against native.

`--json-out FILE` writes every row as JSON; `--compare BEFORE.json` prints each row before and after at the end of
a run, or, with `--after AFTER.json`, compares two such files without running anything.

Layout: this script only calls the package Benchmarks/folio_bench: runner.py (work folder, mounts, watchdog, timing,
rows' reporting), rows.py (rows, markdown, JSON), reference.py (passthrough_ll), one module per group (seq, files,
listing, tree, latency, sync, ranges, desktop, webdav, scale*), targets.py (issue 36's summary), cli.py (options).
The C helpers are Benchmarks/c/*.c, compiled by the runner.
"""
