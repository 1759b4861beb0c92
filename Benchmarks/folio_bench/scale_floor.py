"""The references of the first `find`: libfuse's passthrough_ll over the generated remote, the floor
(Benchmarks/c/fuse_floor.c: a FUSE server doing no work per entry, and the same server listing the remote's folders
itself), and rclone's mount of the same folder.
Mixed into `cli.Bench`."""

import os
import shutil
import statistics
import subprocess
import time

from .runner import compile_c
from .scale import SCALE_PER_FOLDER


class ScaleFloor:
    """What the first `find` of the scale rows is held against."""

    def scale_passthrough_find(self, drive):
        """The times of a first and a second `find` through libfuse's passthrough_ll mounted over `drive` (what
        any FUSE filesystem pays for the walk: every entry a round trip the first time), or None without the
        reference side."""
        with self.passthrough_mount(drive, "scale-passthrough-mnt") as mountpoint:
            if mountpoint is None:
                return None
            first, _ = self.scale_timed(["find", mountpoint], prefix=os.path.join(mountpoint, "d"))
            again, _ = self.scale_timed(["find", mountpoint], prefix=os.path.join(mountpoint, "d"))
            return first, again

    def scale_floor_find(self, items, drive):
        """The floor of the first `find` (`Benchmarks/c/fuse_floor.c`), median of three fresh mounts each: a FUSE
        server doing no work per entry over a computed tree of the generated remote's shape (what any FUSE
        filesystem pays for the walk on this kernel), and the same server listing `drive` itself when a folder is
        opened (`readdir` and an `fstatat` per entry: the least a FUSE filesystem that lists a local remote on
        first look must add). Returns (computed, listing)."""
        binary = compile_c("fuse_floor", self.root, fuse=True)
        mountpoint = os.path.join(self.root, "scale-floor-mnt")
        os.makedirs(mountpoint, exist_ok=True)
        expected = items + -(-items // SCALE_PER_FOLDER)

        def median_find(environment):
            samples = []
            for _ in range(3):
                process = subprocess.Popen([binary, "-f", "-o", "default_permissions", mountpoint],
                                           env=dict(os.environ, **environment), stdin=subprocess.DEVNULL,
                                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                           start_new_session=True)
                try:
                    deadline = time.monotonic() + 10
                    while not self.is_mounted(mountpoint):
                        if process.poll() is not None or time.monotonic() > deadline:
                            raise RuntimeError("fuse_floor did not mount")
                        time.sleep(0.05)
                    elapsed, count = self.scale_timed(["find", mountpoint], prefix=os.path.join(mountpoint, "d"))
                    if count != expected:
                        raise RuntimeError(f"find through fuse_floor listed {count} entries, expected {expected}")
                    samples.append(elapsed)
                finally:
                    if self.is_mounted(mountpoint):
                        subprocess.run(["fusermount3", "-u", "-z", mountpoint], timeout=30,
                                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                    try:
                        process.wait(timeout=10)
                    except subprocess.TimeoutExpired:
                        process.kill()
                        process.wait()
            return statistics.median(samples)

        computed = median_find({"FLOOR_ITEMS": str(items), "FLOOR_PER_FOLDER": str(SCALE_PER_FOLDER)})
        listing = median_find({"FLOOR_SOURCE": drive})
        return computed, listing

    def scale_rclone_find(self, drive):
        """The time of a first `find` through `rclone mount` of `drive` (rclone's local backend, its default
        settings: what the issue compares with), and rclone's VmRSS in MiB right after. Raises LookupError when rclone
        is not installed."""
        rclone = shutil.which("rclone")
        if rclone is None:
            raise LookupError("rclone is not installed")
        mountpoint = os.path.join(self.root, "scale-rclone-mnt")
        os.makedirs(mountpoint, exist_ok=True)
        log_path = os.path.join(self.root, "rclone.log")
        with open(log_path, "wb") as output:
            process = subprocess.Popen([rclone, "mount", "--read-only", drive, mountpoint],
                                       env=dict(os.environ, RCLONE_CONFIG="/dev/null"), stdin=subprocess.DEVNULL,
                                       stdout=output, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            deadline = time.monotonic() + 30
            while not self.is_mounted(mountpoint):
                if process.poll() is not None or time.monotonic() > deadline:
                    with open(log_path, errors="replace") as output:
                        last = output.read().strip().splitlines()[-1:]
                    raise RuntimeError("rclone mount did not mount" + (f": {last[0][:200]}" if last else ""))
                time.sleep(0.05)
            elapsed, _ = self.scale_timed(["find", mountpoint], prefix=os.path.join(mountpoint, "d"))
            rss, _ = self.scale_memory(process.pid)
            return elapsed, rss
        finally:
            if self.is_mounted(mountpoint):
                subprocess.run(["fusermount3", "-u", "-z", mountpoint], timeout=30, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
