#ifndef TESSERA_CGIF_SHIM_H
#define TESSERA_CGIF_SHIM_H

// giflib for Tessera's image decoder: a GIF's first frame, read from memory through a reader that
// never reads past the end. giflib returns error codes; nothing here jumps.
#include <stddef.h>
#include <string.h>
#include <gif_lib.h>

typedef struct TesseraGIFReader {
    const unsigned char *data;
    size_t size;
    size_t offset;
} TesseraGIFReader;

static inline int tessera_gif_read(GifFileType *gif, GifByteType *out, int count) {
    TesseraGIFReader *reader = (TesseraGIFReader *)gif->UserData;
    size_t wanted = count < 0 ? 0 : (size_t)count;
    size_t available = reader->size - reader->offset;
    if (wanted > available) wanted = available;
    memcpy(out, reader->data + reader->offset, wanted);
    reader->offset += wanted;
    return (int)wanted;
}

/// Opens the GIF in `reader` (whose bytes must outlive the handle). NULL with `*error` set on failure.
static inline GifFileType *tessera_gif_open(TesseraGIFReader *reader, int *error) {
    return DGifOpen(reader, tessera_gif_read, error);
}

#endif
