"""Issue 14's targets and issue 36's walk at the floor (`--only scale`, not part of a run without --only), on a
generated remote of --scale-items files (default 1,000,000: 1,000 folders of 1,000 small files), made once by the C
scale helper straight into the remote's Drive folder and cached under $BENCH_DIR/folio-scale/N (a stamp says it is
complete). The parts (`--scale-rows`): untar (the untar ratio against passthrough's), big (mounts, listings, the
find and its floor, memory, stalls, the prefetched walk: scale_walk.py, scale_floor.py, scale_stall.py) and changes
(scale_changes.py). Mixed into `cli.Bench` (rows, the native folder, the untar row, the passthrough side).
Mixed into `cli.Bench`."""

import json
import os
import shutil
import subprocess
import time

from .rows import log
from .runner import compile_c

SCALE_PER_FOLDER = 1_000  # the generator's folder size: the 1,000 folders × 1,000 at a million items
SCALE_FORMAT = 1  # bumped when the generator's layout changes (a cached remote of another format is made again)


class ScaleBench:
    """The scale group: its parts in order, the generated remote, the untar comparison."""

    def bench_scale(self):
        self.group_deadline = None  # the watchdog knows only the first mount's daemon: these steps have time-outs
        self.scale_mounts = []
        self.scale_helper = compile_c("scale_helper", self.root)
        items = self.args.scale_items
        # What a daemon costs without items: the first mount's, over an empty remote, before any workload.
        self.scale_empty_rss = self.scale_memory(self.daemon_pid)[0] if self.daemon_pid else 0
        parts = {part.strip() for part in self.args.scale_rows.split(",")}
        if parts - {"untar", "big", "changes"}:
            raise SystemExit(f"unknown --scale-rows part(s): {', '.join(sorted(parts - {'untar', 'big', 'changes'}))}")
        try:
            if "untar" in parts:
                self.scale_untar()
            remote = self.scale_remote(items)
            if "big" in parts:
                self.scale_big_rows(remote, items)
            if "changes" in parts:
                self.scale_change_rows(remote, items)
                if items != SCALE_PER_FOLDER:
                    self.scale_change_rows(self.scale_remote(SCALE_PER_FOLDER), SCALE_PER_FOLDER)
        finally:
            for mountpoint in list(self.scale_mounts):
                self.scale_unmount(mountpoint)

    # -- the generated remote -----------------------------------------------------------------------------------

    def scale_remote(self, items):
        """The cached remote of `items` files ($BENCH_DIR/folio-scale/ITEMS/remote), made now if its stamp does not
        say it is complete; its scratch folder (changes and writes of an earlier run) is removed."""
        base = os.path.join(os.environ.get("BENCH_DIR", "/var/tmp"), "folio-scale", str(items))
        remote, stamp = os.path.join(base, "remote"), os.path.join(base, "complete.json")
        folders = max(1, -(-items // SCALE_PER_FOLDER))
        expected = {"format": SCALE_FORMAT, "items": items, "folders": folders}
        try:
            with open(stamp) as f:
                complete = json.load(f) == expected
        except (OSError, ValueError):
            complete = False
        if not complete:
            log(f"  generating a remote of {items:,} files in {folders:,} folders under {base} (cached)")
            shutil.rmtree(base, ignore_errors=True)
            os.makedirs(base)
            # A remote as Folio makes it (manifest, provider folder, Drive): one mount with a throw-away state.
            scratch_state, scratch_mnt = os.path.join(self.root, "scale-init-state"), os.path.join(self.root,
                                                                                                 "scale-init-mnt")
            os.makedirs(scratch_mnt, exist_ok=True)
            subprocess.run([self.folio, "mount", "--remote", remote, "--state", scratch_state, scratch_mnt],
                           check=True, timeout=120, stdout=subprocess.DEVNULL)
            subprocess.run([self.folio, "unmount", scratch_mnt], check=True, timeout=120, stdout=subprocess.DEVNULL)
            shutil.rmtree(scratch_state, ignore_errors=True)
            drive = os.path.join(remote, "com.folio.drive")
            left, started = items, time.monotonic()
            for start in range(0, folders, 100):  # in slices: a time-out per slice, progress on the way
                count = min(100, folders - start)
                slice_items = min(left, count * SCALE_PER_FOLDER)
                self.scale_generate(drive, start, count, slice_items)
                left -= slice_items
                if folders > 100:
                    log(f"    {items - left:,} files ({time.monotonic() - started:.0f} s)")
            subprocess.run(["sync"], check=True, timeout=3600)
            with open(stamp, "w") as f:
                json.dump(expected, f)
            log(f"  generated in {time.monotonic() - started:.0f} s")
        shutil.rmtree(os.path.join(remote, "com.folio.drive", "bench-scratch"), ignore_errors=True)
        return remote

    def scale_generate(self, drive, first, folders, items):
        """Folders d{first}… of `items` files in all (the last one may be smaller), written by the C helper in a
        scratch folder renamed into place (the helper numbers folders from 0)."""
        scratch = os.path.join(drive, ".generating")
        shutil.rmtree(scratch, ignore_errors=True)
        os.makedirs(scratch)
        full, rest = divmod(items, SCALE_PER_FOLDER)
        if full:
            self.scale_run("generate", scratch, full, SCALE_PER_FOLDER, timeout=3600)
        if rest:
            partial = os.path.join(scratch, "partial")
            os.makedirs(partial)
            self.scale_run("generate", partial, 1, rest, timeout=3600)
            os.rename(os.path.join(partial, "d0000"), os.path.join(scratch, f"d{full:04d}"))
            os.rmdir(partial)
        for index in range(folders):
            os.rename(os.path.join(scratch, f"d{index:04d}"), os.path.join(drive, f"d{first + index:04d}"))
        os.rmdir(scratch)

    # -- the rows ---------------------------------------------------------------------------------------------

    def scale_untar(self):
        """Folio's untar ratio against passthrough's in the same run (the untar row, run now unless it ran)."""
        if not any(row.key == "untar" for row in self.rows):
            self.group_deadline = time.monotonic() + (600 if self.quick else 1500)
            try:
                self.bench_untar()
            finally:
                self.group_deadline = None
        untar = next(row for row in self.rows if row.key == "untar")
        row = self.row("scale-untar", "untar: Folio/native within passthrough/native", "×", "limit", None)

        def body():
            if untar.error:
                raise RuntimeError(f"the untar row failed: {untar.error}")
            if untar.reference_ratio is None:
                raise RuntimeError("no passthrough figure (--no-reference, or its side failed)")
            row.folio, row.target = round(untar.ratio, 2), round(untar.reference_ratio, 2)

        self.scale_measure([row], body)

