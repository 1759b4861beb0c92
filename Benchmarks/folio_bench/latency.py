"""The latency row (`latency`): open + read of 1 byte + close of a small file, warm, median and p99.
Mixed into `cli.Bench` (rows, `measure`, the sides, the helper)."""

import os


class LatencyBench:
    def bench_latency(self):
        row = self.row("first-byte", "open+read 1 byte+close, small file, warm", "us", "time", 15)

        def body():
            notes = []
            for side in self.sides:
                path = os.path.join(self.sides[side], "small.txt")
                with open(path, "wb") as f:
                    f.write(os.urandom(4096))
                if side == "folio":
                    self.wait_for_uploads()
                self.run_helper("latency", path, 100)
                median, p99 = self.run_helper("latency", path, self.latency_samples)
                setattr(row, side, median)
                notes.append(f"{side} p99 {p99 * 1e6:.0f} µs")
            row.note = "  [" + ", ".join(notes) + "]"

        self.measure([row], body)
