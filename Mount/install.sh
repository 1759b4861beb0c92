#!/bin/sh
# Builds folio for installation and installs it with the mount(8) helper.
#
# Usage: Mount/install.sh [--prefix DIR] [--no-helper] [--check-only] [--scratch-path DIR]
#   --prefix DIR   install the binary as DIR/bin/folio (default /usr/local)
#   --scratch-path DIR  build there (swift build --scratch-path; default .build)
#   --no-helper    do not install /sbin/mount.fuse.folio (mount -t fuse.folio, fstab)
#   --check-only   build and check the binary, install nothing (.ci/run does this)
#
# The release build links the Swift runtime and Foundation statically (--static-swift-stdlib), so the installed
# binary keeps working when the Swift toolchain moves or goes; Mount/check-static-binary.sh checks that with ldd
# before anything is installed. A release build takes several minutes.

set -eu
here=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$here")
prefix=/usr/local
helper=yes
check_only=no
scratch=.build
while [ $# -gt 0 ]; do
    case "$1" in
        --prefix) prefix=$2; shift 2 ;;
        --no-helper) helper=no; shift ;;
        --check-only) check_only=yes; shift ;;
        --scratch-path) scratch=$2; shift 2 ;;
        *) echo "usage: $0 [--prefix DIR] [--no-helper] [--check-only] [--scratch-path DIR]" >&2; exit 1 ;;
    esac
done

cd "$repo"
build="swift build -c release --static-swift-stdlib --product folio --scratch-path $scratch"
$build
binary=$($build --show-bin-path)/folio
sh "$here/check-static-binary.sh" "$binary"
[ "$check_only" = yes ] && exit 0

sudo=
[ "$(id -u)" -eq 0 ] || sudo=sudo
$sudo install -D -m 0755 "$binary" "$prefix/bin/folio"
echo "installed $prefix/bin/folio ($("$prefix/bin/folio" --version))"
if [ "$helper" = yes ]; then
    $sudo install -m 0755 "$here/mount.folio" /sbin/mount.fuse.folio
    echo "installed /sbin/mount.fuse.folio (mount -t fuse.folio; see Mount/README.md)"
fi
