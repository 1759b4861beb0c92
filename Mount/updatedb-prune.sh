#!/bin/sh
# Keeps `updatedb` (locate) off Folio mounts, only when you ask: adds `fuse.folio` to PRUNEFS in updatedb.conf
# (or removes it with --remove). Names and sizes cost a Folio mount nothing to list (no content is downloaded),
# so indexing a mount with locate is cheap; prune it if you would rather not have remote documents in the
# locate database, or if the remote is very large (listing every folder enumerates it from the provider once).
#
#   Mount/updatedb-prune.sh [--remove] [CONF]     (CONF: /etc/updatedb.conf by default; needs root for that one)
#
# The file is rewritten atomically (a temporary file beside it, renamed over it); running it twice changes
# nothing the second time.
set -eu

remove=0
if [ "${1:-}" = "--remove" ]; then
    remove=1
    shift
fi
conf="${1:-/etc/updatedb.conf}"
if [ ! -f "$conf" ]; then
    echo "updatedb-prune: $conf does not exist (is locate installed? plocate and mlocate read it)" >&2
    exit 1
fi

temporary="$conf.folio-tmp.$$"
trap 'rm -f "$temporary"' EXIT
awk -v remove="$remove" '
    function rewrite(line,    value, count, words, i, out) {
        value = line
        sub(/^[ \t]*PRUNEFS[ \t]*=[ \t]*"?/, "", value)
        sub(/"?[ \t]*$/, "", value)
        count = split(value, words, /[ \t]+/)
        out = ""
        for (i = 1; i <= count; i++) {
            if (words[i] == "" || words[i] == "fuse.folio") continue
            out = out (out == "" ? "" : " ") words[i]
        }
        if (!remove) out = out (out == "" ? "" : " ") "fuse.folio"
        return "PRUNEFS = \"" out "\""
    }
    /^[ \t]*PRUNEFS[ \t]*=/ { print rewrite($0); seen = 1; next }
    { print }
    END { if (!seen && !remove) print "PRUNEFS = \"fuse.folio\"" }
' "$conf" > "$temporary"
chmod --reference="$conf" "$temporary" 2>/dev/null || true
if cmp -s "$conf" "$temporary"; then
    echo "updatedb-prune: $conf already $( [ "$remove" = 1 ] && echo "lets updatedb into" || echo "keeps updatedb off" ) Folio mounts"
    exit 0
fi
mv "$temporary" "$conf"
trap - EXIT
if [ "$remove" = 1 ]; then
    echo "updatedb-prune: updatedb indexes Folio mounts again ($conf)"
else
    echo "updatedb-prune: updatedb keeps off Folio mounts (fuse.folio in PRUNEFS of $conf)"
fi
