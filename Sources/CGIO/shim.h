// GLib's GIO: shared-mime-info type guessing (globs, then magic) and the helpers the Thumbnail Managing
// Standard is written against (file URIs, MD5). Debian: libglib2.0-dev.
#include <gio/gio.h>
