"""The listing row (`ls`): `ls -f` of a folder of many entries, warm.
Mixed into `cli.Bench` (rows, `measure`, the sides, the helper)."""

import os
import time


class ListBench:
    def bench_list(self):
        row = self.row("ls", f"ls -f of {self.list_entries:,} entries, warm", "ms", "time", 1.5)

        def body():
            native = os.path.join(self.native, "many")
            os.mkdir(native)
            self.run_helper("create", native, self.list_entries)
            folio = os.path.join(self.mnt, "many")
            if self.args.ls_via_mount:
                os.mkdir(folio)
                self.run_helper("create", folio, self.list_entries)
                self.wait_for_uploads(limit=900)
                row.note = "  [folio entries created through the mount]"
            else:
                # 100,000 creates and uploads through the mount take longer than the whole run may: the entries
                # are made in the remote's Drive folder and arrive through Folio's remote poll as placeholders
                # (readdir does not look at content, so this lists the same as materialized files).
                remote = os.path.join(self.remote, "com.folio.drive", "many")
                os.mkdir(remote)
                self.run_helper("create", remote, self.list_entries)
                last = os.path.join(folio, f"f{self.list_entries - 1:07d}")
                deadline = time.monotonic() + 600
                while not os.path.exists(last):
                    if time.monotonic() > deadline:
                        raise RuntimeError("the entries made in the remote did not show up in 600 s")
                    time.sleep(1)
                row.note = "  [folio entries arrived from the remote (placeholders)]"
            count = len(os.listdir(folio))
            if count != self.list_entries:
                raise RuntimeError(f"folio lists {count} entries, expected {self.list_entries}")
            folders = [("native", native), ("folio", folio)]
            if "passthrough" in self.sides:
                # passthrough_ll has no remote: the entries are made in its source folder, listed through the mount.
                source = os.path.join(self.reference_source, "many")
                os.mkdir(source)
                self.run_helper("create", source, self.list_entries)
                reference = os.path.join(self.sides["passthrough"], "many")
                count = len(os.listdir(reference))
                if count != self.list_entries:
                    raise RuntimeError(f"passthrough lists {count} entries, expected {self.list_entries}")
                folders.append(("passthrough", reference))
                row.note += "  [passthrough entries created in its source folder]"
            self.wait_for_uploads()
            for side, folder in folders:
                self.settle()
                setattr(row, side, self.warm_timed(["ls", "-f", folder], cwd=self.root))

        self.measure([row], body)
