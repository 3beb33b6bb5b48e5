#ifndef TESSERA_CCURL_SHIM_H
#define TESSERA_CCURL_SHIM_H

// libcurl's types and constants for Tessera's image fetches (`CurlImageFetcher`). The library itself
// is not linked: `CCurlLoader` loads it the first time a fetch needs it, so that an app that never
// fetches by URL maps none of it (libcurl and the TLS, HTTP/2, SSH, LDAP and Kerberos libraries it
// brings: two dozen libraries, about 5 MB resident).
#include <curl/curl.h>

#endif
