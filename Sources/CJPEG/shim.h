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

/// The most scans a progressive file may have; each scan is a pass over the whole image, so a file
/// of thousands of tiny scans would take minutes to decode.
#define TESSERA_JPEG_MAX_SCANS 400

typedef struct TesseraJPEGError {
    struct jpeg_error_mgr manager;
    jmp_buf jump;
    char message[JMSG_LENGTH_MAX];
    int warnings;
} TesseraJPEGError;

typedef struct TesseraJPEG {
    struct jpeg_decompress_struct info;
    TesseraJPEGError error;
    struct jpeg_progress_mgr progress;
    int created;
} TesseraJPEG;

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

/// Reads the header of `size` bytes at `data` (which must outlive `jpeg`), keeping APP1 markers for
/// the EXIF orientation. `memoryLimit` bounds libjpeg's own allocations. Returns 0, or -1 with
/// `jpeg->error.message` set.
/// With `file` not NULL the bytes are read from it as libjpeg asks (a cut file ends in grey rows).
static inline int tessera_jpeg_open(TesseraJPEG *jpeg, const unsigned char *data, unsigned long size,
                                    FILE *file, long memoryLimit) {
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
    if (file != NULL) jpeg_stdio_src(&jpeg->info, file); else jpeg_mem_src(&jpeg->info, data, size);
    jpeg_save_markers(&jpeg->info, JPEG_APP0 + 1, 0xFFFF);
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

/// The saved APP1 marker that holds EXIF data, or NULL.
static inline const unsigned char *tessera_jpeg_exif(const TesseraJPEG *jpeg, unsigned int *length) {
    for (jpeg_saved_marker_ptr m = jpeg->info.marker_list; m != NULL; m = m->next) {
        if (m->marker == JPEG_APP0 + 1 && m->data_length >= 14 && memcmp(m->data, "Exif\0\0", 6) == 0) {
            *length = m->data_length;
            return m->data;
        }
    }
    *length = 0;
    return NULL;
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
