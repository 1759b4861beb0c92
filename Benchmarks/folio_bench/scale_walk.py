"""The scale group's big part: the first mount and the mount again, `ls -f` of folders never seen, the first
`find` of the whole tree against native, its floor and rclone, the daemon's memory after it, and a walk after
`--prefetch-listing` against a warm one.
Mixed into `cli.Bench`."""

import os
import shutil
import statistics
import subprocess

from .rows import MiB, fmt, ratio_text
from .scale import SCALE_PER_FOLDER


class ScaleWalk:
    """The big part's rows, on one mount of the generated remote (the prefetched walk on a second)."""

    def scale_big_rows(self, remote, items):
        n = f"{items:,} items"
        drive = os.path.join(remote, "com.folio.drive")
        folders = sorted(name for name in os.listdir(drive) if name.startswith("d"))
        first = self.row("scale-mount-first", f"first mount, empty state → ls of the root ({n})", "ms", "limit", 2)
        again = self.row("scale-mount-again", f"mount again, state kept → ls of the root ({n})", "ms", "limit", 1)
        listing = self.row("scale-ls", "ls -f of a 1,000-item folder never seen before", "ms", "limit", 0.15)
        rss_listed = self.row("scale-rss-listed", "daemon RSS after mount + one folder listed", "MiB", "limit", 100)
        find = self.row("scale-find", f"find of the whole tree ({n})", "ms", "time", 3)
        find_again = self.row("scale-find-again", "find of the whole tree again (every folder listed)", "ms", "time",
                              3)
        rss_find = self.row("scale-rss-find", "daemon RSS per item after the find (above an empty mount's)", "B/item",
                            "limit", 1024)
        stall = self.row("scale-stat-fsync", f"stat+open+close p99 while dd writes {self.size // MiB} MiB "
                         "conv=fsync, vs idle", "×", "limit", 3)
        # Issue 36's walk at the floor: the same first find against the floor measured now, and against rclone.
        floor = self.row("scale-find-floor", "first find / fuse_floor listing the remote's folders, same run", "×",
                         "limit", 2)
        versus_rclone = self.row("scale-find-rclone", "first find / rclone mount's first find, same tree", "×",
                                 "limit", 0.333)
        rss_walk = self.row("scale-rss-walk", f"daemon RSS after the first find ({n})", "MB", "limit", 700)
        loaded = self.row("scale-stat-loaded", f"stat+open+close p99 while dd writes {self.size // MiB} MiB "
                          "conv=fsync and a remote merge of 10,000 items runs, vs idle", "×", "limit", 3)
        loaded_max = self.row("scale-stat-loaded-max", "  its slowest stat+open+close (no stall over 50 ms)", "ms",
                              "limit", 0.05)
        state = {}

        def mount_body():
            mountpoint, first.folio, pid = self.scale_mount(remote, "scale-mnt")
            state.update(mountpoint=mountpoint, pid=pid)
            rss, hwm = self.scale_memory(pid)
            first.note = f"  [daemon RSS {rss:.0f} MiB, peak {hwm:.0f} MiB right after]"

        def list_body():
            samples, natives = [], []
            for folder in folders[:5]:
                self.scale_timed(["ls", "-f", os.path.join(drive, folder)])  # native warm
                natives.append(self.scale_timed(["ls", "-f", os.path.join(drive, folder)])[0])
                elapsed, count = self.scale_timed(["ls", "-f", os.path.join(state["mountpoint"], folder)])
                if count != SCALE_PER_FOLDER + 2 and len(folders) * SCALE_PER_FOLDER == items:
                    raise RuntimeError(f"ls -f of {folder} listed {count - 2} items, expected {SCALE_PER_FOLDER}")
                samples.append(elapsed)
                if len(samples) == 1:
                    rss, hwm = self.scale_memory(state["pid"])
                    rss_listed.folio = round(rss, 1)
                    rss_listed.note = f"  [VmHWM {hwm:.0f} MiB]"
            listing.folio, listing.native = statistics.median(samples), statistics.median(natives)
            listing.note = (f"  [median of {len(samples)} folders, each listed once; "
                            f"{', '.join(f'{s * 1e3:.0f}' for s in samples)} ms; native warm]")

        def find_body():
            self.scale_timed(["find", drive])  # native warm
            # Counted in the generated folders only: the mount's root also shows Folio's own folders.
            find.native, native_count = self.scale_timed(["find", drive], prefix=os.path.join(drive, "d"))
            find.folio, count = self.scale_timed(["find", state["mountpoint"]],
                                                 prefix=os.path.join(state["mountpoint"], "d"))
            if count != native_count:
                raise RuntimeError(f"find listed {count} entries in the mount, {native_count} in the remote")
            rss, hwm = self.scale_memory(state["pid"])
            find_again.native = find.native
            find_again.folio, count = self.scale_timed(["find", state["mountpoint"]],
                                                       prefix=os.path.join(state["mountpoint"], "d"))
            if count != native_count:
                raise RuntimeError(f"find again listed {count} entries in the mount, {native_count} in the remote")
            try:
                reference = self.scale_passthrough_find(drive)
            except (RuntimeError, OSError, subprocess.SubprocessError) as error:
                reference = None
                find.reference_error = find_again.reference_error = str(error)[:200]
                find.note = find_again.note = f"  [passthrough_ll: {find.reference_error}]"
            if reference is not None:
                find.passthrough, find_again.passthrough = reference
                find.note = (f"  [every folder listed for the first time; libfuse's passthrough_ll over the same "
                             f"folder, its first find: {fmt(reference[0], 'ms')}, "
                             f"{ratio_text(find.reference_ratio)}× native]")
                find_again.note = (f"  [passthrough_ll's second find: {fmt(reference[1], 'ms')}, "
                                   f"{ratio_text(find_again.reference_ratio)}× native]")
            try:
                computed, listing_floor = self.scale_floor_find(items, drive)
                native_median = statistics.median(self.scale_timed(["find", drive])[0] for _ in range(3))
                find.note += (f"  [the floor (Benchmarks/c/fuse_floor.c; medians of 3; native "
                              f"{fmt(native_median, 'ms')}): a FUSE server doing no work per entry, same shape, first "
                              f"find {fmt(computed, 'ms')}, {computed / native_median:.1f}× native; the same server "
                              f"listing the remote's folders itself (readdir, fstatat), {fmt(listing_floor, 'ms')}, "
                              f"{listing_floor / native_median:.1f}× native]")
                floor.folio = round(find.folio / listing_floor, 2)
                floor.note = (f"  [first find {fmt(find.folio, 'ms')} / {fmt(listing_floor, 'ms')}, fuse_floor "
                              f"listing the remote's folders itself (median of 3 fresh mounts); stretch ≤ 1.5×]")
            except (RuntimeError, OSError, subprocess.SubprocessError) as error:
                find.note += f"  [fuse_floor: {str(error)[:200]}]"
                floor.error = f"fuse_floor: {str(error)[:200]}"
            rss_walk.folio = round(rss * MiB / 1e6)
            rss_walk.note = f"  [VmRSS {rss:.0f} MiB, VmHWM {hwm:.0f} MiB"
            if items != 1_000_000:
                rss_walk.note += "; the issue's 700 MB is for 1,000,000 items"
            try:
                rclone_find, rclone_rss = self.scale_rclone_find(drive)
                versus_rclone.folio = round(find.folio / rclone_find, 2)
                versus_rclone.note = (f"  [first find {fmt(find.folio, 'ms')} / rclone's {fmt(rclone_find, 'ms')} "
                                      f"(rclone mount --read-only of the remote's folder, default settings)]")
                rss_walk.note += f"; rclone mount after its find: {rclone_rss * MiB / 1e6:.0f} MB"
            except LookupError as error:
                versus_rclone.skipped = str(error)
            except (RuntimeError, OSError, subprocess.SubprocessError) as error:
                versus_rclone.error = f"rclone: {str(error)[:200]}"
            rss_walk.note += "]"
            rss_find.folio = round((rss - self.scale_empty_rss) * MiB / items)
            rss_find.note = (f"  [(VmRSS {rss:.0f} MiB - {self.scale_empty_rss:.0f} MiB of a daemon over an empty "
                             f"remote) / {items:,}; VmHWM {hwm:.0f} MiB; {count:,} entries]")

        def again_body():
            self.scale_unmount(state["mountpoint"])
            state["mountpoint"], again.folio, state["pid"] = self.scale_mount(remote, "scale-mnt", fresh=False)
            rss, hwm = self.scale_memory(state["pid"])
            again.note = f"  [daemon RSS {rss:.0f} MiB right after]"

        def stall_body():
            folder = folders[1 if len(folders) > 1 else 0]
            stall.note = self.scale_stall(state["mountpoint"], state["pid"], folder, stall)

        def loaded_body():
            folder = folders[2 % len(folders)]
            self.scale_loaded_stall(state["mountpoint"], folder, drive, loaded, loaded_max)

        try:
            self.scale_measure([first], mount_body)
            if "pid" in state:
                self.scale_measure([listing, rss_listed], list_body)
                self.scale_measure([find, rss_find, find_again, floor, versus_rclone, rss_walk], find_body)
                self.scale_measure([again], again_body)
                self.scale_measure([stall], stall_body)
                self.scale_measure([loaded, loaded_max], loaded_body)
            else:
                self.scale_measure([listing, rss_listed, find, rss_find, find_again, floor, versus_rclone, rss_walk,
                                    again, stall, loaded, loaded_max], self.scale_no_mount)
        finally:
            if state.get("mountpoint") in self.scale_mounts:
                self.scale_unmount(state["mountpoint"])
            shutil.rmtree(os.path.join(drive, "bench-scratch"), ignore_errors=True)
        self.scale_prefetch_row(remote, items)

    def scale_prefetch_row(self, remote, items):
        """A first `find` on a fresh mount made with `--prefetch-listing`, once the daemon is idle (the tree listed
        in the background), against a warm `find` on the same mount (median of 3). "Not measured" while `folio
        mount` has no such option."""
        row = self.row("scale-prefetch-walk", f"find after --prefetch-listing / a warm find ({items:,} items)", "×",
                       "limit", 1.2)
        usage = subprocess.run([self.folio, "mount", "--help"], capture_output=True, text=True, timeout=60)
        if "--prefetch-listing" not in usage.stdout + usage.stderr:
            row.skipped = "folio mount has no --prefetch-listing"
            self.scale_measure([row], lambda: None)
            return
        state = {}

        def body():
            mountpoint, elapsed, pid = self.scale_mount(remote, "scale-prefetch", options=["--prefetch-listing"])
            state["mountpoint"] = mountpoint
            waited = self.scale_wait_idle(pid)
            prefix = os.path.join(mountpoint, "d")
            first, count = self.scale_timed(["find", mountpoint], prefix=prefix)
            warm = statistics.median(self.scale_timed(["find", mountpoint], prefix=prefix)[0] for _ in range(3))
            rss, _ = self.scale_memory(pid)
            row.folio = round(first / warm, 2)
            row.note = (f"  [fresh state; mounted in {elapsed:.2f} s, the daemon idle {waited:.0f} s later; find "
                        f"after it {fmt(first, 'ms')}, warm {fmt(warm, 'ms')} (median of 3); {count:,} entries; "
                        f"daemon RSS {rss:.0f} MiB]")

        try:
            self.scale_measure([row], body)
        finally:
            if state.get("mountpoint") in self.scale_mounts:
                self.scale_unmount(state["mountpoint"])
