#!/bin/sh
# Checks that a folio binary runs without the Swift toolchain it was built with: the Swift runtime and
# Foundation are linked in (`swift build -c release --static-swift-stdlib`), so `ldd` lists only system
# libraries (libc, libfuse3, libsqlite3, …), none of the toolchain's libswift*.so / libFoundation*.so.
#
# Usage: Mount/check-static-binary.sh [FOLIO_BINARY]   (default .build/release/folio)
# As root, with unshare(1), it also runs `folio --version` with the toolchain folder hidden behind an empty
# tmpfs in a private mount namespace. Exit status: 0 passed, 1 failed.

set -u
binary=${1:-.build/release/folio}
say() { echo "check-static-binary: $*"; }
fail() {
    say "FAIL: $*"
    exit 1
}

[ -x "$binary" ] || fail "no executable $binary (build it with: swift build -c release --static-swift-stdlib)"
libraries=$(ldd "$binary" 2>&1) || fail "ldd $binary failed: $libraries"
toolchain_libraries=$(echo "$libraries" | grep -E 'libswift|libFoundation|lib_Foundation|libdispatch|libBlocksRuntime')
[ -z "$toolchain_libraries" ] || fail "$binary needs the Swift toolchain's libraries:
$toolchain_libraries
(build it with: swift build -c release --static-swift-stdlib)"
missing=$(echo "$libraries" | grep 'not found')
[ -z "$missing" ] || fail "$binary needs libraries this machine lacks:
$missing"
say "ok: ldd lists no Swift runtime library"

# Run it where the toolchain cannot be found at all.
swift=$(command -v swift 2>/dev/null)
toolchain=
[ -n "$swift" ] && toolchain=$(dirname "$(dirname "$(dirname "$(readlink -f "$swift")")")")
if [ "$(id -u)" -eq 0 ] && command -v unshare >/dev/null && [ -n "$toolchain" ] && [ "$toolchain" != / ]; then
    absolute=$(readlink -f "$binary")
    version=$(unshare -m sh -c 'mount -t tmpfs none "$1" && env -i "$2" --version' sh "$toolchain" "$absolute" 2>&1) \
        || fail "$binary does not run with $toolchain hidden: $version"
    say "ok: runs with the toolchain ($toolchain) hidden: folio --version says $version"
else
    version=$(env -i "$binary" --version 2>&1) || fail "$binary --version failed: $version"
    say "ok: folio --version says $version (toolchain not hidden: needs root and unshare)"
fi
say "PASS"
