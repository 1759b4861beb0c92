"""The file rows (`files`): create, stat and delete of many empty files, and unlink of 5,000 fresh files; on
every side, timed in the C helper.
Mixed into `cli.Bench` (rows, `measure`, the sides, the helper)."""

import os


FRESH = 5_000  # issue 36's unlink row: this many files, made just before


class FilesBench:
    """The file rows."""

    def bench_files(self):
        n = f"{self.files:,}"
        create = self.row("create", f"create {n} files", "ms", "time", 5)
        stat = self.row("stat", f"stat {n} files, warm", "ms", "time", 1.5)
        delete = self.row("delete", f"delete {n} files", "ms", "time", 10)
        folders = {side: os.path.join(self.sides[side], "files") for side in self.sides}

        def body():
            # Each step on every side before the next step: ext4 (under every side) makes inode allocation
            # slow for a while after many deletes (recently_deleted), so no delete may precede a create.
            for side, folder in folders.items():
                if os.path.exists(folder):
                    raise RuntimeError(f"{folder} exists already")
                os.mkdir(folder)
            self.wait_for_uploads()
            for side, folder in folders.items():
                self.settle()
                setattr(create, side, self.run_helper("create", folder, self.files)[0])
            self.wait_for_uploads()
            for side, folder in folders.items():
                self.settle()
                self.run_helper("stat", folder, self.files)
                setattr(stat, side, self.run_helper("stat", folder, self.files)[0])
            for side, folder in folders.items():
                self.settle()
                setattr(delete, side, self.run_helper("unlink", folder, self.files)[0])
                os.rmdir(folder)
            self.wait_for_uploads()

        self.measure([create, stat, delete], body)
        self.bench_unlink_fresh()

    def bench_unlink_fresh(self):
        """Issue 36's row: unlink of 5,000 fresh files (made by the helper just before, on every side, and
        uploaded), after the rows above (the creates, not timed here, come after their deletes)."""
        row = self.row("unlink-fresh", f"unlink {FRESH:,} fresh files", "ms", "time", 10)
        folders = {side: os.path.join(self.sides[side], "fresh") for side in self.sides}

        def body():
            for side, folder in folders.items():
                os.mkdir(folder)
                self.run_helper("create", folder, FRESH)
            self.wait_for_uploads()
            for side, folder in folders.items():
                self.settle()
                setattr(row, side, self.run_helper("unlink", folder, FRESH)[0])
                os.rmdir(folder)
            self.wait_for_uploads()
            row.note = "  [made and uploaded just before, then deleted]"

        self.measure([row], body)
