#!/bin/sh
# End-to-end test of Mount/mount.folio through mount(8): `mount -t fuse.folio`, an fstab line (mount -T),
# option translation and rejection, a write through the mount, `umount`.
#
# Usage: Mount/test-mount-helper.sh [FOLIO_BINARY]
#   FOLIO_BINARY (or $FOLIO) defaults to /usr/local/bin/folio, then .build/release/folio, .build/debug/folio.
# Needs root: mount(8) only runs helpers from /sbin, so the helper is installed as /sbin/mount.fuse.folio for
# the test (an existing one is put back afterwards). Exit status: 0 passed, 1 failed, 77 skipped (not root).
# Every step that touches the mount has a time-out; everything is cleaned up on exit.

set -u
here=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$here")
helper_installed=/sbin/mount.fuse.folio
step_timeout=60

say() { echo "test-mount-helper: $*"; }
fail() {
    say "FAIL: $*"
    exit 1
}

if [ "$(id -u)" -ne 0 ]; then
    say "SKIP: needs root (mount(8) and /sbin/mount.fuse.folio)"
    exit 77
fi
if [ ! -e /dev/fuse ]; then
    say "SKIP: no /dev/fuse"
    exit 77
fi

folio=${1:-${FOLIO:-}}
if [ -z "$folio" ]; then
    for candidate in /usr/local/bin/folio "$repo/.build/release/folio" "$repo/.build/debug/folio"; do
        if [ -x "$candidate" ]; then
            folio=$candidate
            break
        fi
    done
fi
[ -n "$folio" ] && [ -x "$folio" ] || fail "no folio binary (pass it as an argument or set FOLIO)"
folio=$(cd "$(dirname "$folio")" && pwd)/$(basename "$folio")
# mount(8) passes the environment through to the helper (as root), so the helper finds this binary.
FOLIO=$folio
export FOLIO

tmp=$(mktemp -d /tmp/folio-mount-test.XXXXXX) || fail "mktemp"
remote=$tmp/remote
state=$tmp/state
mnt=$tmp/mnt
mnt2=$tmp/mnt2
mkdir -p "$mnt" "$mnt2"
backup=
installed=no

cleanup() {
    status=$?
    trap - EXIT INT TERM HUP
    for mountpoint in "$mnt" "$mnt2"; do
        if mountpoint -q "$mountpoint" 2>/dev/null; then
            timeout 20 umount "$mountpoint" 2>/dev/null || umount -l "$mountpoint" 2>/dev/null \
                || fusermount3 -u -z "$mountpoint" 2>/dev/null
        fi
    done
    if [ -n "${daemon_pid:-}" ] && kill -0 "$daemon_pid" 2>/dev/null; then
        kill "$daemon_pid" 2>/dev/null
        sleep 1
        kill -9 "$daemon_pid" 2>/dev/null
    fi
    if [ "$installed" = yes ]; then
        rm -f "$helper_installed"
        [ -n "$backup" ] && mv -f "$backup" "$helper_installed"
    fi
    if mountpoint -q "$mnt" 2>/dev/null || mountpoint -q "$mnt2" 2>/dev/null; then
        say "warning: a mount is left under $tmp"
    else
        rm -rf "$tmp"
    fi
    exit "$status"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

# One test at a time on this machine (they share /sbin/mount.fuse.folio).
exec 9>/run/lock/folio-mount-helper-test.lock 2>/dev/null || exec 9>/tmp/folio-mount-helper-test.lock
flock -w 300 9 || fail "another test-mount-helper.sh holds the lock"

# Install the helper under the name mount(8) looks for.
if [ -e "$helper_installed" ] || [ -L "$helper_installed" ]; then
    backup=$tmp/mount.fuse.folio.orig
    cp -P "$helper_installed" "$backup" || fail "cannot back up $helper_installed"
fi
installed=yes
install -m 0755 "$here/mount.folio" "$helper_installed" || fail "cannot install $helper_installed"

fstype() { findmnt -n -o FSTYPE --mountpoint "$1" 2>/dev/null; }

# 1. mount -t fuse.folio with options.
out=$(timeout "$step_timeout" mount -t fuse.folio "$remote" "$mnt" -o "noatime,nodev,state=$state,write_wait=2" 2>&1) \
    || fail "mount -t fuse.folio failed: $out"
[ "$(fstype "$mnt")" = fuse.folio ] || fail "expected type fuse.folio at $mnt, got '$(fstype "$mnt")'"
mount | grep -q " on $mnt type fuse.folio " || fail "mount(8) does not list $mnt as fuse.folio"
say "ok: mount -t fuse.folio ($(findmnt -n -o SOURCE,OPTIONS --mountpoint "$mnt"))"
daemon_pid=$(timeout 20 "$folio" status --json "$mnt" | sed -n 's/^ *"pid" *: *\([0-9][0-9]*\).*/\1/p' | head -n 1)
[ -n "$daemon_pid" ] || fail "folio status does not answer for $mnt"

# 2. Write through the mount, read it back, see it reach the remote.
timeout "$step_timeout" sh -c 'echo "hello from mount.folio" > "$1/hello.txt"' sh "$mnt" \
    || fail "write through the mount"
[ "$(timeout "$step_timeout" cat "$mnt/hello.txt")" = "hello from mount.folio" ] || fail "read back through the mount"
uploaded=no
for _ in $(seq 1 100); do
    if [ "$(cat "$remote/com.folio.drive/hello.txt" 2>/dev/null)" = "hello from mount.folio" ]; then
        uploaded=yes
        break
    fi
    sleep 0.2
done
[ "$uploaded" = yes ] || fail "hello.txt did not reach the remote ($remote/com.folio.drive/hello.txt)"
say "ok: write, read back, upload"

# 3. Unknown options are refused with a message, and nothing is mounted.
out=$(timeout "$step_timeout" mount -t fuse.folio "$remote" "$mnt2" -o bogus_option 2>&1) \
    && fail "mount with an unknown option succeeded"
echo "$out" | grep -q "unknown option 'bogus_option'" || fail "no clear message for an unknown option: $out"
mountpoint -q "$mnt2" && fail "$mnt2 got mounted despite the unknown option"
say "ok: unknown option refused ($out)"

# 4. umount, and the daemon exits.
timeout "$step_timeout" umount "$mnt" || fail "umount $mnt"
mountpoint -q "$mnt" && fail "$mnt still mounted after umount"
for _ in $(seq 1 100); do
    kill -0 "$daemon_pid" 2>/dev/null || break
    sleep 0.1
done
kill -0 "$daemon_pid" 2>/dev/null && fail "daemon $daemon_pid still running 10 s after umount"
daemon_pid=
say "ok: umount"

# 5. An fstab line (mount -T FILE MOUNTPOINT reads an alternative fstab), the file is still there.
printf '%s %s fuse.folio noauto,nofail,_netdev,x-systemd.automount,state=%s 0 0\n' "$remote" "$mnt2" "$state" \
    > "$tmp/fstab"
out=$(timeout "$step_timeout" mount -T "$tmp/fstab" "$mnt2" 2>&1) || fail "mount from an fstab line failed: $out"
[ "$(fstype "$mnt2")" = fuse.folio ] || fail "fstab mount: expected type fuse.folio, got '$(fstype "$mnt2")'"
[ "$(timeout "$step_timeout" cat "$mnt2/hello.txt")" = "hello from mount.folio" ] || fail "hello.txt after remount"
daemon_pid=$(timeout 20 "$folio" status --json "$mnt2" | sed -n 's/^ *"pid" *: *\([0-9][0-9]*\).*/\1/p' | head -n 1)
timeout "$step_timeout" umount "$mnt2" || fail "umount $mnt2"
mountpoint -q "$mnt2" && fail "$mnt2 still mounted after umount"
say "ok: fstab line, remount, umount"

say "PASS"
exit 0
