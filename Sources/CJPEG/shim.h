#ifndef TESSERA_CJPEG_SHIM_H
#define TESSERA_CJPEG_SHIM_H

// libjpeg(-turbo) for Tessera's image decoder. libjpeg reports errors by calling `error_exit`,
// which must not return; here it jumps back to the wrapper that made the call. Every wrapper
// below sets its own jump point before it calls into libjpeg, so a jump never crosses a Swift
// frame and never lands in a function that has already returned.
#include <stddef.h>
#include <stdio.h>
#include <setjmp.h>
#include <string.h>
#include <jpeglib.h>
#include <jerror.h>

/// The most scans a progressive file may have; each scan is a pass over the whole image, so a file
/// of thousands of tiny scans would take minutes to decode.
#define TESSERA_JPEG_MAX_SCANS 400

typedef struct TesseraJPEGError {
    struct jpeg_error_mgr manager;
    jmp_buf jump;
    char message[JMSG_LENGTH_MAX];
    int warnings;
} TesseraJPEGError;

/// Gives between 1 and `maximum` bytes at `out` from the reader `context` (0 at the end), or -1 when
/// reading failed (the caller keeps the reason).
typedef long (*TesseraJPEGReadFunction)(void *context, unsigned char *out, size_t maximum);
/// Moves the reader `context` on by `count` bytes without reading them.
typedef void (*TesseraJPEGSkipFunction)(void *context, size_t count);

/// libjpeg's source of bytes: Tessera's reader, through a 4 KB buffer. Skipping past the buffer moves
/// the reader on without reading, so a segment libjpeg passes over costs nothing to read.
typedef struct TesseraJPEGSource {
    struct jpeg_source_mgr manager;
    void *context;
    TesseraJPEGReadFunction read;
    TesseraJPEGSkipFunction skip;
    JOCTET buffer[4096];
} TesseraJPEGSource;

typedef struct TesseraJPEG {
    struct jpeg_decompress_struct info;  // first, so libjpeg's pointer is also this struct's
    TesseraJPEGError error;
    struct jpeg_progress_mgr progress;
    TesseraJPEGSource source;
    /// Application and comment segments seen, and the most allowed.
    int segments;
    int segmentLimit;
    int created;
} TesseraJPEG;

/// Ends the call in progress with `message` (as `error_exit` does).
static inline void tessera_jpeg_fail(j_common_ptr info, const char *message) {
    TesseraJPEGError *error = (TesseraJPEGError *)info->err;
    snprintf(error->message, sizeof error->message, "%s", message);
    longjmp(error->jump, 1);
}

static inline void tessera_jpeg_source_init(j_decompress_ptr info) { (void)info; }
static inline void tessera_jpeg_source_term(j_decompress_ptr info) { (void)info; }

/// Refills the buffer from the reader; at the end of the bytes, an end-of-image marker (with a
/// warning), as libjpeg's own sources do, so a cut file ends in grey rows.
static inline boolean tessera_jpeg_source_fill(j_decompress_ptr info) {
    TesseraJPEG *jpeg = (TesseraJPEG *)info;
    TesseraJPEGSource *source = &jpeg->source;
    long got = source->read(source->context, source->buffer, sizeof source->buffer);
    if (got < 0) tessera_jpeg_fail((j_common_ptr)info, "the reader failed");
    if (got == 0) {
        WARNMS(info, JWRN_JPEG_EOF);
        source->buffer[0] = (JOCTET)0xFF;
        source->buffer[1] = (JOCTET)JPEG_EOI;
        got = 2;
    }
    source->manager.next_input_byte = source->buffer;
    source->manager.bytes_in_buffer = (size_t)got;
    return TRUE;
}

static inline void tessera_jpeg_source_skip(j_decompress_ptr info, long count) {
    TesseraJPEG *jpeg = (TesseraJPEG *)info;
    struct jpeg_source_mgr *manager = &jpeg->source.manager;
    if (count <= 0) return;
    if ((size_t)count <= manager->bytes_in_buffer) {
        manager->next_input_byte += count;
        manager->bytes_in_buffer -= (size_t)count;
        return;
    }
    size_t beyond = (size_t)count - manager->bytes_in_buffer;
    manager->next_input_byte += manager->bytes_in_buffer;
    manager->bytes_in_buffer = 0;
    jpeg->source.skip(jpeg->source.context, beyond);
}

/// The next byte of the source (the source never suspends: at the end it gives an end marker).
static inline int tessera_jpeg_next_byte(j_decompress_ptr info) {
    struct jpeg_source_mgr *manager = info->src;
    if (manager->bytes_in_buffer == 0) (*manager->fill_input_buffer)(info);
    manager->bytes_in_buffer -= 1;
    return *manager->next_input_byte++;
}

/// Every application (APP0–APP15) and comment segment: counted against the limit, then skipped by
/// its length, unread, but for the first bytes of APP0 (JFIF) and APP14 (Adobe), which say how the
/// colours are stored and are read as libjpeg's own handler reads them. Nothing is kept: the EXIF
/// orientation is read before libjpeg starts.
static inline boolean tessera_jpeg_segment(j_decompress_ptr info) {
    TesseraJPEG *jpeg = (TesseraJPEG *)info;
    if (++jpeg->segments > jpeg->segmentLimit) {
        char message[JMSG_LENGTH_MAX];
        snprintf(message, sizeof message,
                 "more than %d metadata blocks (JPEG application and comment segments) in the file", jpeg->segmentLimit);
        tessera_jpeg_fail((j_common_ptr)info, message);
    }
    int marker = info->unread_marker;
    long length = (long)tessera_jpeg_next_byte(info) << 8;
    length |= tessera_jpeg_next_byte(info);
    length -= 2;
    if (marker == JPEG_APP0 || marker == JPEG_APP0 + 14) {
        JOCTET data[14];
        long count = length < 14 ? (length < 0 ? 0 : length) : 14;
        for (long i = 0; i < count; i++) data[i] = (JOCTET)tessera_jpeg_next_byte(info);
        length -= count;
        if (marker == JPEG_APP0 && count >= 14 && memcmp(data, "JFIF\0", 5) == 0) {
            info->saw_JFIF_marker = TRUE;
            info->JFIF_major_version = data[5];
            info->JFIF_minor_version = data[6];
            info->density_unit = data[7];
            info->X_density = (UINT16)((data[8] << 8) + data[9]);
            info->Y_density = (UINT16)((data[10] << 8) + data[11]);
        } else if (marker == JPEG_APP0 + 14 && count >= 12 && memcmp(data, "Adobe", 5) == 0) {
            info->saw_Adobe_marker = TRUE;
            info->Adobe_transform = data[11];
        }
    }
    if (length > 0) (*info->src->skip_input_data)(info, length);
    return TRUE;
}

static inline void tessera_jpeg_error_exit(j_common_ptr info) {
    TesseraJPEGError *error = (TesseraJPEGError *)info->err;
    (*info->err->format_message)(info, error->message);
    longjmp(error->jump, 1);
}

static inline void tessera_jpeg_emit_message(j_common_ptr info, int level) {
    // Level -1 is a warning about corrupt data; the decoder goes on with what it has.
    if (level < 0) ((TesseraJPEGError *)info->err)->warnings += 1;
}

static inline void tessera_jpeg_progress(j_common_ptr info) {
    if (info->is_decompressor) {
        j_decompress_ptr decompress = (j_decompress_ptr)info;
        if (decompress->input_scan_number > TESSERA_JPEG_MAX_SCANS) {
            TesseraJPEGError *error = (TesseraJPEGError *)info->err;
            snprintf(error->message, sizeof error->message, "more than %d scans", TESSERA_JPEG_MAX_SCANS);
            longjmp(error->jump, 1);
        }
    }
}

/// Reads the header from `read(context, …)` (skipping with `skip`), counting application and comment
/// segments against `segmentLimit` and keeping none of them. `memoryLimit` bounds libjpeg's own
/// allocations. Returns 0, or -1 with `jpeg->error.message` set. A file cut short ends in grey rows.
static inline int tessera_jpeg_open(TesseraJPEG *jpeg, void *context, TesseraJPEGReadFunction read,
                                    TesseraJPEGSkipFunction skip, long memoryLimit, int segmentLimit) {
    memset(jpeg, 0, sizeof *jpeg);
    jpeg->info.err = jpeg_std_error(&jpeg->error.manager);
    jpeg->error.manager.error_exit = tessera_jpeg_error_exit;
    jpeg->error.manager.emit_message = tessera_jpeg_emit_message;
    if (setjmp(jpeg->error.jump)) return -1;
    jpeg_create_decompress(&jpeg->info);
    jpeg->created = 1;
    jpeg->info.mem->max_memory_to_use = memoryLimit;
    jpeg->progress.progress_monitor = tessera_jpeg_progress;
    jpeg->info.progress = &jpeg->progress;
    jpeg->segmentLimit = segmentLimit;
    jpeg->source.context = context;
    jpeg->source.read = read;
    jpeg->source.skip = skip;
    jpeg->source.manager.init_source = tessera_jpeg_source_init;
    jpeg->source.manager.fill_input_buffer = tessera_jpeg_source_fill;
    jpeg->source.manager.skip_input_data = tessera_jpeg_source_skip;
    jpeg->source.manager.resync_to_restart = jpeg_resync_to_restart;
    jpeg->source.manager.term_source = tessera_jpeg_source_term;
    jpeg->info.src = &jpeg->source.manager;
    for (int n = 0; n < 16; n++) jpeg_set_marker_processor(&jpeg->info, JPEG_APP0 + n, tessera_jpeg_segment);
    jpeg_set_marker_processor(&jpeg->info, JPEG_COM, tessera_jpeg_segment);
    jpeg_read_header(&jpeg->info, TRUE);
    return 0;
}

/// Bytes libjpeg keeps for the whole image when it must buffer coefficients (progressive and
/// multi-scan files): 128 bytes per 8×8 block of every component. 0 for single-scan files.
static inline unsigned long long tessera_jpeg_coefficient_bytes(const TesseraJPEG *jpeg) {
    // A baseline file whose first scan holds every component is decoded row by row.
    if (!jpeg->info.progressive_mode && jpeg->info.comps_in_scan >= jpeg->info.num_components) return 0;
    unsigned long long total = 0;
    for (int i = 0; i < jpeg->info.num_components; i++) {
        const jpeg_component_info *c = &jpeg->info.comp_info[i];
        unsigned long long wide = ((unsigned long long)jpeg->info.image_width * c->h_samp_factor
                                   + (unsigned long long)jpeg->info.max_h_samp_factor * 8 - 1)
                                  / ((unsigned long long)jpeg->info.max_h_samp_factor * 8);
        unsigned long long tall = ((unsigned long long)jpeg->info.image_height * c->v_samp_factor
                                   + (unsigned long long)jpeg->info.max_v_samp_factor * 8 - 1)
                                  / ((unsigned long long)jpeg->info.max_v_samp_factor * 8);
        total += (wide + 1) * (tall + 1) * 128;
    }
    return total;
}

/// Starts decompressing at 1/`denominator` of the full size (1, 2, 4 or 8) into 4-byte pixels:
/// RGBA for colour and grey files, inverted CMYK as Adobe writes it for CMYK and YCCK files.
static inline int tessera_jpeg_start(TesseraJPEG *jpeg, unsigned int denominator) {
    if (setjmp(jpeg->error.jump)) return -1;
    jpeg->info.scale_num = 1;
    jpeg->info.scale_denom = denominator;
    jpeg->info.dct_method = JDCT_ISLOW;
    if (jpeg->info.jpeg_color_space == JCS_CMYK || jpeg->info.jpeg_color_space == JCS_YCCK) {
        jpeg->info.out_color_space = JCS_CMYK;
    } else {
        jpeg->info.out_color_space = JCS_EXT_RGBA;
    }
    jpeg_start_decompress(&jpeg->info);
    return 0;
}

/// Skips `count` rows without producing their pixels. Returns the rows skipped, or -1.
static inline long tessera_jpeg_skip_rows(TesseraJPEG *jpeg, unsigned int count) {
    if (setjmp(jpeg->error.jump)) return -1;
    return (long)jpeg_skip_scanlines(&jpeg->info, count);
}

/// Reads up to `count` rows into `rows` (each `output_width` × 4 bytes). Returns the rows read, or -1.
static inline long tessera_jpeg_read_rows(TesseraJPEG *jpeg, unsigned char *rows, unsigned int count) {
    if (setjmp(jpeg->error.jump)) return -1;
    size_t stride = (size_t)jpeg->info.output_width * 4;
    unsigned int done = 0;
    while (done < count && jpeg->info.output_scanline < jpeg->info.output_height) {
        JSAMPROW row = rows + stride * done;
        JDIMENSION read = jpeg_read_scanlines(&jpeg->info, &row, 1);
        if (read == 0) break;
        done += read;
    }
    return (long)done;
}

/// Whether the file carries Adobe's marker (its CMYK values are then stored inverted).
static inline int tessera_jpeg_adobe(const TesseraJPEG *jpeg) { return jpeg->info.saw_Adobe_marker; }

/// Frees everything libjpeg holds; safe after any failure.
static inline void tessera_jpeg_close(TesseraJPEG *jpeg) {
    if (!jpeg->created) return;
    if (setjmp(jpeg->error.jump)) return;
    jpeg_destroy_decompress(&jpeg->info);
    jpeg->created = 0;
}

#endif
