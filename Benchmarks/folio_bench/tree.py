"""The source-tree rows (`untar`, `git`): a source-like tree untarred into every side (and into a passthrough_ll
mount with extended attributes on), and `git status` in a checkout of it.
Mixed into `cli.Bench` (rows, `measure`, the sides, the helper)."""

import io
import os
import random
import tarfile
import time


class TreeBench:
    """The source-tree rows."""

    def source_tarball(self):
        """A source-like tree (~3,000 files of 1–20 KiB in nested folders), made once as a tarball in memory
        (no files written and deleted: deletes would slow later creates on ext4)."""
        tarball = os.path.join(self.root, "source.tar")
        if os.path.exists(tarball):
            return tarball
        rng = random.Random(42)
        words = ("let var func return if else for in while struct class enum case switch import guard self "
                 "value count index buffer result error path name item state version upload commit").split()
        folders = [f"project/module{a}/part{b}/group{c}" for a in range(10) for b in range(5) for c in range(3)]
        now = time.time()
        with tarfile.open(tarball, "w") as tar:
            added = set()
            for index in range(self.tree_files):
                folder = folders[index % len(folders)]
                parts = folder.split("/")
                for depth in range(1, len(parts) + 1):
                    name = "/".join(parts[:depth])
                    if name not in added:
                        added.add(name)
                        info = tarfile.TarInfo(name)
                        info.type, info.mode, info.mtime = tarfile.DIRTYPE, 0o755, now
                        tar.addfile(info)
                target = rng.randint(1024, 20 * 1024)
                lines, size = [], 0
                while size < target:
                    line = "    " * rng.randint(0, 3) + " ".join(rng.choice(words) for _ in range(rng.randint(3, 12)))
                    lines.append(line)
                    size += len(line) + 1
                data = ("\n".join(lines) + "\n").encode()
                extension = rng.choice([".swift", ".c", ".h", ".py", ".md"])
                info = tarfile.TarInfo(f"{folder}/file{index:05d}{extension}")
                info.size, info.mode, info.mtime = len(data), 0o644, now
                tar.addfile(info, io.BytesIO(data))
        return tarball

    def untar_into(self, side):
        folder = os.path.join(self.sides[side], "untar")
        os.mkdir(folder)
        tarball = self.source_tarball()
        if side == "folio":
            self.wait_for_uploads()
        self.settle()
        elapsed = self.timed(["tar", "--no-same-owner", "-xf", tarball, "-C", folder], cwd=self.root)
        if side == "folio":
            self.wait_for_uploads()
        return elapsed

    def bench_untar(self):
        row = self.row("untar", f"untar a source tree ({self.tree_files:,} files)", "ms", "time", 2.5)

        def body():
            for side in self.sides:
                setattr(row, side, self.untar_into(side))

        self.measure([row], body)
        self.bench_untar_xattr(row)

    def bench_untar_xattr(self, untar):
        """Issue 36's row: Folio's untar time (the row above) against the same untar into libfuse's passthrough_ll
        mounted with extended attributes on (`-o xattr`, as Folio has them), over a folder of its own, same run."""
        row = self.row("untar-xattr", "untar: Folio / passthrough_ll -o xattr, same run", "×", "limit", 1.3)

        def body():
            if untar.error or untar.folio is None:
                raise RuntimeError(f"the untar row failed: {untar.error}")
            source = os.path.join(self.root, "passthrough-xattr-src")
            os.makedirs(source, exist_ok=True)
            with self.passthrough_mount(source, "passthrough-xattr-mnt", options="xattr") as mountpoint:
                if mountpoint is None:
                    row.skipped = "no passthrough_ll (--no-reference, or libfuse3-dev's example is missing)"
                    return
                folder = os.path.join(mountpoint, "untar")
                os.mkdir(folder)
                self.settle()
                elapsed = self.timed(["tar", "--no-same-owner", "-xf", self.source_tarball(), "-C", folder],
                                     cwd=self.root)
            row.folio = round(untar.folio / elapsed, 2)
            row.note = f"  [Folio {untar.folio:.3f} s, passthrough_ll -o xattr {elapsed:.3f} s]"

        self.measure([row], body)

    def bench_git(self):
        row = self.row("git-status", f"git status, {self.tree_files:,}-file checkout, warm", "ms", "time", 2)
        env = dict(os.environ, GIT_CONFIG_GLOBAL="/dev/null", GIT_CONFIG_NOSYSTEM="1",
                   GIT_AUTHOR_NAME="bench", GIT_AUTHOR_EMAIL="bench@example.invalid",
                   GIT_COMMITTER_NAME="bench", GIT_COMMITTER_EMAIL="bench@example.invalid")

        def body():
            for side in self.sides:
                if not os.path.isdir(os.path.join(self.sides[side], "untar", "project")):
                    self.untar_into(side)
                checkout = os.path.join(self.sides[side], "untar", "project")
                if not os.path.isdir(os.path.join(checkout, ".git")):
                    for argv in (["git", "init", "-q"], ["git", "add", "-A"], ["git", "commit", "-q", "-m", "tree"]):
                        self.timed(argv, cwd=checkout, env=env)
                if side == "folio":
                    self.wait_for_uploads()
                self.settle()
                setattr(row, side, self.warm_timed(["git", "-c", "safe.directory=*", "status"], cwd=checkout,
                                                   env=env))

        self.measure([row], body)
