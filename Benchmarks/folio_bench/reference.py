"""The reference side: libfuse's passthrough_ll example (from libfuse3-dev), compiled on the fly and mounted with
cache=always over a folder of the work folder, so every row can show what a plain FUSE layer costs in the same run;
and extra passthrough_ll mounts for one row at a time (other options, other folders). Mixed into `Runner`."""

import contextlib
import os
import resource
import subprocess
import time

from .rows import log

PASSTHROUGH_SOURCE = "/usr/share/doc/libfuse3-dev/examples/passthrough_ll.c"  # Debian's libfuse3-dev


class ReferenceSide:
    def compile_reference(self):
        """Compiles libfuse's passthrough_ll example next to the helper; returns the binary, or None (with one
        line saying why) when the source, pkg-config or the compiler is missing or fails."""
        if not os.path.isfile(PASSTHROUGH_SOURCE):
            log(f"reference side skipped: {PASSTHROUGH_SOURCE} not found (install libfuse3-dev)")
            return None
        binary = os.path.join(self.root, "passthrough_ll")
        try:
            flags = subprocess.run(["pkg-config", "--cflags", "--libs", "fuse3"], capture_output=True, text=True,
                                   check=True, timeout=60).stdout.split()
            subprocess.run(["gcc", "-O2", "-o", binary, PASSTHROUGH_SOURCE, *flags], capture_output=True,
                           text=True, check=True, timeout=120)
        except subprocess.CalledProcessError as error:
            lines = (error.stderr or "").strip().splitlines()
            fallback = lines[-1] if lines else f"status {error.returncode}"
            why = next((line for line in lines if "error" in line), fallback)
            log(f"reference side skipped: {error.cmd[0]} failed: {why.strip()}")
            return None
        except (OSError, subprocess.TimeoutExpired) as error:
            log(f"reference side skipped: {error}")
            return None
        return binary

    def mount_reference(self, binary):
        """Mounts passthrough_ll over a fresh source folder, in the foreground as our child (so we have its pid)
        and in its own session (so a Ctrl-C reaches only us, and the tear-down unmounts it). Waits up to 10 s for
        the mount; returns whether it came up, else stops the process and says why the side is skipped."""
        os.makedirs(self.reference_source)
        os.makedirs(self.reference_mnt)
        log_path = os.path.join(self.root, "passthrough.log")
        with open(log_path, "wb") as output:
            self.reference = subprocess.Popen(
                [binary, "-f", "-o", f"source={self.reference_source},cache=always,default_permissions",
                 self.reference_mnt], stdin=subprocess.DEVNULL, stdout=output, stderr=subprocess.STDOUT,
                start_new_session=True)
        self.reference_pid = self.reference.pid
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and self.reference.poll() is None:
            if self.is_mounted(self.reference_mnt):
                self.reference_mounted = True
                return True
            time.sleep(0.05)
        exited = self.reference.poll()
        if exited is None:
            self.reference.kill()
        self.stop_reference()
        with open(log_path, errors="replace") as output:
            last = output.read().strip().splitlines()[-1:]
        why = f"exited with status {exited}" if exited is not None else "did not mount within 10 s"
        log(f"reference side skipped: passthrough_ll {why}" + (f": {last[0]}" if last else ""))
        return False

    def stop_reference(self):
        """Waits a few seconds for passthrough_ll to exit (it does when its mount goes), then kills it; reaps it."""
        if self.reference is None:
            return
        try:
            self.reference.wait(timeout=5)
        except subprocess.TimeoutExpired:
            log(f"passthrough_ll (pid {self.reference.pid}) did not exit after the unmount: killing it")
            self.reference.kill()
            try:
                self.reference.wait(timeout=10)
            except subprocess.TimeoutExpired:
                log(f"warning: passthrough_ll (pid {self.reference.pid}) survived SIGKILL")
                return
        self.reference = self.reference_pid = None

    def unmount_reference(self):
        """Unmounts the passthrough side (lazily if it is busy or hung) and stops its process."""
        if self.reference_mounted:
            for argv in (["fusermount3", "-u", self.reference_mnt], ["fusermount3", "-u", "-z", self.reference_mnt]):
                try:
                    subprocess.run(argv, timeout=30, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                except subprocess.TimeoutExpired:
                    pass
                if not self.is_mounted(self.reference_mnt):
                    break
        self.stop_reference()
        if self.is_mounted(self.reference_mnt):  # the process was killed: its mount can go now
            subprocess.run(["fusermount3", "-u", "-z", self.reference_mnt], timeout=30, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
        self.reference_mounted = self.is_mounted(self.reference_mnt)

    @contextlib.contextmanager
    def passthrough_mount(self, source, name, options=""):
        """libfuse's passthrough_ll mounted over `source` (with cache=always, default_permissions and `options`,
        e.g. "xattr") while the block runs: yields its mountpoint, or None without the reference side
        (--no-reference, or no binary); unmounted and stopped afterwards."""
        binary = os.path.join(self.root, "passthrough_ll")
        if self.args.no_reference or not os.access(binary, os.X_OK):
            yield None
            return
        mountpoint = os.path.join(self.root, name)
        os.makedirs(mountpoint, exist_ok=True)

        def more_descriptors():  # passthrough_ll keeps a descriptor open per inode the kernel holds
            hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
            try:
                with open("/proc/sys/fs/nr_open") as nr_open:
                    wanted = max(hard, int(nr_open.read()))
                resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, wanted))  # as root
            except (OSError, ValueError):
                resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))

        flags = f"source={source},cache=always,default_permissions" + (f",{options}" if options else "")
        process = subprocess.Popen(
            [binary, "-f", "-o", flags, mountpoint],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
            preexec_fn=more_descriptors)
        try:
            deadline = time.monotonic() + 10
            while not self.is_mounted(mountpoint):
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"passthrough_ll did not mount over {source}")
                time.sleep(0.05)
            yield mountpoint
        finally:
            if self.is_mounted(mountpoint):
                subprocess.run(["fusermount3", "-u", "-z", mountpoint], timeout=30, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
