"""Remote changes → visible in the mount, with push and with polling only, and the daemon's CPU per change.
Mixed into `cli.Bench`."""

import os
import shutil
import statistics
import time


class ScaleChanges:
    def scale_change_rows(self, remote, items):
        """A file added, modified and deleted on the remote → visible in the mount (stat polled by the C
        helper), with push and with polling only (a mount with --no-push), and the daemon's CPU per change."""
        n = f"{items:,} items"
        drive = os.path.join(remote, "com.folio.drive")
        scratch = os.path.join(drive, "bench-scratch")
        for push, label, target in ((True, "push", 0.1), (False, "polling only", 2.0)):
            key = f"scale-{'push' if push else 'poll'}-{items}"
            rows = {kind: self.row(f"{key}-{kind}", f"remote {kind} → visible, {label}, {n} (median)", "ms",
                                   "limit", target) for kind in ("add", "modify", "delete")}
            cpu = self.row(f"{key}-cpu", f"daemon CPU per change, {label}, {n}", "ms", "limit", 0.01)
            state = {}

            def body():
                os.makedirs(scratch, exist_ok=True)
                mountpoint, elapsed, pid = self.scale_mount(remote, "scale-changes", push=push)
                state["mountpoint"] = mountpoint
                folder = os.path.join(mountpoint, "bench-scratch")
                self.scale_timed(["ls", "-f", folder])  # looked at: a change there is a change to a known folder
                self.scale_timed(["ls", "-f", os.path.join(mountpoint, "d0000")])
                latencies = {kind: [] for kind in rows}
                budget = 60 if self.quick else 180
                stop = self.scale_profile(f"changes-{'push' if push else 'poll'}-{items}", pid)
                started, cpu_before = time.monotonic(), self.scale_cpu(pid)
                for index in range(20):
                    name = f"change-{index}.txt"
                    for kind in rows:
                        latencies[kind].append(self.scale_run("change", kind, os.path.join(scratch, name),
                                                              os.path.join(folder, name), 300, timeout=400)[0])
                        time.sleep(0.05)
                    if time.monotonic() - started > budget:
                        break
                changes = sum(len(values) for values in latencies.values())
                spent, looped = self.scale_cpu(pid) - cpu_before, time.monotonic() - started
                stop()
                # The same time again without changes, with the same stat polls (1 ms apart) while a change
                # would be awaited: the daemon's CPU for the observer's lookups and its own idle polling, which
                # the row leaves out (both are there with or without changes).
                polled = sum(sum(values) for values in latencies.values())
                idle_before = self.scale_cpu(pid)
                self.scale_run("watch", os.path.join(folder, "never-there.txt"), polled, timeout=polled + 60)
                time.sleep(max(0.0, looped - polled))
                idle = self.scale_cpu(pid) - idle_before
                cpu.folio = max(0.0, spent - idle) / changes
                cpu.note = (f"  [{changes} changes; the daemon's utime+stime over the loop, {spent / changes * 1e3:.1f}"
                            f" ms per change, less the same time idle under the same stat polls, "
                            f"{idle / changes * 1e3:.1f} ms per change]")
                for kind, row in rows.items():
                    values = sorted(latencies[kind])
                    row.folio = statistics.median(values)
                    row.note = (f"  [{len(values)} changes, max {values[-1] * 1e3:.0f} ms; mounted in "
                                f"{elapsed:.2f} s]")

            try:
                self.scale_measure([*rows.values(), cpu], body)
            finally:
                if state.get("mountpoint") in self.scale_mounts:
                    self.scale_unmount(state["mountpoint"])
                shutil.rmtree(scratch, ignore_errors=True)
