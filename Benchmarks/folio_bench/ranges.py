"""Issue 14's ranged materialization (`ranges`): the first byte and the last 4 KiB of a 1 GiB placeholder over a
simulated slow link.
Mixed into `cli.Bench` (rows, `measure`, the sides, the helper)."""

import json
import os
import subprocess
import time

from .rows import MiB


class RangesBench:
    def bench_ranges(self):
        """Issue 14's ranged materialization: the first byte (`head -c 1`), and the last 4 KiB (`tail -c 4096`), of
        a 1 GiB placeholder over a simulated 20 MiB/s, 50 ms link (the whole file takes 51 s), each on a file
        never opened before; prints the bytes here right after (`user.folio.progress`: the rest keeps arriving in
        the background, stopped at the end by deleting the files on the remote)."""
        first = self.row("ranges-first-byte", "1 GiB placeholder at 20 MiB/s, 50 ms: first byte", "ms", "limit",
                         0.15)
        tail = self.row("ranges-tail", "1 GiB placeholder at 20 MiB/s, 50 ms: tail -c 4096", "ms", "limit", 0.2)
        drive = os.path.join(self.remote, "com.folio.drive")
        override = os.path.join(self.remote, ".folio", "simulate.json")

        def body():
            cases = ((first, "ranged-head.bin", ["head", "-c", "1"], 0),
                     (tail, "ranged-tail.bin", ["tail", "-c", "4096"], -4096))
            for _, name, _, _ in cases:
                with open(os.path.join(drive, name), "wb") as output:
                    subprocess.run(["head", "-c", str(1024 * MiB), "/dev/urandom"], stdout=output, check=True,
                                   timeout=self.timeout)
            for _, name, _, _ in cases:
                mounted, deadline = os.path.join(self.mnt, name), time.monotonic() + 60
                while not os.path.exists(mounted) or os.path.getsize(mounted) != 1024 * MiB:
                    if time.monotonic() > deadline:
                        raise RuntimeError(f"{name} did not show in the mount within 60 s")
                    time.sleep(0.05)
            with open(override, "w") as f:
                json.dump({"latencyMilliseconds": 50, "bandwidthBytesPerSecond": 20 * MiB}, f)
            try:
                for row, name, argv, offset in cases:
                    mounted = os.path.join(self.mnt, name)
                    started = time.perf_counter()
                    result = subprocess.run(argv + [mounted], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                            timeout=self.timeout)
                    elapsed = time.perf_counter() - started
                    try:
                        progress = os.getxattr(mounted, "user.folio.progress").decode()
                    except OSError as error:
                        progress = error.strerror
                    if result.returncode != 0:
                        raise RuntimeError(f"{' '.join(argv)} failed: {result.stderr.decode()[-300:]}")
                    with open(os.path.join(drive, name), "rb") as f:
                        f.seek(offset, os.SEEK_END if offset else os.SEEK_SET)
                        if result.stdout != f.read(len(result.stdout)) or not result.stdout:
                            raise RuntimeError(f"{' '.join(argv)} returned other bytes than the remote's")
                    row.folio = elapsed
                    here = int(progress.split("/")[0]) if "/" in progress else None
                    row.note = (f"  [{here / MiB:.1f} MiB of 1024 here right after]" if here is not None
                                else f"  [progress {progress!r}]")
            finally:
                os.remove(override)
                for _, name, _, _ in cases:
                    os.remove(os.path.join(drive, name))

        self.measure([first, tail], body)
