"""Issue 19's targets (`Benchmarks/run --only desktop`): browsing a folder of placeholders is not downloading it.
Over the local remote behind a simulated 20 MiB/s, 50 ms link, on `Pictures/` (60 images, 10 of them without an
extension), `Docs/` (20 documents, 3 without one) and `Big/` (a 200 MiB `.mp4` and a 200 MiB `.iso`), all
placeholders: `gio list -a standard::content-type` over the three folders (what a file manager's type guessing
does), its time and the most bytes it had fetched of one file; the time Nautilus takes to show its window on
`Pictures/` (where Xvfb and Nautilus are installed); then a sequential read of the `.mp4` against the link's
bandwidth. Mixed into `Bench` (rows, `measure`, the mount and its remote)."""

import json
import os
import subprocess
import time

MiB = 1 << 20
LINK = 20 * MiB  # bytes per second
BIG = 200 * MiB

# The first bytes of each kind of document (what type sniffing looks at), followed by random bytes.
MAGIC = {"jpg": b"\xff\xd8\xff\xe0\x00\x10JFIF\x00", "png": b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR",
         "pdf": b"%PDF-1.4\n", "odt": b"PK\x03\x04", "txt": b"Minutes of the meeting\n"}


class DesktopBench:
    """The rows of issue 19, over the benchmark's own mount."""

    def bench_desktop(self):
        sniff = self.row("desktop-sniff", "gio list -a standard::content-type, 3 folders of placeholders (20 MiB/s, "
                         "50 ms)", "ms", "limit", 2.0)
        sniff_bytes = self.row("desktop-sniff-bytes", "  most fetched of one file by it", "KiB", "limit", 64)
        window = self.row("desktop-window", "Nautilus: its window up on Pictures/ of placeholders (after a first "
                          "start on a local folder)", "ms", "limit", 1.0)
        sequential = self.row("desktop-seq", "sequential read of a 200 MiB placeholder (vs the link's 20 MiB/s)",
                              "MiB/s", "rate", 0.9)
        drive = os.path.join(self.remote, "com.folio.drive")
        override = os.path.join(self.remote, ".folio", "simulate.json")
        folders = ("Pictures", "Docs", "Big")

        def make(root):
            files = []
            for index in range(60):
                files.append(("Pictures", f"photo-{index:02}.jpg" if index >= 10 else f"IMG_{index:04}", "jpg",
                              MiB + index * 4096))
            kinds = ["pdf", "odt", "txt"]
            for index in range(20):
                kind = kinds[index % 3]
                files.append(("Docs", f"doc-{index:02}.{kind}" if index >= 3 else f"notes-{index}", kind,
                              256 * 1024 + index * 512))
            files.append(("Big", "holiday.mp4", None, BIG))
            files.append(("Big", "debian.iso", None, BIG))
            for folder in folders:
                os.makedirs(os.path.join(root, folder), exist_ok=True)
            for folder, name, kind, size in files:
                path = os.path.join(root, folder, name)
                head = MAGIC.get(kind, b"")
                with open(path, "wb") as f:
                    f.write(head)
                    f.flush()
                subprocess.run(f"head -c {size - len(head)} /dev/urandom >> '{path}'", shell=True, check=True,
                               timeout=self.timeout)
            return files

        def gio_list(root):
            started = time.perf_counter()
            for folder in folders:
                result = subprocess.run(["gio", "list", "-a", "standard::content-type", os.path.join(root, folder)],
                                        capture_output=True, text=True, timeout=self.timeout)
                if result.returncode != 0:
                    raise RuntimeError(f"gio list failed: {result.stderr[-300:]}")
            return time.perf_counter() - started

        def body():
            native_root = os.path.join(self.root, "desktop-native")
            files = make(native_root)
            sniff.native = gio_list(native_root)
            make(drive)
            for folder, name, _, size in files:
                mounted, deadline = os.path.join(self.mnt, folder, name), time.monotonic() + 120
                while not os.path.exists(mounted) or os.path.getsize(mounted) != size:
                    if time.monotonic() > deadline:
                        raise RuntimeError(f"{folder}/{name} did not show in the mount within 120 s")
                    time.sleep(0.05)
            with open(override, "w") as f:
                json.dump({"latencyMilliseconds": 50, "bandwidthBytesPerSecond": LINK}, f)
            try:
                sniff.folio = gio_list(self.mnt)
                fetched = {}
                for folder, name, _, _ in files:
                    progress = os.getxattr(os.path.join(self.mnt, folder, name), "user.folio.progress").decode()
                    fetched[f"{folder}/{name}"] = int(progress.split("/")[0])
                most = max(fetched, key=fetched.get)
                sniff_bytes.folio = fetched[most] / 1024
                touched = sum(1 for value in fetched.values() if value > 0)
                sniff_bytes.note = f"  [{most}; {touched} of {len(files)} files had bytes fetched]"
                window.native, window.folio = self.nautilus_window(os.path.join(native_root, "Pictures"),
                                                                   os.path.join(self.mnt, "Pictures"))
                sequential.native = LINK / MiB
                movie = os.path.join(self.mnt, "Big", "holiday.mp4")
                started = time.perf_counter()
                subprocess.run(["cat", movie], stdout=subprocess.DEVNULL, check=True, timeout=self.timeout)
                sequential.folio = BIG / MiB / (time.perf_counter() - started)
                sequential.note = f"  [folio state after: {self.state_of(movie)}]"
            finally:
                os.remove(override)
                subprocess.run(["rm", "-rf"] + [os.path.join(drive, folder) for folder in folders]
                               + [native_root], timeout=self.timeout)

        self.measure([sniff, sniff_bytes, window, sequential], body)

    def nautilus_window(self, native, mounted):
        """Seconds from starting Nautilus on `native`, then on `mounted`, to its window showing, in an Xvfb display of
        its own and a private D-Bus session, after a first start on a local folder (a first start in a new home is
        slower, on any folder). `(None, None)` without Xvfb, Nautilus or xdotool."""
        tools = ["/usr/bin/Xvfb", "/usr/bin/nautilus", "/usr/bin/xdotool", "/usr/bin/dbus-run-session"]
        if not all(os.access(tool, os.X_OK) for tool in tools):
            return None, None
        display = 60 + os.getpid() % 30
        while os.path.exists(f"/tmp/.X11-unix/X{display}") or os.path.exists(f"/tmp/.X{display}-lock"):
            display += 1
        xvfb = subprocess.Popen(["Xvfb", f":{display}", "-screen", "0", "1280x800x24", "-nolisten", "tcp"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        home = os.path.join(self.root, "nautilus-home")
        os.makedirs(home, exist_ok=True)
        script = """
            up() { start=$(date +%s%N); nautilus --new-window "$1" >/dev/null 2>&1 & n=$!
                   for i in $(seq 1 1000); do xdotool search --onlyvisible --name "$(basename "$1")" >/dev/null 2>&1 && break
                   sleep 0.01; done; echo $(( ($(date +%s%N) - start) / 1000000 )); sleep 1; kill $n; wait $n 2>/dev/null; }
            up "$HOME" >/dev/null
            up "$1"; up "$2"
            """
        try:
            deadline = time.monotonic() + 20
            while not os.path.exists(f"/tmp/.X11-unix/X{display}") and time.monotonic() < deadline:
                time.sleep(0.05)
            env = dict(os.environ, DISPLAY=f":{display}", HOME=home, GSETTINGS_BACKEND="memory", NO_AT_BRIDGE="1")
            env.pop("XDG_CURRENT_DESKTOP", None)
            result = subprocess.run(["dbus-run-session", "--", "bash", "-c", script, "up", native, mounted],
                                    capture_output=True, text=True, env=env, timeout=120)
            times = [int(line) / 1000 for line in result.stdout.split() if line.isdigit()]
            if len(times) != 2:
                raise RuntimeError(f"nautilus: {result.stdout[-200:]} {result.stderr[-300:]}")
            return times[0], times[1]
        finally:
            xvfb.terminate()
            xvfb.wait(timeout=10)
