"""The shared runner: the work folder and its mounts (set-up, tear-down), the watchdog, the C helpers, timing
helpers, rows and their reporting, and the groups' order. Each workload group is a mixin (a module of its own) whose
`bench_NAME` method the runner calls; `cli.Bench` puts them together."""

import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import tempfile
import threading
import time

from .rows import Row, fmt, log, ratio_text

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
C_SOURCES = os.path.join(REPO, "Benchmarks", "c")
MiB = 1 << 20


def control_socket(mountpoint):
    """The control socket of the Folio mount at `mountpoint` (as `RuntimePaths.controlSocket` names it)."""
    path = os.path.realpath(mountpoint)
    digest = 0xcbf29ce484222325
    for byte in path.encode():
        digest = ((digest ^ byte) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    base = "".join(c for c in os.path.basename(path) if c.isalnum() or c == "-")[:32]
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    folder = os.path.join(runtime, "folio") if runtime else f"/tmp/folio-{os.getuid()}"
    return os.path.join(folder, f"{base}-{digest:x}.sock")


def control_status(mountpoint):
    """The daemon's status summary, asked on its control socket (one JSON line each way); None if that fails."""
    try:
        with socket.socket(socket.AF_UNIX) as connection:
            connection.settimeout(30)
            connection.connect(control_socket(mountpoint))
            connection.sendall(b'{"command":"status"}\n')
            data = b""
            while not data.endswith(b"\n"):
                chunk = connection.recv(1 << 16)
                if not chunk:
                    break
                data += chunk
        summary = json.loads(data).get("summary")
        return summary if isinstance(summary, dict) else None
    except (OSError, ValueError):
        return None


def compile_c(name, output_folder, fuse=False):
    """Compiles Benchmarks/c/NAME.c with gcc -O2 (and libfuse3's flags when `fuse`) into OUTPUT_FOLDER/NAME; returns
    the binary's path."""
    binary = os.path.join(output_folder, name)
    flags = []
    if fuse:
        flags = subprocess.run(["pkg-config", "--cflags", "--libs", "fuse3"], capture_output=True, text=True,
                               check=True, timeout=60).stdout.split()
    subprocess.run(["gcc", "-O2", "-o", binary, os.path.join(C_SOURCES, name + ".c"), *flags], capture_output=fuse,
                   text=True, check=True, timeout=120)
    return binary


class Runner:
    """The benchmark's state and everything the groups share; the groups' mixins come first in `cli.Bench`."""

    def __init__(self, args):
        self.args = args
        self.quick = args.quick
        self.size = (128 if args.quick else 1024) * MiB
        self.files = 2_000 if args.quick else 10_000
        self.list_entries = 20_000 if args.quick else 100_000
        self.tree_files = 1_000 if args.quick else 3_000
        self.random_reads = 20_000
        self.latency_samples = 2_000
        self.timeout = 900
        self.rows = []
        self.mounted = False
        self.reference = None  # the passthrough_ll process (subprocess.Popen) while it runs
        self.reference_pid = None  # its pid until the watchdog kills it
        self.reference_mounted = False
        self.interrupt_handled = False
        self.root = None
        self.sides = {}

    # -- set-up and tear-down ---------------------------------------------------------------------------------

    def folio_binary(self):
        folio = os.environ.get("FOLIO")
        if folio:
            return os.path.abspath(folio)
        log("building: swift build -c release --product folio")
        subprocess.run(["swift", "build", "-c", "release", "--product", "folio"], cwd=REPO, check=True)
        return os.path.join(REPO, ".build", "release", "folio")

    def setup(self):
        self.folio = self.folio_binary()
        if not os.access(self.folio, os.X_OK):
            raise SystemExit(f"folio binary not found: {self.folio}")
        base = os.environ.get("BENCH_DIR", "/var/tmp")
        self.root = tempfile.mkdtemp(prefix="folio-bench-", dir=base)
        # The daemons write thumbnails into the desktop's cache: the benchmark's own, not the user's.
        os.environ["XDG_CACHE_HOME"] = os.path.join(self.root, "cache")
        self.native = os.path.join(self.root, "native")
        self.remote = os.path.join(self.root, "remote")
        self.state = os.path.join(self.root, "state")
        self.mnt = os.path.join(self.root, "mnt")
        for path in (self.native, self.remote, self.state, self.mnt):
            os.makedirs(path)
        self.helper = compile_c("helper", self.root)
        self.reference_source = os.path.join(self.root, "passthrough-src")
        self.reference_mnt = os.path.join(self.root, "passthrough-mnt")
        reference_binary = None if self.args.no_reference else self.compile_reference()
        log(f"work folder: {self.root}  (folio: {self.folio})")
        subprocess.run([self.folio, "mount", "--remote", self.remote, "--state", self.state, self.mnt],
                       check=True, timeout=120, stdout=subprocess.DEVNULL)
        self.mounted = True
        self.sides = {"native": self.native, "folio": self.mnt}
        status = subprocess.run([self.folio, "status", "--json", self.mnt], capture_output=True, text=True,
                                timeout=60)
        self.daemon_pid = json.loads(status.stdout).get("pid") if status.returncode == 0 else None
        if reference_binary and self.mount_reference(reference_binary):
            self.sides["passthrough"] = self.reference_mnt
        self.start_watchdog()

    def start_watchdog(self):
        """A hung mount blocks this process in the kernel, where neither a time-out nor Ctrl-C reaches it: a
        signal stays pending until the FUSE request is answered. A thread kills the daemon (the blocked calls then
        fail with ENOTCONN, the row reports an error and the unmount runs) when a group overruns its time limit,
        or when SIGINT/SIGTERM/SIGHUP arrived (pending in the kernel, or caught by another thread: the wakeup fd)
        and the main thread has not handled it within 10 s."""
        self.group_deadline = None
        read_fd, write_fd = os.pipe()
        os.set_blocking(read_fd, False)
        os.set_blocking(write_fd, False)
        signal.set_wakeup_fd(write_fd)
        wanted = sum(1 << (number - 1) for number in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP))
        status_path = f"/proc/self/task/{os.getpid()}/status"

        def pending_signal():
            try:
                with open(status_path) as status:
                    masks = [int(line.split()[1], 16) for line in status if line.startswith(("SigPnd:", "ShdPnd:"))]
            except OSError:
                return False
            return any(mask & wanted for mask in masks)

        def caught_signal():
            try:
                return bool(os.read(read_fd, 64))
            except BlockingIOError:
                return False

        def watch():
            pending_since = None
            while self.mounted or self.reference_mounted:
                time.sleep(1)
                now = time.monotonic()
                if (caught_signal() or pending_signal()) and not self.interrupt_handled:
                    pending_since = pending_since or now
                overrun = self.group_deadline is not None and now > self.group_deadline
                stuck = pending_since is not None and now > pending_since + 10
                if (overrun or stuck) and (self.daemon_pid or self.reference_pid):
                    reason = "a group overran its time limit" if overrun else "a signal is stuck behind the mount"
                    for what, pid in (("the Folio daemon", self.daemon_pid), ("passthrough_ll", self.reference_pid)):
                        if pid:
                            log(f"watchdog: {reason}: killing {what} (pid {pid})")
                            try:
                                os.kill(pid, signal.SIGKILL)
                            except ProcessLookupError:
                                pass
                    self.daemon_pid = self.reference_pid = None

        threading.Thread(target=watch, daemon=True).start()

    def is_mounted(self, path=None):
        """From the mount table: a FUSE mount whose daemon died fails stat, so os.path.ismount says no."""
        path = path or self.mnt
        with open("/proc/self/mounts") as mounts:
            return any(line.split()[1].encode().decode("unicode_escape") == path for line in mounts)

    def stop_daemon(self):
        """Kills our daemon if it is still there a few seconds after the unmount (hung, or stopped)."""
        pid = self.daemon_pid
        for _ in range(50):
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
                    if b"folio" not in cmdline.read():
                        return
                with open(f"/proc/{pid}/stat") as stat:
                    if stat.read().rsplit(")", 1)[1].split()[0] == "Z":
                        return
            except (OSError, TypeError):
                return
            time.sleep(0.1)
        log(f"the Folio daemon (pid {pid}) did not exit after the unmount: killing it")
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    def teardown(self):
        self.group_deadline = None
        if self.mounted:
            try:
                subprocess.run([self.folio, "unmount", self.mnt], timeout=30,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            except (subprocess.TimeoutExpired, OSError):  # OSError: the binary is gone or being rebuilt (ETXTBSY)
                pass
            if self.is_mounted():
                subprocess.run(["fusermount3", "-u", "-z", self.mnt], stderr=subprocess.DEVNULL)
            self.mounted = self.is_mounted()
            self.stop_daemon()
        if self.reference_mounted or self.reference is not None:
            self.unmount_reference()
        if self.root and not self.args.keep:
            if self.mounted or self.reference_mounted:
                still = [path for path, up in ((self.mnt, self.mounted), (self.reference_mnt, self.reference_mounted))
                         if up]
                log(f"warning: {', '.join(still)} still mounted; leaving {self.root}")
            else:
                shutil.rmtree(self.root, ignore_errors=True)
        elif self.root:
            log(f"kept {self.root}")

    # -- helpers ------------------------------------------------------------------------------------------------

    def run_helper(self, *arguments):
        result = subprocess.run([self.helper, *map(str, arguments)], capture_output=True, text=True,
                                timeout=self.timeout)
        if result.returncode != 0:
            raise RuntimeError(f"helper {arguments[0]} failed: {result.stderr.strip()}")
        first, second = result.stdout.split()
        return float(first), float(second)

    def timed(self, argv, cwd, env=None):
        start = time.perf_counter()
        result = subprocess.run(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                timeout=self.timeout)
        elapsed = time.perf_counter() - start
        if result.returncode != 0:
            raise RuntimeError(f"{' '.join(argv)} failed ({result.returncode}): {result.stderr.decode()[-500:]}")
        return elapsed

    def warm_timed(self, argv, cwd, env=None, runs=3):
        """Runs once to warm up, then `runs` times; returns the median."""
        self.timed(argv, cwd, env)
        return statistics.median(self.timed(argv, cwd, env) for _ in range(runs))

    def settle(self):
        """Flushes dirty data of earlier steps so that its writeback does not land in the next measurement."""
        subprocess.run(["sync"], check=True, timeout=self.timeout)

    def drop_caches(self):
        subprocess.run(["sync"], check=True, timeout=self.timeout)
        with open("/proc/sys/vm/drop_caches", "w") as f:
            f.write("3\n")

    def wait_for_uploads(self, limit=600, stall=60):
        """Waits until the Folio daemon has no pending or in-flight uploads. Gives up (with a warning) after
        `limit` seconds, or after `stall` seconds without progress while nothing is in flight (an upload that
        cannot finish, e.g. a conflicted item, must not eat the run's time)."""
        deadline = time.monotonic() + limit
        pending, last_change, summary = None, time.monotonic(), {}
        while time.monotonic() < deadline:
            result = subprocess.run([self.folio, "status", "--json", self.mnt], capture_output=True, text=True,
                                    timeout=60)
            answer = json.loads(result.stdout) if result.returncode == 0 else {}
            if isinstance(answer.get("summary"), dict):  # an answer without one says nothing: ask again
                summary = answer["summary"]
                now_pending = summary.get("pendingUploads", 0) + summary.get("uploadsInFlight", 0)
                if now_pending == 0:
                    return
                if now_pending != pending or summary.get("uploadsInFlight", 0):
                    pending, last_change = now_pending, time.monotonic()
                elif time.monotonic() - last_change > stall:
                    log(f"  warning: {pending} upload(s) stalled for {stall} s (states {summary.get('states')}); "
                        "measuring anyway")
                    return
            time.sleep(0.2)
        log(f"  warning: uploads still pending after {limit} s ({pending}, states {summary.get('states')}); "
            "measuring anyway")

    def state_of(self, path):
        try:
            return os.getxattr(path, "user.folio.state").decode()
        except OSError as error:
            return f"? ({error.strerror})"

    def row(self, key, label, unit, kind, target):
        row = Row(key, label, unit, kind, target)
        self.rows.append(row)
        return row

    def report(self, row):
        if row.error:
            log(f"  {row.label:<52} ERROR: {row.error}")
            return
        if row.skipped:
            log(f"  {row.label:<52} not measured: {row.skipped}{row.note}")
            return
        reference = f"  [passthrough ERROR: {row.reference_error}]" if row.reference_error else ""
        log(f"  {row.label:<52} native {fmt(row.native, row.unit):>14}  folio {fmt(row.folio, row.unit):>14}"
            f"  passthrough {row.reference_text:>14}  ratio {ratio_text(row.ratio):>6}"
            f"  passthrough/native {ratio_text(row.reference_ratio):>6}"
            f"  target {row.target_text:<7} {row.verdict}{row.note}{reference}")

    def measure(self, rows, body):
        """Runs `body` (which fills the rows, side by side in the order of self.sides: the passthrough side
        last); an exception marks the rows without a native or Folio figure as errors, and the rows that only
        miss the passthrough figure as reference errors (their verdict stands), and moves on."""
        try:
            body()
        except Exception as error:  # noqa: BLE001 — a failing row must not stop the run
            message = f"{type(error).__name__}: {error}".replace("\n", " ")[:300]
            for row in rows:
                if row.skipped:
                    continue
                if row.native is None or row.folio is None:
                    row.error = message
                elif "passthrough" in self.sides and row.passthrough is None:
                    row.reference_error = message
        for row in rows:
            self.report(row)

    # -- the groups -------------------------------------------------------------------------------------------

    # Creates before deletes; "scale" last (it mounts its own remotes).
    GROUPS = ["seq", "random", "latency", "untar", "git", "files", "ls", "sync", "ranges", "desktop", "scale",
              "webdav"]
    OPT_IN = {"scale", "webdav"}  # long (a million files; a private Apache and rclone): run only when named

    ALIASES = {"seq-write": "seq", "seq-read-cold": "seq", "seq-read-warm": "seq", "random-read": "random",
               "create": "files", "stat": "files", "delete": "files", "git-status": "git", "first-byte": "latency",
               "list": "ls", "visible-push": "sync", "visible-poll": "sync", "upload-small": "sync",
               "upload-big": "sync", "unlink-fresh": "files", "untar-xattr": "untar"}

    @classmethod
    def selected_groups(cls, only):
        """The groups `--only` names (all when empty); exits with a message for an unknown name."""
        names = {name.strip() for name in (only or "").split(",") if name.strip()}
        wanted = {cls.ALIASES.get(name, name) for name in names}
        unknown = wanted - set(cls.GROUPS)
        if unknown:
            raise SystemExit(f"unknown benchmark {', '.join(sorted(unknown))}; known: {', '.join(cls.GROUPS)} "
                             f"or a row: {', '.join(cls.ALIASES)}")
        return [group for group in cls.GROUPS if group in wanted or not wanted and group not in cls.OPT_IN]

    def run(self):
        started = time.monotonic()
        for group in self.selected_groups(self.args.only):
            log(f"[{group}]")
            self.group_deadline = time.monotonic() + (600 if self.quick else 1500)
            getattr(self, {"seq": "bench_seq", "random": "bench_random", "files": "bench_files",
                           "untar": "bench_untar", "git": "bench_git", "latency": "bench_latency",
                           "ls": "bench_list", "sync": "bench_sync", "ranges": "bench_ranges",
                           "desktop": "bench_desktop", "scale": "bench_scale", "webdav": "bench_webdav"}[group])()
        log(f"done in {time.monotonic() - started:.0f} s")
