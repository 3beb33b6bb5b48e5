#ifndef TESSERA_CPNG_SHIM_H
#define TESSERA_CPNG_SHIM_H

// libpng for Tessera's image decoder. libpng reports errors by jumping to the point set with
// `png_jmpbuf`; every wrapper below sets its own before it calls into libpng, so a jump never
// crosses a Swift frame. Bytes come through a read function that ends where the bytes end.
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <setjmp.h>
#include <png.h>

/// Gives `count` bytes at `out` from the reader `context`: `count`, fewer only where the bytes end,
/// or -1 when reading failed (the caller keeps the reason).
typedef long (*TesseraPNGReadFunction)(void *context, unsigned char *out, size_t count);

typedef struct TesseraPNG {
    png_structp png;
    png_infop info;
    void *context;
    TesseraPNGReadFunction read;
    char message[200];
    /// The last warning libpng gave (a chunk it refused, such as a colour profile it found invalid).
    char warning[200];
} TesseraPNG;

static inline void tessera_png_error(png_structp png, png_const_charp message) {
    TesseraPNG *reader = (TesseraPNG *)png_get_error_ptr(png);
    strncpy(reader->message, message ? message : "unknown error", sizeof reader->message - 1);
    reader->message[sizeof reader->message - 1] = 0;
    png_longjmp(png, 1);
}

static inline void tessera_png_warning(png_structp png, png_const_charp message) {
    TesseraPNG *reader = (TesseraPNG *)png_get_error_ptr(png);
    strncpy(reader->warning, message ? message : "unknown warning", sizeof reader->warning - 1);
    reader->warning[sizeof reader->warning - 1] = 0;
}

static inline void tessera_png_read(png_structp png, png_bytep out, png_size_t count) {
    TesseraPNG *reader = (TesseraPNG *)png_get_io_ptr(png);
    long got = reader->read(reader->context, out, count);
    if (got < 0) png_error(png, "the reader failed");
    if ((size_t)got != count) png_error(png, "the file is cut short");
}

/// Reads the header and sets up 8-bit RGBA output (palette, grey, 16-bit and tRNS expanded; straight
/// alpha, opaque files filled with 0xFF). `maximumSide` bounds each side and `chunkLimit` the memory
/// any one chunk may inflate to. Bytes come from `read(context, …)`, which Tessera gives only the
/// chunks it needs (the colour profile among them); libpng keeps no unknown chunk and caches at most
/// a few. No gamma or colour transform is asked of libpng: Tessera converts colours itself. Returns
/// 0, or -1 with a message.
static inline int tessera_png_open(TesseraPNG *reader, void *context, TesseraPNGReadFunction read,
                                   unsigned int maximumSide, size_t chunkLimit) {
    memset(reader, 0, sizeof *reader);
    reader->context = context;
    reader->read = read;
    reader->png = png_create_read_struct(PNG_LIBPNG_VER_STRING, reader, tessera_png_error, tessera_png_warning);
    if (reader->png == NULL) { strcpy(reader->message, "out of memory"); return -1; }
    reader->info = png_create_info_struct(reader->png);
    if (reader->info == NULL) { strcpy(reader->message, "out of memory"); return -1; }
    if (setjmp(png_jmpbuf(reader->png))) return -1;
    png_set_read_fn(reader->png, reader, tessera_png_read);
    png_set_user_limits(reader->png, maximumSide, maximumSide);
    png_set_chunk_malloc_max(reader->png, chunkLimit);
    png_set_keep_unknown_chunks(reader->png, PNG_HANDLE_CHUNK_NEVER, NULL, 0);
    png_set_chunk_cache_max(reader->png, 8);
    png_read_info(reader->png, reader->info);
    png_set_expand(reader->png);
    png_set_scale_16(reader->png);
    png_set_gray_to_rgb(reader->png);
    png_set_filler(reader->png, 0xFF, PNG_FILLER_AFTER);
    png_set_interlace_handling(reader->png);
    png_read_update_info(reader->png, reader->info);
    return 0;
}

/// The ICC profile of the image's iCCP chunk, inflated and checked by libpng (its header, its tag
/// table, its colour space against the image's colour type). Returns 1 with `profile` and `length`
/// set (valid until `tessera_png_close`), or 0 when there is none or libpng refused it (the reason
/// is then the last `warning`).
static inline int tessera_png_profile(const TesseraPNG *reader, const unsigned char **profile, unsigned int *length) {
    png_charp name = NULL;
    int compression = 0;
    png_bytep data = NULL;
    png_uint_32 size = 0;
    if (png_get_iCCP(reader->png, reader->info, &name, &compression, &data, &size) != PNG_INFO_iCCP) return 0;
    if (data == NULL || size == 0) return 0;
    *profile = data;
    *length = size;
    return 1;
}

static inline unsigned int tessera_png_width(const TesseraPNG *r) { return png_get_image_width(r->png, r->info); }
static inline unsigned int tessera_png_height(const TesseraPNG *r) { return png_get_image_height(r->png, r->info); }
static inline int tessera_png_interlaced(const TesseraPNG *r) {
    return png_get_interlace_type(r->png, r->info) != PNG_INTERLACE_NONE;
}
static inline size_t tessera_png_row_bytes(const TesseraPNG *r) { return png_get_rowbytes(r->png, r->info); }

/// Reads the next row of a non-interlaced image into `row` (`row_bytes` long). Returns 0 or -1.
static inline int tessera_png_read_row(TesseraPNG *reader, unsigned char *row) {
    if (setjmp(png_jmpbuf(reader->png))) return -1;
    png_read_row(reader->png, row, NULL);
    return 0;
}

/// Reads a whole image (every pass of an interlaced one) into `rows`, `height` pointers long.
static inline int tessera_png_read_image(TesseraPNG *reader, unsigned char **rows) {
    if (setjmp(png_jmpbuf(reader->png))) return -1;
    png_read_image(reader->png, rows);
    return 0;
}

/// Frees everything libpng holds; safe after any failure.
static inline void tessera_png_close(TesseraPNG *reader) {
    if (reader->png != NULL) png_destroy_read_struct(&reader->png, reader->info ? &reader->info : NULL, NULL);
    reader->png = NULL;
    reader->info = NULL;
}

#endif
