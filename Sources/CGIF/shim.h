#ifndef TESSERA_CGIF_SHIM_H
#define TESSERA_CGIF_SHIM_H

// giflib for Tessera's image decoder: a GIF's first frame, read through a read function that ends
// where the bytes end. giflib returns error codes; nothing here jumps.
#include <stddef.h>
#include <string.h>
#include <gif_lib.h>

/// Gives `count` bytes at `out` from the reader `context`: `count`, fewer only where the bytes end,
/// or -1 when reading failed (the caller keeps the reason).
typedef long (*TesseraGIFReadFunction)(void *context, unsigned char *out, size_t count);

typedef struct TesseraGIFReader {
    void *context;
    TesseraGIFReadFunction read;
} TesseraGIFReader;

static inline int tessera_gif_read(GifFileType *gif, GifByteType *out, int count) {
    TesseraGIFReader *reader = (TesseraGIFReader *)gif->UserData;
    if (count <= 0) return 0;
    long got = reader->read(reader->context, out, (size_t)count);
    return got < 0 ? 0 : (int)got;
}

/// Opens the GIF `reader` reads (which must outlive the handle): giflib reads the screen descriptor
/// and the global colour table, and nothing more until asked. NULL with `*error` set on failure.
static inline GifFileType *tessera_gif_open(TesseraGIFReader *reader, int *error) {
    return DGifOpen(reader, tessera_gif_read, error);
}

#endif
