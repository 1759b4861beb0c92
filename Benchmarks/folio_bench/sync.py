"""Issue 3's rows (`sync`): how soon a change on the remote shows in the mount, and upload throughput against a
raw copy on the same disk.
Mixed into `cli.Bench` (rows, `measure`, the sides, the helper)."""

import json
import os
import statistics
import subprocess
import time

from .rows import MiB
from .runner import control_status


class SyncBench:
    def bench_sync(self):
        """Issue 3's rows: how soon a change made on the remote shows in the mount (push, and polling only with
        a second mount started with --no-push), and upload throughput against a raw copy on the same disk."""
        push = self.row("visible-push", "remote change → visible in the mount, push (median)", "ms", "limit", 0.1)
        poll = self.row("visible-poll", "remote change → visible, default poll (median)", "ms", "limit", 2.0)
        small = self.row("upload-small", "upload 1,000 committed 4 KiB files (vs cp -r + sync)", "MiB/s", "rate", 0.8)
        big = self.row("upload-big", f"upload a committed {self.size // MiB} MiB file (vs cp + sync)", "MiB/s", "rate",
                       0.8)
        drive = os.path.join(self.remote, "com.folio.drive")

        def visibility(mount, prefix, samples):
            latencies = []
            for index in range(samples):
                name = f"{prefix}-{index}.txt"
                with open(os.path.join(drive, name), "w") as f:
                    f.write("x")
                started = time.monotonic()
                target = os.path.join(mount, name)
                while not os.path.exists(target):
                    if time.monotonic() - started > 30:
                        raise RuntimeError(f"{name} did not show within 30 s")
                    time.sleep(0.001)
                latencies.append(time.monotonic() - started)
                time.sleep(0.05)
            latencies.sort()
            return statistics.median(latencies), latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))]

        def push_body():
            push.folio, p99 = visibility(self.mnt, "visible-push", 50)
            push.note = f"  [p99 {p99 * 1e3:.0f} ms, 50 changes]"

        def poll_body():
            second = os.path.join(self.root, "mnt-polled")
            os.makedirs(second, exist_ok=True)
            subprocess.run([self.folio, "mount", "--remote", self.remote, "--state",
                            os.path.join(self.root, "state-polled"), "--no-push", second],
                           check=True, timeout=120, stdout=subprocess.DEVNULL)
            try:
                poll.folio, p99 = visibility(second, "visible-poll", 10)
                poll.note = f"  [p99 {p99:.2f} s, 10 changes, a second mount with --no-push]"
            finally:
                subprocess.run([self.folio, "unmount", second], timeout=60, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)

        def uploads_left():
            # Asked on the daemon's control socket directly: a `folio status` process every few ms would take
            # a good part of this 2-CPU machine from the daemon being measured.
            summary = control_status(self.mnt)
            if summary is None:
                result = subprocess.run([self.folio, "status", "--json", self.mnt], capture_output=True, text=True,
                                        timeout=60)
                try:
                    summary = json.loads(result.stdout).get("summary")
                except ValueError:
                    summary = None
            if not isinstance(summary, dict):
                return 1, 0  # no answer is not "all uploaded": keep asking (until the row's time limit)
            return summary.get("pendingUploads", 0), summary.get("uploadsInFlight", 0)

        def upload(row, source, count_bytes, commit, rounds=1):
            # The local provider's raw copy speed: cp + sync into the remote's own folder (beside its staging
            # folder, on the same disk). Kept until the run ends: deleting it now would leave a thousand
            # just-freed inodes right where the uploads allocate theirs, which ext4 skips one by one. Both sides
            # are measured `rounds` times, alternating, and their medians compared (a `sync` on this VM takes
            # from 0.05 to 1 s from one run to the next).
            raw_times, folio_times, commit_times = [], [], []
            early = 0
            for round_index in range(rounds):
                key = f"{row.key}-{round_index}"
                raw = os.path.join(self.remote, ".folio", "raw-copy-" + key)
                started = time.monotonic()
                subprocess.run(["cp", "-r", source, raw], check=True, timeout=self.timeout)
                subprocess.run(["sync", "-f", raw], check=True, timeout=self.timeout)
                raw_times.append(time.monotonic() - started)
                self.wait_for_uploads()
                # Committed first (the copy into the mount); the uploads start once local changes pause (the
                # uploader's quiet period, 0.3 s) and are timed from the first one to an empty queue, polled
                # closely. Both sides copy from content on disk: the raw copy's source was synced when it was
                # made, and `commit` makes the committed versions durable before the uploads start (otherwise
                # the uploads' first flush would write out the copy into the mount: the commit's work, not the
                # upload's).
                commit(os.path.join(self.mnt, "upload-" + key))
                committed = time.monotonic()
                first = None
                began_early = False
                deadline = committed + self.timeout
                while time.monotonic() < deadline:
                    pending, in_flight = uploads_left()
                    now = time.monotonic()
                    if first is None and now - committed < 0.05 and (in_flight > 0 or pending == 0):
                        began_early = True  # the commit outlasted the quiet period: this round's time is short
                    if first is None and in_flight > 0:
                        first = now
                    if pending + in_flight == 0:
                        break
                    time.sleep(0.005)
                done = time.monotonic()
                early += began_early
                folio_times.append(done - (first or committed))
                commit_times.append(done - committed)
            row.native = count_bytes / MiB / statistics.median(raw_times)
            row.folio = count_bytes / MiB / statistics.median(folio_times)
            spread = lambda times: f"{min(times):.2f}–{max(times):.2f} s" if len(times) > 1 else f"{times[0]:.2f} s"
            row.note = (f"  [median of {rounds}: uploads {statistics.median(folio_times):.2f} s "
                        f"({spread(folio_times)}), raw copy {spread(raw_times)}; from the commit "
                        f"{statistics.median(commit_times):.2f} s]")
            if early:
                row.note += f"  [warning: in {early} round(s) the uploads began before the commit ended]"

        def small_body():
            source = os.path.join(self.root, "upload-small-src")
            os.makedirs(source, exist_ok=True)
            for index in range(1000):
                with open(os.path.join(source, f"f{index}.txt"), "wb") as f:
                    f.write(os.urandom(4096))
            subprocess.run(["sync"], check=True, timeout=self.timeout)

            def commit(destination):
                # `cp -r` commits each file at its close; a `sync` right after (4 MiB: well within the uploader's
                # quiet period) writes the versions out.
                subprocess.run(["cp", "-r", source, destination], check=True, timeout=self.timeout)
                subprocess.run(["sync"], check=True, timeout=self.timeout)

            upload(small, source, 1000 * 4096, commit, rounds=5)

        def big_body():
            source = os.path.join(self.root, "upload-big.bin")
            self.run_helper("write", source, self.size, MiB)
            # Written with write + fsync + close, as the source was: the fsync makes the version durable, and
            # the uploads start after it (a `sync` after a `cp` would outlast the quiet period).
            upload(big, source, self.size, lambda destination: self.run_helper("write", destination, self.size, MiB))

        self.measure([push], push_body)
        self.measure([poll], poll_body)
        self.measure([small], small_body)
        self.measure([big], big_body)
