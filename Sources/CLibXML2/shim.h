// libxml2's SAX2 push parser, for reading WebDAV multistatus replies without building a tree.
#include <libxml/xmlversion.h>
// Debian's libxml2 is built with ICU, whose headers would then come from /usr/include and clash with the copy
// inside Foundation's module. Folio never touches a converter (the structures that hold one are only pointed to),
// so the headers are read as if ICU were not there.
#undef LIBXML_ICU_ENABLED
#include <libxml/parser.h>
#include <libxml/xmlerror.h>
