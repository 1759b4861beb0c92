"""stat + open + close latency of materialized files while a big file is written and fsynced into the mount
(issue 14), and while a remote merge of 10,000 items runs at the same time (issue 36).
Mixed into `cli.Bench`."""

import os
import subprocess
import time

from .rows import MiB, log

MERGED = 10_000  # the items of the remote merge that runs during the loaded loop


class ScaleStall:
    """The stall rows."""

    def scale_stall(self, mountpoint, pid, folder, row):
        """stat + open + close of 100 materialized files of `folder` in a loop, idle and while `dd` writes and
        fsyncs a big file into another folder; on the mount and on the native folder. Fills the row with Folio's
        p99 ratio (during / idle); returns the note with every figure."""
        files, iterations = 100, 20000
        count = self.size // MiB
        figures = {}
        native_folder = os.path.join(self.native, "scale-stat")
        os.makedirs(native_folder, exist_ok=True)
        for index in range(files):
            with open(os.path.join(native_folder, f"f{index:07d}"), "w") as f:
                f.write(f"folio scale item {index}\n")
        subprocess.run(["mkdir", "-p", os.path.join(mountpoint, "bench-scratch")], check=True, timeout=60)

        def measure(side, where, scratch):
            self.scale_run("readall", where, files)  # materialized (Folio), cached (all)
            self.scale_run("statloop", where, files, 500)  # warm-up
            self.settle()
            idle = self.scale_run("statloop", where, files, iterations)
            target = os.path.join(scratch, "scale-fsync.bin")
            stop = self.scale_profile("stat-during-fsync", pid) if side == "folio" else lambda: None
            try:
                busy = self.scale_run("statloop", where, files, 0, "dd", "if=/dev/zero", f"of={target}", "bs=1M",
                                      f"count={count}", "conv=fsync", timeout=1800)
            finally:
                stop()
            subprocess.run(["rm", "-f", target], check=True, timeout=300)
            figures[side] = (idle, busy)

        measure("folio", os.path.join(mountpoint, folder), os.path.join(mountpoint, "bench-scratch"))
        measure("native", native_folder, self.native)
        try:
            with self.passthrough_mount(self.native, "scale-passthrough-stall") as reference:
                if reference is not None:
                    measure("passthrough", os.path.join(reference, "scale-stat"), reference)
        except (RuntimeError, OSError, subprocess.SubprocessError) as error:
            log(f"  passthrough side of the stall row skipped: {error}")
        self.scale_wait_quiet(mountpoint)
        (folio_idle, folio_busy), (native_idle, native_busy) = figures["folio"], figures["native"]
        row.folio = round(folio_busy[1] / folio_idle[1], 2)

        def text(side, figure):
            return (f"{side} p50 {figure[0] * 1e6:.0f} / p99 {figure[1] * 1e6:.0f} / max "
                    f"{figure[2] * 1e3:.1f} ms ({int(figure[3]):,} loops)")

        idle_text = f"{text('folio', folio_idle)}, {text('native', native_idle)}"
        busy_text = f"{text('folio', folio_busy)}, {text('native', native_busy)}"
        ratios = f"native p99 ratio {native_busy[1] / native_idle[1]:.2f}"
        if "passthrough" in figures:
            reference_idle, reference_busy = figures["passthrough"]
            idle_text += f", {text('passthrough_ll', reference_idle)}"
            busy_text += f", {text('passthrough_ll', reference_busy)}"
            ratios += f", passthrough_ll p99 ratio {reference_busy[1] / reference_idle[1]:.2f}"
        return f"  [idle: {idle_text}; during: {busy_text}; {ratios}]"

    def scale_loaded_stall(self, mountpoint, folder, drive, ratio_row, stall_row):
        """stat + open + close of 100 materialized files of `folder` in a loop, idle, then while `dd` writes and
        fsyncs a big file into the mount and, at the same time, 10,000 files appear on the remote in a folder the
        mount has listed (the scale helper writes them; the loop goes on until the mount shows the last one and the
        write is done). Fills the rows with Folio's p99 ratio (during / idle) and the slowest iteration during."""
        files, iterations = 100, 20000
        count = self.size // MiB
        where = os.path.join(mountpoint, folder)
        scratch = os.path.join(mountpoint, "bench-scratch")
        # The merge's folder, made through the mount (so the mount has it listed and watches it) and uploaded.
        subprocess.run(["mkdir", "-p", os.path.join(scratch, "merge", "d0000")], check=True, timeout=60)
        self.scale_wait_quiet(mountpoint)
        remote_merge = os.path.join(drive, "bench-scratch", "merge")
        if not os.path.isdir(os.path.join(remote_merge, "d0000")):
            raise RuntimeError("the merge folder made in the mount did not reach the remote")
        self.scale_timed(["ls", "-f", os.path.join(scratch, "merge", "d0000")])
        self.scale_run("readall", where, files)  # materialized
        self.scale_run("statloop", where, files, 500)  # warm-up
        self.settle()
        idle = self.scale_run("statloop", where, files, iterations)
        target = os.path.join(scratch, "scale-loaded.bin")
        last = os.path.join(scratch, "merge", "d0000", f"f{MERGED - 1:07d}")
        merged_file = os.path.join(self.root, "scale-merged-ms")
        # $0 the scale helper, $1 the remote's merge folder, $2 the file dd writes, $3 the merge's last file, $4 where
        # the time from the remote's last write to the mount showing it is written (ms).
        script = (f'"$0" generate "$1" 1 {MERGED} >/dev/null & g=$!; '
                  f'dd if=/dev/zero of="$2" bs=1M count={count} conv=fsync 2>/dev/null & d=$!; '
                  'wait $g || exit 1; s=$(date +%s%N); i=0; '
                  'until [ -e "$3" ]; do i=$((i+1)); [ $i -gt 60000 ] && exit 2; sleep 0.01; done; '
                  'echo $(( ($(date +%s%N) - s) / 1000000 )) > "$4"; wait $d')
        started = time.monotonic()
        busy = self.scale_run("statloop", where, files, 0, "sh", "-c", script, self.scale_helper, remote_merge,
                              target, last, merged_file, timeout=1800)
        loop = time.monotonic() - started
        with open(merged_file) as f:
            merged_after = int(f.read()) / 1000
        subprocess.run(["rm", "-f", target], check=True, timeout=300)
        self.scale_wait_quiet(mountpoint)
        ratio_row.folio = round(busy[1] / idle[1], 2)
        stall_row.folio = busy[2]

        def text(figure):
            return (f"p50 {figure[0] * 1e6:.0f} / p99 {figure[1] * 1e6:.0f} µs / max {figure[2] * 1e3:.1f} ms "
                    f"({int(figure[3]):,} loops)")

        ratio_row.note = (f"  [idle: {text(idle)}; during: {text(busy)}; the loop ran {loop:.1f} s, the merge's last "
                          f"item showed {merged_after:.2f} s after the remote had all {MERGED:,}]")
        stall_row.note = f"  [slowest of {int(busy[3]):,} loops, while the write and the merge ran]"
