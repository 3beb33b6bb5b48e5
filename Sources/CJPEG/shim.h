#ifndef TESSERA_CJPEG_SHIM_H
#define TESSERA_CJPEG_SHIM_H

// libjpeg(-turbo) for Tessera's image decoder. libjpeg reports errors by calling `error_exit`,
// which must not return; here it jumps back to the wrapper that made the call. Every wrapper
// below sets its own jump point before it calls into libjpeg, so a jump never crosses a Swift
// frame and never lands in a function that has already returned.
#include <stddef.h>
#include <stdlib.h>
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
/// multi-scan files, and every file decoded in buffered-image mode): 128 bytes per 8×8 block of every
/// component. 0 for single-scan files unless `buffered`.
static inline unsigned long long tessera_jpeg_info_coefficient_bytes(const struct jpeg_decompress_struct *info,
                                                                     int buffered) {
    // A baseline file whose first scan holds every component is decoded row by row.
    if (!buffered && !info->progressive_mode && info->comps_in_scan >= info->num_components) return 0;
    unsigned long long total = 0;
    for (int i = 0; i < info->num_components; i++) {
        const jpeg_component_info *c = &info->comp_info[i];
        unsigned long long wide = ((unsigned long long)info->image_width * c->h_samp_factor
                                   + (unsigned long long)info->max_h_samp_factor * 8 - 1)
                                  / ((unsigned long long)info->max_h_samp_factor * 8);
        unsigned long long tall = ((unsigned long long)info->image_height * c->v_samp_factor
                                   + (unsigned long long)info->max_v_samp_factor * 8 - 1)
                                  / ((unsigned long long)info->max_v_samp_factor * 8);
        total += (wide + 1) * (tall + 1) * 128;
    }
    return total;
}

/// `tessera_jpeg_info_coefficient_bytes` for a decode that is not buffered.
static inline unsigned long long tessera_jpeg_coefficient_bytes(const TesseraJPEG *jpeg) {
    return tessera_jpeg_info_coefficient_bytes(&jpeg->info, 0);
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

// MARK: - Bytes as they arrive: buffered-image mode over a suspending source

/// A progressive JPEG decoded while its bytes arrive (libjpeg's buffered-image mode). The bytes are
/// the caller's: every call below is given all the bytes received so far (`base`, `length`, which may
/// have moved since the last call as the caller's buffer grew) and whether they are all there
/// (`complete`). Between calls the source remembers only an offset, so nothing points into a buffer
/// that has moved. When libjpeg wants bytes that have not arrived, the source suspends: the call
/// returns and libjpeg resumes from the same point on the next call. Once `complete`, the end of the
/// bytes reads as an end-of-image marker (with a warning), as the whole-file source does.
typedef struct TesseraJPEGStream {
    struct jpeg_decompress_struct info;  // first, so libjpeg's pointer is also this struct's
    TesseraJPEGError error;
    struct jpeg_progress_mgr progress;
    struct jpeg_source_mgr source;
    const JOCTET *base;
    size_t length;
    /// Where libjpeg's reading stands between calls, as an offset into the bytes.
    size_t position;
    /// A skip that reached past the bytes received: reading resumes here.
    size_t skip_to;
    int complete;
    int created;
    /// The last scan whose data has been read in full (0: none yet).
    int complete_scans;
    /// The end-of-image marker has been read.
    int reached_end;
    /// An output pass was started and `jpeg_finish_output` has not yet returned TRUE.
    int output_open;
} TesseraJPEGStream;

static inline boolean tessera_jpeg_stream_fill(j_decompress_ptr info) {
    TesseraJPEGStream *stream = (TesseraJPEGStream *)info;
    static const JOCTET end_of_image[2] = {(JOCTET)0xFF, (JOCTET)JPEG_EOI};
    if (!stream->complete) return FALSE;  // suspend until more bytes arrive
    WARNMS(info, JWRN_JPEG_EOF);
    stream->source.next_input_byte = end_of_image;
    stream->source.bytes_in_buffer = 2;
    return TRUE;
}

static inline void tessera_jpeg_stream_skip(j_decompress_ptr info, long count) {
    TesseraJPEGStream *stream = (TesseraJPEGStream *)info;
    struct jpeg_source_mgr *manager = &stream->source;
    if (count <= 0) return;
    if ((size_t)count <= manager->bytes_in_buffer) {
        manager->next_input_byte += count;
        manager->bytes_in_buffer -= (size_t)count;
        return;
    }
    size_t here = stream->length;
    if (manager->next_input_byte >= stream->base && manager->next_input_byte <= stream->base + stream->length) {
        here = (size_t)(manager->next_input_byte - stream->base);
    }
    stream->skip_to = here + (size_t)count;
    manager->next_input_byte += manager->bytes_in_buffer;
    manager->bytes_in_buffer = 0;
}

/// Points the source at the bytes of this call, from where reading stands.
static inline void tessera_jpeg_stream_enter(TesseraJPEGStream *stream, const unsigned char *base, size_t length,
                                             int complete) {
    stream->base = base;
    stream->length = length;
    stream->complete = complete;
    stream->skip_to = 0;
    if (stream->position < length) {
        stream->source.next_input_byte = base + stream->position;
        stream->source.bytes_in_buffer = length - stream->position;
    } else {
        stream->source.next_input_byte = base + length;
        stream->source.bytes_in_buffer = 0;
        stream->skip_to = stream->position;
    }
}

/// Remembers where reading stands as an offset, so no pointer into the bytes outlives the call.
static inline void tessera_jpeg_stream_leave(TesseraJPEGStream *stream) {
    const JOCTET *next = stream->source.next_input_byte;
    size_t position = stream->length;
    if (next >= stream->base && next <= stream->base + stream->length) position = (size_t)(next - stream->base);
    if (stream->skip_to > position) position = stream->skip_to;
    stream->position = position;
    stream->base = NULL;
    stream->source.next_input_byte = NULL;
    stream->source.bytes_in_buffer = 0;
}

/// Sets up the decoder; `memoryLimit` bounds libjpeg's own allocations. Returns 0, or -1.
static inline int tessera_jpeg_stream_create(TesseraJPEGStream *stream, long memoryLimit) {
    memset(stream, 0, sizeof *stream);
    stream->info.err = jpeg_std_error(&stream->error.manager);
    stream->error.manager.error_exit = tessera_jpeg_error_exit;
    stream->error.manager.emit_message = tessera_jpeg_emit_message;
    if (setjmp(stream->error.jump)) return -1;
    jpeg_create_decompress(&stream->info);
    stream->created = 1;
    stream->info.mem->max_memory_to_use = memoryLimit;
    stream->progress.progress_monitor = tessera_jpeg_progress;
    stream->info.progress = &stream->progress;
    stream->source.init_source = tessera_jpeg_source_init;
    stream->source.fill_input_buffer = tessera_jpeg_stream_fill;
    stream->source.skip_input_data = tessera_jpeg_stream_skip;
    stream->source.resync_to_restart = jpeg_resync_to_restart;
    stream->source.term_source = tessera_jpeg_source_term;
    stream->info.src = &stream->source;
    return 0;
}

/// Reads the header: 1 when it is read, 0 when more bytes are needed, -1 on failure.
static inline int tessera_jpeg_stream_read_header(TesseraJPEGStream *stream, const unsigned char *base,
                                                  size_t length, int complete) {
    tessera_jpeg_stream_enter(stream, base, length, complete);
    if (setjmp(stream->error.jump)) { tessera_jpeg_stream_leave(stream); return -1; }
    int status = jpeg_read_header(&stream->info, TRUE);
    tessera_jpeg_stream_leave(stream);
    return status == JPEG_HEADER_OK ? 1 : (status == JPEG_SUSPENDED ? 0 : -1);
}

/// Whether the file is progressive: several scans, each a better picture of the whole image.
static inline int tessera_jpeg_stream_is_progressive(const TesseraJPEGStream *stream) {
    return stream->info.progressive_mode && jpeg_has_multiple_scans((j_decompress_ptr)&stream->info);
}

/// Starts buffered-image decompression at 1/`denominator` of the full size into 4-byte pixels (as
/// `tessera_jpeg_start`): 1 when started, 0 when more bytes are needed, -1 on failure.
static inline int tessera_jpeg_stream_start(TesseraJPEGStream *stream, const unsigned char *base, size_t length,
                                            int complete, unsigned int denominator) {
    tessera_jpeg_stream_enter(stream, base, length, complete);
    if (setjmp(stream->error.jump)) { tessera_jpeg_stream_leave(stream); return -1; }
    stream->info.buffered_image = TRUE;
    stream->info.scale_num = 1;
    stream->info.scale_denom = denominator;
    stream->info.dct_method = JDCT_ISLOW;
    if (stream->info.jpeg_color_space == JCS_CMYK || stream->info.jpeg_color_space == JCS_YCCK) {
        stream->info.out_color_space = JCS_CMYK;
    } else {
        stream->info.out_color_space = JCS_EXT_RGBA;
    }
    boolean started = jpeg_start_decompress(&stream->info);
    tessera_jpeg_stream_leave(stream);
    return started ? 1 : 0;
}

/// Reads every byte that has arrived into libjpeg's coefficient buffer. Returns the number of scans
/// read in full so far (`complete_scans`; `reached_end` once the end marker is read), or -1.
static inline int tessera_jpeg_stream_consume(TesseraJPEGStream *stream, const unsigned char *base, size_t length,
                                              int complete) {
    tessera_jpeg_stream_enter(stream, base, length, complete);
    if (setjmp(stream->error.jump)) { tessera_jpeg_stream_leave(stream); return -1; }
    while (!stream->reached_end) {
        int status = jpeg_consume_input(&stream->info);
        if (status == JPEG_SUSPENDED) break;
        if (status == JPEG_SCAN_COMPLETED) stream->complete_scans = stream->info.input_scan_number;
        if (status == JPEG_REACHED_EOI) {
            stream->complete_scans = stream->info.input_scan_number;
            stream->reached_end = 1;
        }
    }
    tessera_jpeg_stream_leave(stream);
    return stream->complete_scans;
}

/// Starts an output pass showing the image as of scan `scan` (a scan read in full, so the pass
/// needs no more bytes), first finishing the previous pass if it was left waiting for bytes.
/// 1 when started, 0 when the previous pass still waits for bytes, -1 on failure.
static inline int tessera_jpeg_stream_start_output(TesseraJPEGStream *stream, const unsigned char *base,
                                                   size_t length, int complete, int scan) {
    tessera_jpeg_stream_enter(stream, base, length, complete);
    if (setjmp(stream->error.jump)) { tessera_jpeg_stream_leave(stream); return -1; }
    if (stream->output_open) {
        if (!jpeg_finish_output(&stream->info)) { tessera_jpeg_stream_leave(stream); return 0; }
        stream->output_open = 0;
    }
    jpeg_start_output(&stream->info, scan);
    stream->output_open = 1;
    tessera_jpeg_stream_leave(stream);
    return 1;
}

/// Reads up to `count` rows of the output pass into `rows` (each `output_width` × 4 bytes). Returns
/// the rows read (fewer only when the pass ends), or -1.
static inline long tessera_jpeg_stream_read_rows(TesseraJPEGStream *stream, const unsigned char *base,
                                                 size_t length, int complete, unsigned char *rows,
                                                 unsigned int count) {
    tessera_jpeg_stream_enter(stream, base, length, complete);
    if (setjmp(stream->error.jump)) { tessera_jpeg_stream_leave(stream); return -1; }
    size_t stride = (size_t)stream->info.output_width * 4;
    unsigned int done = 0;
    while (done < count && stream->info.output_scanline < stream->info.output_height) {
        JSAMPROW row = rows + stride * done;
        JDIMENSION read = jpeg_read_scanlines(&stream->info, &row, 1);
        if (read == 0) break;
        done += read;
    }
    tessera_jpeg_stream_leave(stream);
    return (long)done;
}

/// Ends the output pass (the rows not read are dropped). 1 when ended, 0 when libjpeg waits for
/// bytes to find the next scan (the next `tessera_jpeg_stream_start_output` ends it), -1 on failure.
static inline int tessera_jpeg_stream_finish_output(TesseraJPEGStream *stream, const unsigned char *base,
                                                    size_t length, int complete) {
    tessera_jpeg_stream_enter(stream, base, length, complete);
    if (setjmp(stream->error.jump)) { tessera_jpeg_stream_leave(stream); return -1; }
    int finished = jpeg_finish_output(&stream->info) ? 1 : 0;
    if (finished) stream->output_open = 0;
    tessera_jpeg_stream_leave(stream);
    return finished;
}

/// Frees everything libjpeg holds; safe after any failure.
static inline void tessera_jpeg_stream_close(TesseraJPEGStream *stream) {
    if (!stream->created) return;
    if (setjmp(stream->error.jump)) return;
    jpeg_destroy_decompress(&stream->info);
    stream->created = 0;
}

// MARK: - Encoding

/// Encodes `width` × `height` RGB pixels (3 bytes each, rows packed) as a JPEG of `quality` (1–100),
/// progressive (libjpeg's standard scan script, `jpeg_simple_progression`) when `progressive`. On
/// success returns 0 with the bytes at `*out` (`*size` of them; free them with
/// `tessera_jpeg_free`); on failure -1 with the reason in `message`.
static inline int tessera_jpeg_encode(const unsigned char *rgb, unsigned int width, unsigned int height,
                                      int quality, int progressive, unsigned char **out, unsigned long *size,
                                      char message[JMSG_LENGTH_MAX]) {
    // On the heap, so nothing libjpeg changes after `setjmp` lives in a register the jump restores.
    struct TesseraJPEGEncoder {
        struct jpeg_compress_struct info;
        TesseraJPEGError error;
    } *encoder = (struct TesseraJPEGEncoder *)calloc(1, sizeof(struct TesseraJPEGEncoder));
    *out = NULL;
    *size = 0;
    if (!encoder) { snprintf(message, JMSG_LENGTH_MAX, "out of memory"); return -1; }
    encoder->info.err = jpeg_std_error(&encoder->error.manager);
    encoder->error.manager.error_exit = tessera_jpeg_error_exit;
    encoder->error.manager.emit_message = tessera_jpeg_emit_message;
    if (setjmp(encoder->error.jump)) {
        snprintf(message, JMSG_LENGTH_MAX, "%s", encoder->error.message);
        jpeg_destroy_compress(&encoder->info);
        free(encoder);
        if (*out) { free(*out); *out = NULL; }
        *size = 0;
        return -1;
    }
    jpeg_create_compress(&encoder->info);
    jpeg_mem_dest(&encoder->info, out, size);
    encoder->info.image_width = width;
    encoder->info.image_height = height;
    encoder->info.input_components = 3;
    encoder->info.in_color_space = JCS_RGB;
    jpeg_set_defaults(&encoder->info);
    jpeg_set_quality(&encoder->info, quality, TRUE);
    if (progressive) jpeg_simple_progression(&encoder->info);
    jpeg_start_compress(&encoder->info, TRUE);
    size_t stride = (size_t)width * 3;
    while (encoder->info.next_scanline < encoder->info.image_height) {
        JSAMPROW row = (JSAMPROW)(rgb + stride * encoder->info.next_scanline);
        jpeg_write_scanlines(&encoder->info, &row, 1);
    }
    jpeg_finish_compress(&encoder->info);
    jpeg_destroy_compress(&encoder->info);
    free(encoder);
    return 0;
}

/// Frees the bytes `tessera_jpeg_encode` made.
static inline void tessera_jpeg_free(unsigned char *bytes) { free(bytes); }

#endif
