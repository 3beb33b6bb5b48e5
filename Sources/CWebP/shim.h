#ifndef TESSERA_CWEBP_SHIM_H
#define TESSERA_CWEBP_SHIM_H

// libwebp for Tessera's image decoder: still images decoded with libwebp's own cropping and
// scaling, the first frame of an animated one through the demuxer, and its frames through the
// demuxer's animation decoder (WebPAnimDecoder). libwebp returns status codes; nothing here jumps.
#include <stddef.h>
#include <string.h>
#include <webp/decode.h>
#include <webp/demux.h>
#include <webp/encode.h>  // for tests that make WebP files
#include <webp/mux.h>     // for tests that make animated WebP files (WebPAnimEncoder, libwebpmux)

/// The first frame's bitstream of an animated file, or the file itself. Returns 0, or -1 when the
/// container is malformed.
static inline int tessera_webp_first_frame(const uint8_t *data, size_t size,
                                           const uint8_t **frame, size_t *frameSize) {
    WebPData whole = { data, size };
    WebPDemuxer *demux = WebPDemux(&whole);
    if (demux == NULL) return -1;
    WebPIterator iterator;
    int found = WebPDemuxGetFrame(demux, 1, &iterator);
    if (found) {
        *frame = iterator.fragment.bytes;
        *frameSize = iterator.fragment.size;
        WebPDemuxReleaseIterator(&iterator);
    }
    WebPDemuxDelete(demux);
    return found ? 0 : -1;
}

/// Decodes the bitstream at `data` cropped to the given rectangle of the full image and scaled to
/// `width` × `height`, into 4-byte pixels of `mode` at `out`: `MODE_bgrA` (premultiplied BGRA,
/// ARGB8888 words on little-endian machines), `MODE_BGRA` or `MODE_RGBA` (straight alpha).
/// Returns libwebp's status (0 for success).
static inline int tessera_webp_decode(const uint8_t *data, size_t size,
                                      int cropLeft, int cropTop, int cropWidth, int cropHeight,
                                      int width, int height, WEBP_CSP_MODE mode, uint8_t *out, size_t outSize) {
    if (mode != MODE_bgrA && mode != MODE_BGRA && mode != MODE_RGBA) return VP8_STATUS_INVALID_PARAM;
    WebPDecoderConfig config;
    if (!WebPInitDecoderConfig(&config)) return VP8_STATUS_INVALID_PARAM;
    config.options.use_cropping = 1;
    config.options.crop_left = cropLeft;
    config.options.crop_top = cropTop;
    config.options.crop_width = cropWidth;
    config.options.crop_height = cropHeight;
    if (width != cropWidth || height != cropHeight) {
        config.options.use_scaling = 1;
        config.options.scaled_width = width;
        config.options.scaled_height = height;
    }
    config.output.colorspace = mode;
    config.output.is_external_memory = 1;
    config.output.u.RGBA.rgba = out;
    config.output.u.RGBA.stride = width * 4;
    config.output.u.RGBA.size = outSize;
    VP8StatusCode status = WebPDecode(data, size, &config);
    WebPFreeDecBuffer(&config.output);
    return (int)status;
}

#endif
