"""What the scale rows share: the scale helper, the scale mounts and their daemons (memory, CPU, profiles),
timed child processes and the scale rows' reporting.
Mixed into `cli.Bench`."""

import json
import os
import shutil
import signal
import subprocess
import time

from .rows import fmt, log, ratio_text
from .runner import control_status


def mib_of_kib(line):
    return int(line.split()[1]) / 1024


class ScaleSupport:
    """The scale rows' tools."""

    def scale_run(self, *arguments, timeout=900):
        result = subprocess.run([self.scale_helper, *map(str, arguments)], capture_output=True, text=True,
                                timeout=timeout)
        if result.returncode != 0:
            raise RuntimeError(f"scale helper {arguments[0]} failed: {result.stderr.strip()}")
        return [float(field) for field in result.stdout.split()]

    def scale_mount(self, remote, name, push=True, fresh=True, options=()):
        """Mounts `remote` at ROOT/NAME with the state ROOT/NAME-state (emptied first when `fresh`); returns the
        time from `folio mount` to an answer of `ls` of the mount's root, and the daemon's pid."""
        mountpoint, state = os.path.join(self.root, name), os.path.join(self.root, name + "-state")
        os.makedirs(mountpoint, exist_ok=True)
        if fresh:
            shutil.rmtree(state, ignore_errors=True)
        argv = [self.folio, "mount", "--remote", remote, "--state", state] + ([] if push else ["--no-push"])
        argv += list(options)
        started = time.perf_counter()
        try:
            subprocess.run(argv + [mountpoint], check=True, timeout=1800, stdout=subprocess.DEVNULL)
        except BaseException:
            self.scale_stop_daemons_of(state)  # interrupted or timed out: the daemon it started may mount later
            raise
        self.scale_mounts.append(mountpoint)
        subprocess.run(["ls", mountpoint], check=True, timeout=600, stdout=subprocess.DEVNULL)
        elapsed = time.perf_counter() - started
        status = subprocess.run([self.folio, "status", "--json", mountpoint], capture_output=True, text=True,
                                timeout=60)
        pid = json.loads(status.stdout).get("pid") if status.returncode == 0 else None
        if not pid:
            raise RuntimeError(f"no daemon pid from folio status {mountpoint}: {status.stderr.strip()}")
        return mountpoint, elapsed, pid

    @staticmethod
    def scale_stop_daemons_of(state):
        """Kills the daemons started with exactly this state folder (their command line names it)."""
        wanted = state.encode()
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as cmdline:
                    arguments = cmdline.read().split(b"\0")
                if b"--state" in arguments and wanted in arguments and b"--foreground" in arguments:
                    log(f"  stopping the daemon (pid {entry}) of an unfinished mount")
                    os.kill(int(entry), signal.SIGKILL)
            except (OSError, ValueError):
                pass
        for _ in range(3):  # its mount, if it came up meanwhile
            subprocess.run(["fusermount3", "-u", "-z", state.removesuffix("-state")], stderr=subprocess.DEVNULL,
                           stdout=subprocess.DEVNULL, timeout=60)

    def scale_unmount(self, mountpoint):
        """Unmounts (lazily if it hangs) and stops the daemon if it is still there."""
        status = subprocess.run([self.folio, "status", "--json", mountpoint], capture_output=True, text=True,
                                timeout=60)
        pid = json.loads(status.stdout).get("pid") if status.returncode == 0 else None
        try:
            subprocess.run([self.folio, "unmount", mountpoint], timeout=300, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            pass
        if self.is_mounted(mountpoint):
            subprocess.run(["fusermount3", "-u", "-z", mountpoint], stderr=subprocess.DEVNULL, timeout=60)
        if pid:
            for _ in range(100):
                if not os.path.exists(f"/proc/{pid}"):
                    break
                time.sleep(0.1)
            else:
                log(f"  the daemon of {mountpoint} (pid {pid}) did not exit: killing it")
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        if mountpoint in self.scale_mounts:
            self.scale_mounts.remove(mountpoint)

    @staticmethod
    def scale_memory(pid):
        """VmRSS and VmHWM of the process, in MiB."""
        with open(f"/proc/{pid}/status") as status:
            fields = {line.split(":")[0]: line for line in status}
        return mib_of_kib(fields["VmRSS"]), mib_of_kib(fields["VmHWM"])

    @staticmethod
    def scale_cpu(pid):
        """User + system CPU time of the process so far, in seconds."""
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def scale_timed(self, argv, timeout=3600, prefix=None):
        """Runs `argv`; returns its time and the number of lines it printed (those starting with `prefix`)."""
        started = time.perf_counter()
        result = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)
        elapsed = time.perf_counter() - started
        if result.returncode != 0:
            raise RuntimeError(f"{' '.join(argv)} failed ({result.returncode}): {result.stderr.decode()[-300:]}")
        if prefix is None:
            return elapsed, result.stdout.count(b"\n")
        return elapsed, sum(line.startswith(prefix.encode()) for line in result.stdout.splitlines())

    def scale_measure(self, rows, body):
        """Runs `body`, which fills the rows; an exception marks the rows it left without a Folio figure as
        errors. Prints the rows (Folio against its absolute target; native where there is one)."""
        try:
            body()
        except Exception as error:  # noqa: BLE001 — a failing row must not stop the run
            message = f"{type(error).__name__}: {error}".replace("\n", " ")[:300]
            for row in rows:
                if row.folio is None and not row.skipped:
                    row.error = message
        for row in rows:
            if row.error:
                log(f"  {row.label:<64} ERROR: {row.error}")
                continue
            if row.skipped:
                log(f"  {row.label:<64} not measured: {row.skipped}{row.note}")
                continue
            native = f"  native {fmt(row.native, row.unit)}  ratio {ratio_text(row.ratio)}" if row.native else ""
            log(f"  {row.label:<64} folio {fmt(row.folio, row.unit):>10}{native}  target {row.target_text}"
                f"  {row.verdict}{row.note}")

    def scale_wait_idle(self, pid, limit=1800, window=2.0, busy=0.05):
        """Waits (bounded) until the daemon used less than `busy` seconds of CPU over `window` seconds (its
        background work is done); returns the seconds waited."""
        started = time.monotonic()
        before = self.scale_cpu(pid)
        while time.monotonic() - started < limit:
            time.sleep(window)
            now = self.scale_cpu(pid)
            if now - before < busy:
                return time.monotonic() - started
            before = now
        log(f"  warning: the daemon (pid {pid}) still busy after {limit} s")
        return time.monotonic() - started

    def scale_wait_quiet(self, mountpoint, limit=600):
        """Waits (bounded) until the mount's daemon has no pending or in-flight uploads."""
        deadline = time.monotonic() + limit
        while time.monotonic() < deadline:
            summary = control_status(mountpoint)
            if summary is not None and summary.get("pendingUploads", 0) + summary.get("uploadsInFlight", 0) == 0:
                return
            time.sleep(0.2)
        log(f"  warning: uploads of {mountpoint} still pending after {limit} s")

    @staticmethod
    def scale_no_mount():
        raise RuntimeError("not mounted")

    def scale_profile(self, name, pid):
        """With --scale-profile DIR: `perf record -g` of the daemon into DIR/NAME.data until the returned function
        is called (a no-op without the option)."""
        folder = self.args.scale_profile
        if not folder:
            return lambda: None
        os.makedirs(folder, exist_ok=True)
        output = os.path.join(folder, name + ".data")
        recorder = subprocess.Popen(["perf", "record", "-F", "499", "-g", "-p", str(pid), "-o", output],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(0.5)  # perf attaches to every thread before the workload starts

        def stop():
            recorder.send_signal(signal.SIGINT)
            try:
                recorder.wait(timeout=120)
            except subprocess.TimeoutExpired:
                recorder.kill()
                recorder.wait()
            log(f"  profile: {output} (perf report -i {output} --no-children)")

        return stop
