"""The command line of `Benchmarks/run`: the options, the benchmark put together from the runner and the groups'
mixins, the run with its clean-up on a signal, and what is printed (or written) at the end."""

import argparse
import os
import signal
import sys

from . import __doc__ as HARNESS_DOC
from . import rows as rows_module
from . import targets
from .desktop import DesktopBench
from .files import FilesBench
from .latency import LatencyBench
from .listing import ListBench
from .ranges import RangesBench
from .reference import ReferenceSide
from .rows import log
from .runner import Runner
from .scale import ScaleBench
from .scale_changes import ScaleChanges
from .scale_floor import ScaleFloor
from .scale_stall import ScaleStall
from .scale_support import ScaleSupport
from .scale_walk import ScaleWalk
from .seq import SeqBench
from .sync import SyncBench
from .tree import TreeBench
from .webdav import WebDAVBench


class Bench(SeqBench, FilesBench, ListBench, TreeBench, LatencyBench, SyncBench, RangesBench, DesktopBench,
            ScaleBench, ScaleWalk, ScaleFloor, ScaleStall, ScaleChanges, ScaleSupport, WebDAVBench, ReferenceSide,
            Runner):
    """The whole harness: one `bench_GROUP` method per group (from its module), on the shared runner."""


def parse(argv=None):
    parser = argparse.ArgumentParser(description=HARNESS_DOC.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes (128 MiB, 2,000 files) for a smoke run")
    parser.add_argument("--only", metavar="NAME[,NAME]",
                        help="run only these: " + ", ".join(Bench.GROUPS) + " (or a row key)")
    parser.add_argument("--ls-via-mount", action="store_true",
                        help="create the ls -f entries through the mount (slow) instead of in the remote")
    parser.add_argument("--no-reference", action="store_true",
                        help="skip the reference side (libfuse's passthrough_ll example)")
    parser.add_argument("--scale-items", type=int, default=1_000_000, metavar="N",
                        help="files in the scale benchmark's generated remote (default 1,000,000)")
    parser.add_argument("--scale-rows", default="untar,big,changes", metavar="PART[,PART]",
                        help="the scale benchmark's parts to run: untar, big (mounts, find, memory, stall), changes")
    parser.add_argument("--scale-profile", metavar="DIR",
                        help="record the daemon with perf record -g during the scale benchmark's change and stat rows")
    parser.add_argument("--keep", action="store_true", help="keep the work folder (it is unmounted anyway)")
    parser.add_argument("--json-out", metavar="FILE", help="write every row of this run (and the issue-36 targets) "
                        "as JSON to FILE, for a later --compare")
    parser.add_argument("--compare", metavar="BEFORE.json",
                        help="at the end, print every row before (from a --json-out of an earlier run) and now")
    parser.add_argument("--after", metavar="AFTER.json",
                        help="with --compare: compare these two files only, without running anything")
    args = parser.parse_args(argv)
    if args.scale_items < 1:
        parser.error("--scale-items takes a positive number of files")
    if args.after and not args.compare:
        parser.error("--after goes with --compare BEFORE.json")
    for path in (args.compare, args.after):
        if path and not os.path.isfile(path):
            parser.error(f"{path}: no such file")
    return args


def print_comparison(before_path, after):
    log(f"\nBefore ({before_path}) and after (Folio/native where the row has a native side, else Folio's figure; "
        "lower is better but for rates):\n")
    log(rows_module.compare(rows_module.load_rows(before_path), after))


def main(argv=None):
    args = parse(argv)
    if args.after:
        print_comparison(args.compare, rows_module.load_rows(args.after))
        return 0

    def interrupted(signum, frame):
        bench.interrupt_handled = True
        for number in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(number, signal.SIG_IGN)  # once: the clean-up must not be interrupted
        raise KeyboardInterrupt

    Bench.selected_groups(args.only)  # refuse unknown names before mounting anything
    bench = Bench(args)
    for number in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(number, interrupted)
    status = 0
    try:
        bench.setup()
        bench.run()
    except KeyboardInterrupt:
        log("interrupted")
        status = 130
        for row in bench.rows:
            if not row.error and not row.skipped and (row.native is None or row.folio is None):
                row.error = "interrupted"
            elif not row.error and "passthrough" in bench.sides and row.passthrough is None:
                row.reference_error = "interrupted"
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C must not skip the unmount
        bench.teardown()
    if bench.rows:
        mode = "quick" if args.quick else "full"
        log(f"\nResults ({mode} run, {os.uname().nodename}, {os.cpu_count()} CPUs):\n")
        log(rows_module.markdown(bench.rows))
        entries = targets.summary(bench.rows, args.scale_items)
        log("\nA first walk at the floor (issue 36's targets, from the rows above):\n")
        log(targets.markdown(entries))
        if args.json_out:
            rows_module.write_json(args.json_out, bench.rows, entries, args)
        if args.compare:
            print_comparison(args.compare, {row.key: row.as_json() for row in bench.rows})
        if any(row.error for row in bench.rows) and status == 0:
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
