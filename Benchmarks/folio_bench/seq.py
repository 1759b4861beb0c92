"""The sequential and random rows (`seq`, `random`): a big file written with write+fsync+close, read cold and
warm, and 4 KiB random preads of it; on every side, timed in the C helper.
Mixed into `cli.Bench` (rows, `measure`, the sides, the helper)."""

import os
import statistics

from .rows import MiB


class SeqBench:
    def big_file(self, side):
        return os.path.join(self.sides[side], "big.bin")

    def ensure_big_file(self, side):
        path = self.big_file(side)
        if not os.path.exists(path) or os.path.getsize(path) != self.size:
            self.run_helper("write", path, self.size, MiB)
        if side == "folio":
            self.wait_for_uploads()

    def bench_seq(self):
        size = f"{self.size // MiB} MiB" if self.size < 1024 * MiB else f"{self.size // (1024 * MiB)} GiB"
        write = self.row("seq-write", f"sequential write {size} (write+fsync+close)", "MiB/s", "rate", 0.45)
        cold = self.row("seq-read-cold", f"sequential read {size}, cold cache", "MiB/s", "rate", 0.9)
        warm = self.row("seq-read-warm", f"sequential read {size}, warm cache (median of 3)", "MiB/s", "rate", 0.85)
        can_drop = os.geteuid() == 0

        def body():
            for side in self.sides:
                path = self.big_file(side)
                if os.path.exists(path):
                    raise RuntimeError(f"{path} exists already")
                self.settle()
                elapsed, total = self.run_helper("write", path, self.size, MiB)
                setattr(write, side, total / MiB / elapsed)
                if side == "folio":
                    self.wait_for_uploads()
            cold.note = f"  [folio state: {self.state_of(self.big_file('folio'))}]"
            for side in self.sides:
                if can_drop:
                    self.drop_caches()
                    elapsed, total = self.run_helper("read", self.big_file(side), MiB)
                    setattr(cold, side, total / MiB / elapsed)
                runs = [self.run_helper("read", self.big_file(side), MiB) for _ in range(3)]
                setattr(warm, side, statistics.median(total / MiB / elapsed for elapsed, total in runs))
            if not can_drop:
                cold.error = "needs root (drop_caches)"

        self.measure([write, cold, warm], body)

    def bench_random(self):
        row = self.row("random-read", f"4 KiB random read ({self.random_reads:,} preads, warm, median of 3)",
                       "IOPS", "rate", 0.75)

        def body():
            for side in self.sides:
                self.ensure_big_file(side)
                self.run_helper("read", self.big_file(side), MiB)  # warm the page cache
                runs = [self.run_helper("randread", self.big_file(side), self.random_reads) for _ in range(3)]
                setattr(row, side, statistics.median(count / elapsed for elapsed, count in runs))

        self.measure([row], body)
