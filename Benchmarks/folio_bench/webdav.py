"""Issue 15's targets (`Benchmarks/run --only webdav`): Folio over a private Apache httpd with mod_dav on loopback,
side by side with the tools users pick today on the same server and files: `curl` for one big file, `rclone` for
many small ones and for listings. Mixed into `Bench` (rows, `measure`, the Folio binary, the work folder)."""

import os
import shutil
import socket
import statistics
import subprocess
import time

MiB = 1 << 20
MODULES = "/usr/lib/apache2/modules"


class WebDAVBench:
    """Starts Apache over ROOT/webdav-root, mounts Folio on it (1 s polls), runs the rows, and ends both."""

    def bench_webdav(self):
        for tool in ("/usr/sbin/apache2", "/usr/bin/curl", "/usr/bin/rclone"):
            if not os.access(tool, os.X_OK):
                raise SystemExit(f"{tool} is missing (scripts/bootstrap installs it)")
        self.dav_folder = os.path.join(self.root, "webdav")
        self.dav_root = os.path.join(self.dav_folder, "root")
        os.makedirs(os.path.join(self.dav_folder, "lock"))
        os.makedirs(os.path.join(self.dav_root, "dav", "com.folio.drive"))
        subprocess.run(["chown", "-R", "www-data:www-data", self.dav_folder], check=True)
        os.chmod(self.root, 0o711)  # the server's children (www-data) pass through the work folder to its root
        self.dav_port = self.webdav_free_port()
        self.dav_url = f"http://127.0.0.1:{self.dav_port}/dav/"
        self.dav_server = self.webdav_start_apache()
        self.dav_mnt = os.path.join(self.root, "webdav-mnt")
        os.makedirs(self.dav_mnt)
        try:
            subprocess.run([self.folio, "mount", "--remote", self.dav_url, "--state",
                            os.path.join(self.root, "webdav-state"), "--poll-interval", "1", self.dav_mnt],
                           check=True, timeout=120, stdout=subprocess.DEVNULL)
            self.webdav_rows()
        finally:
            subprocess.run([self.folio, "unmount", self.dav_mnt], timeout=300, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
            if os.path.ismount(self.dav_mnt):
                subprocess.run(["fusermount3", "-u", "-z", self.dav_mnt], timeout=60)
            self.dav_server.terminate()
            try:
                self.dav_server.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.dav_server.kill()

    # -- the server ---------------------------------------------------------------------------------------------

    @staticmethod
    def webdav_free_port():
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            return probe.getsockname()[1]

    def webdav_start_apache(self):
        """A private Apache (the tests' configuration), logging each request's method, path and Depth header."""
        config = os.path.join(self.dav_folder, "httpd.conf")
        with open(config, "w") as f:
            f.write(f"""ServerRoot {self.dav_folder}
ServerName 127.0.0.1
Listen 127.0.0.1:{self.dav_port}
LoadModule mpm_event_module {MODULES}/mod_mpm_event.so
LoadModule authz_core_module {MODULES}/mod_authz_core.so
LoadModule dav_module {MODULES}/mod_dav.so
LoadModule dav_fs_module {MODULES}/mod_dav_fs.so
User www-data
Group www-data
PidFile {self.dav_folder}/httpd.pid
ErrorLog {self.dav_folder}/error.log
LogFormat "%m %U depth=%{{Depth}}i %>s" folio
CustomLog {self.dav_folder}/access.log folio
DAVLockDB {self.dav_folder}/lock/davlock
KeepAliveTimeout 30
DocumentRoot {self.dav_root}
<Directory {self.dav_root}>
    Dav On
    Require all granted
</Directory>
""")
        server = subprocess.Popen(["/usr/sbin/apache2", "-f", config, "-DFOREGROUND"],
                                  stdout=subprocess.DEVNULL, stderr=open(os.path.join(self.dav_folder, "stderr"), "w"))
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            if subprocess.run(["curl", "-s", "-o", "/dev/null", "--max-time", "1", self.dav_url]).returncode == 0:
                return server
            time.sleep(0.05)
        server.kill()
        logs = [os.path.join(self.dav_folder, name) for name in ("stderr", "error.log")]
        text = " ".join(open(path).read()[-300:] for path in logs if os.path.exists(path))
        raise RuntimeError("apache2 did not start: " + text)

    def webdav_put_direct(self, relative, data):
        """Writes a file straight into the server's document root (as another client's upload would leave it)."""
        path = os.path.join(self.dav_root, "dav", "com.folio.drive", relative)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)
        shutil.chown(path, "www-data", "www-data")
        return path

    def webdav_rclone(self, *arguments, timeout=1800):
        """Runs rclone against the server as an on-the-fly `webdav` remote named `dav:` (default settings)."""
        env = dict(os.environ, RCLONE_CONFIG_DAV_TYPE="webdav", RCLONE_CONFIG_DAV_URL=self.dav_url,
                   RCLONE_CONFIG_DAV_VENDOR="other")
        started = time.perf_counter()
        subprocess.run(["rclone", *arguments], env=env, check=True, timeout=timeout, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        return time.perf_counter() - started

    def webdav_wait_for(self, path, limit=120):
        deadline = time.monotonic() + limit
        while not os.path.exists(path):
            if time.monotonic() > deadline:
                raise RuntimeError(f"{path} did not show in the mount within {limit} s")
            time.sleep(0.01)

    def webdav_requests(self):
        """The access log's lines so far."""
        with open(os.path.join(self.dav_folder, "access.log")) as log:
            return log.read().splitlines()

    # -- the rows -----------------------------------------------------------------------------------------------

    def webdav_rows(self):
        size = (128 if self.quick else 1024) * MiB
        big = os.path.join(self.root, "webdav-big.bin")
        subprocess.run(["head", "-c", str(size), "/dev/urandom"], stdout=open(big, "wb"), check=True)
        label = f"{size // MiB} MiB"

        # A download keeps the file: curl saves it into the work folder, on the disk that holds Folio's cache (to
        # /dev/null it would skip the write a materialization cannot). Caches are dropped before each side.
        materialize = self.row("webdav-materialize", f"WebDAV: materialize {label} (vs curl GET -o FILE)", "MiB/s",
                               "rate", 0.8)

        def materialize_body():
            shutil.copyfile(big, os.path.join(self.dav_root, "dav", "com.folio.drive", "served.bin"))
            shutil.chown(os.path.join(self.dav_root, "dav", "com.folio.drive", "served.bin"), "www-data")
            self.drop_caches()
            started = time.perf_counter()
            downloaded = os.path.join(self.root, "webdav-curl-download.bin")
            subprocess.run(["curl", "-s", "-f", "-o", downloaded, self.dav_url + "com.folio.drive/served.bin"],
                           check=True, timeout=self.timeout)
            materialize.native = size / MiB / (time.perf_counter() - started)
            if os.path.getsize(downloaded) != size:
                raise RuntimeError("curl's download is not whole")
            os.remove(downloaded)
            mounted = os.path.join(self.dav_mnt, "served.bin")
            self.webdav_wait_for(mounted)
            self.drop_caches()
            started = time.perf_counter()
            subprocess.run(["cat", mounted], stdout=subprocess.DEVNULL, check=True, timeout=self.timeout)
            materialize.folio = size / MiB / (time.perf_counter() - started)

        self.measure([materialize], materialize_body)

        # The upload itself (from the commit, when the copy into the mount closes, until the server has the file)
        # against curl -T of the same file: both read it from the page cache (curl's source is read once before)
        # and start from the same memory (caches dropped before each side: on this VM, page cache taken from a
        # full cache costs several times a fresh one, which else penalizes whichever side writes more or later).
        # The copy into the mount before the commit is a local write (the sequential-write rows measure those);
        # its figure and the end to end rate are printed on their own rows, without a target.
        upload = self.row("webdav-upload-big", f"WebDAV: upload {label}, commit → on the server (vs curl -T)", "MiB/s",
                          "rate", 0.8)
        end_to_end = self.row("webdav-upload-big-total", f"WebDAV: cp {label} into the mount + its upload (vs curl -T)",
                              "MiB/s", "info", None)

        def upload_body():
            self.drop_caches()
            with open(big, "rb") as source:
                while source.read(8 * MiB):
                    pass
            started = time.perf_counter()
            subprocess.run(["curl", "-s", "-f", "-o", "/dev/null", "-T", big, self.dav_url + "curl-upload.bin"], check=True,
                           timeout=self.timeout)
            upload.native = end_to_end.native = size / MiB / (time.perf_counter() - started)
            self.drop_caches()
            started = time.perf_counter()
            shutil.copyfile(big, os.path.join(self.dav_mnt, "folio-upload.bin"))
            committed = time.perf_counter()
            # Done when the file is at its name on the server (a create lands whole, by a MOVE of its staged copy);
            # polled every 10 ms, where `folio status` would add a few hundred.
            served = os.path.join(self.dav_root, "dav", "com.folio.drive", "folio-upload.bin")
            deadline = committed + self.timeout
            while not os.path.exists(served) and time.perf_counter() < deadline:
                time.sleep(0.01)
            finished = time.perf_counter()
            self.webdav_wait_for_uploads()
            upload.folio = size / MiB / (finished - committed)
            end_to_end.folio = size / MiB / (finished - started)
            end_to_end.note = f"  [the copy into the mount took {committed - started:.2f} s of {finished - started:.2f} s]"
            if os.path.getsize(served) != size:
                raise RuntimeError("the upload did not reach the server whole")

        self.measure([upload, end_to_end], upload_body)

        # The condition: one folder enumerated (the Drive's root: nothing below it was looked at yet).
        self.webdav_visible("webdav-visible", "WebDAV: a change on the server → visible (1 s polls)", 1.5,
                            "working set: the root")

        small = self.row("webdav-upload-small", "WebDAV: upload 1,000 × 4 KiB (vs rclone copy)", "s", "time", 1.0)

        def small_body():
            source = os.path.join(self.root, "webdav-small")
            os.makedirs(source)
            for index in range(1000):
                with open(os.path.join(source, f"f{index:04}.txt"), "wb") as f:
                    f.write(os.urandom(4096))
            small.native = self.webdav_rclone("copy", source, "dav:rclone-small")
            started = time.perf_counter()
            subprocess.run(["cp", "-r", source, os.path.join(self.dav_mnt, "folio-small")], check=True,
                           timeout=self.timeout)
            self.webdav_wait_for_uploads()
            small.folio = time.perf_counter() - started
            arrived = os.listdir(os.path.join(self.dav_root, "dav", "com.folio.drive", "folio-small"))
            if len(arrived) != 1000:
                raise RuntimeError(f"{len(arrived)} of 1,000 files reached the server")

        self.measure([small], small_body)

        listing = self.row("webdav-list", "WebDAV: ls -l of 10,000 items, cold (vs rclone lsl)", "s", "time", 1.5)

        def list_body():
            for index in range(10_000):
                self.webdav_put_direct(f"many/m{index:05}.txt", b"x" * 64)
            self.webdav_wait_for(os.path.join(self.dav_mnt, "many"))
            listing.native = self.webdav_rclone("lsl", "dav:com.folio.drive/many")
            started = time.perf_counter()
            result = subprocess.run(["ls", "-l", os.path.join(self.dav_mnt, "many")], capture_output=True,
                                    timeout=self.timeout)
            listing.folio = time.perf_counter() - started
            if result.stdout.count(b"\n") < 10_000:
                raise RuntimeError("ls -l listed fewer than 10,000 items")

        self.measure([listing], list_body)

        # The same with 11,000 items in the working set: a poll lists the root first and shows what it found before
        # the big folders below it are listed (RemoteChanges.moreComing); no target, printed for the README.
        self.webdav_visible("webdav-visible-busy", "WebDAV: the same, 11,000 items in the working set", None,
                            "working set: root, many/ (10,000), folio-small/ (1,000)")

        poll = self.row("webdav-poll-requests", "WebDAV: requests per poll, unchanged tree of 10,000 in 100 folders",
                        "requests", "limit", 0)

        def poll_body():
            for folder in range(100):
                for index in range(100):
                    self.webdav_put_direct(f"tree/d{folder:03}/t{index:03}.txt", b"t")
            self.webdav_wait_for(os.path.join(self.dav_mnt, "tree"))
            subprocess.run(["find", os.path.join(self.dav_mnt, "tree")], stdout=subprocess.DEVNULL, check=True,
                           timeout=self.timeout)
            time.sleep(3)  # the polls that follow the listing's own requests
            before = len(self.webdav_requests())
            window = 10.0
            time.sleep(window)
            lines = self.webdav_requests()[before:]
            # A poll lists the container's root first: the requests between two of those are one poll's.
            starts = [index for index, line in enumerate(lines)
                      if line.startswith("PROPFIND /dav/com.folio.drive/ ")]
            if len(starts) < 2:
                raise RuntimeError(f"fewer than two polls in {window:.0f} s ({len(lines)} requests)")
            polls = len(starts) - 1
            poll.folio = round((starts[-1] - starts[0]) / polls, 1)
            # The working set: every folder the mount has listed. `find` listed all of the Drive's; the other
            # containers (rclone's copy made one) have their roots listed; and the list of containers itself.
            dav = os.path.join(self.dav_root, "dav")
            drive_folders = sum(1 for _ in os.walk(os.path.join(dav, "com.folio.drive")))
            other_roots = sum(1 for name in os.listdir(dav)
                              if name != "com.folio.drive" and os.path.isdir(os.path.join(dav, name)))
            poll.target = drive_folders + other_roots + 1
            first_poll = lines[starts[0]:starts[1]]
            asked = [line.split()[1] for line in first_poll if line.startswith("PROPFIND ")]
            twice = sorted({path for path in asked if asked.count(path) > 1})
            if twice:
                raise RuntimeError(f"a poll listed folders more than once: {twice[:5]}")
            outside = [path for path in asked
                       if not os.path.isdir(os.path.join(self.dav_root, path.strip("/")))]
            if outside:
                raise RuntimeError(f"a poll asked for what is not a folder on the server: {outside[:5]}")
            infinity = sum(1 for line in lines if "depth=infinity" in line.lower())
            methods = sorted({line.split()[0] for line in lines})
            poll.note = (f"  [{polls} polls in {window:.0f} s, {len(lines)} requests ({', '.join(methods)}); "
                         f"Depth infinity: {infinity}]")
            if infinity:
                raise RuntimeError(f"{infinity} requests with Depth: infinity")

        self.measure([poll], poll_body)

    def webdav_visible(self, key, label, target, working_set):
        """A file PUT on the server (curl) → shown in the mount, five times; the median is the row's figure."""
        visible = self.row(key, label, "ms", "limit" if target is not None else "info", target)

        def visible_body():
            samples = []
            for index in range(5):
                name = f"{key}-{index}.txt"
                started = time.perf_counter()
                subprocess.run(["curl", "-s", "-f", "-o", "/dev/null", "-T", "-", self.dav_url + "com.folio.drive/" + name],
                               input=b"new", check=True, timeout=60)
                self.webdav_wait_for(os.path.join(self.dav_mnt, name), limit=30)
                samples.append(time.perf_counter() - started)
            visible.folio = statistics.median(samples)
            visible.note = f"  [median of 5; slowest {max(samples):.2f} s; {working_set}]"

        self.measure([visible], visible_body)

    def webdav_wait_for_uploads(self):
        mnt, self.mnt = self.mnt, self.dav_mnt
        try:
            self.wait_for_uploads()
        finally:
            self.mnt = mnt
