#ifndef TESSERA_CZLIB_SHIM_H
#define TESSERA_CZLIB_SHIM_H

// zlib for LoopbackServer's gzip bodies. `deflateInit2` is a macro (it passes the library's version
// and the stream's size); the wrapper below is what Swift calls.
#include <zlib.h>

/// Starts a gzip stream (window bits 15 + 16: the gzip wrapper rather than zlib's) at `level`.
static inline int tessera_deflate_init_gzip(z_stream *stream, int level) {
    return deflateInit2(stream, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
}

/// Starts reading a gzip stream (window bits 15 + 16).
static inline int tessera_inflate_init_gzip(z_stream *stream) {
    return inflateInit2(stream, 15 + 16);
}

#endif
