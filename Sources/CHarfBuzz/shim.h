#ifndef TESSERA_CHARFBUZZ_SHIM_H
#define TESSERA_CHARFBUZZ_SHIM_H

// HarfBuzz for the places of a shaped line's clusters: SDL_ttf shapes with HarfBuzz too but gives only
// widths, so the layout shapes each piece of a line once more to keep where each cluster starts (the
// caret positions of an editable text). Faces are made over font bytes already in memory; HarfBuzz's
// own OpenType functions read them, and a face or font made immutable may be used from any thread.
// The header is included as <harfbuzz/hb.h> from the default include path (its own headers include one
// another with quotes), so no pkg-config flags are needed, by SwiftPM or by a client's compiler.
#include <stddef.h>
#include <stdint.h>
#include <harfbuzz/hb.h>

/// A face over `length` bytes at `bytes` (the caller keeps them alive longer than the face), the
/// collection's face `index`. Never NULL (HarfBuzz answers an empty face for bytes it cannot read).
static inline hb_face_t *tessera_hb_face_create(const void *bytes, unsigned int length, unsigned int index) {
    hb_blob_t *blob = hb_blob_create((const char *)bytes, length, HB_MEMORY_MODE_READONLY, NULL, NULL);
    hb_face_t *face = hb_face_create(blob, index);
    hb_blob_destroy(blob);
    hb_face_make_immutable(face);
    return face;
}

/// A font of `face` at `pixelSize` pixels per em: positions come back in 26.6 fixed-point pixels.
static inline hb_font_t *tessera_hb_font_create(hb_face_t *face, int pixelSize) {
    hb_font_t *font = hb_font_create(face);
    hb_font_set_scale(font, pixelSize * 64, pixelSize * 64);
    hb_font_make_immutable(font);
    return font;
}

/// Shapes `length` UTF-16 units of `text` in `font` in the given direction and script (an ISO 15924
/// tag such as "Latn"), reusing `buffer`, and writes each glyph's cluster (the UTF-16 offset of the
/// first unit it comes from) and advance (26.6 pixels), in visual order, to the arrays, which hold
/// `capacity` entries. Returns the number of glyphs (more than `capacity`: call again with room).
static inline int tessera_hb_shape_clusters(hb_font_t *font, hb_buffer_t *buffer, const uint16_t *text, int length,
                                            int rightToLeft, const char *scriptTag,
                                            int32_t *clusters, int32_t *advances, int capacity) {
    hb_buffer_clear_contents(buffer);
    hb_buffer_add_utf16(buffer, text, length, 0, length);
    hb_buffer_set_direction(buffer, rightToLeft ? HB_DIRECTION_RTL : HB_DIRECTION_LTR);
    hb_buffer_set_script(buffer, hb_script_from_string(scriptTag, -1));
    hb_buffer_set_cluster_level(buffer, HB_BUFFER_CLUSTER_LEVEL_MONOTONE_GRAPHEMES);
    hb_buffer_guess_segment_properties(buffer);
    hb_shape(font, buffer, NULL, 0);
    unsigned int count = 0;
    hb_glyph_info_t *infos = hb_buffer_get_glyph_infos(buffer, &count);
    hb_glyph_position_t *positions = hb_buffer_get_glyph_positions(buffer, &count);
    for (unsigned int i = 0; i < count && (int)i < capacity; i++) {
        clusters[i] = (int32_t)infos[i].cluster;
        advances[i] = (int32_t)positions[i].x_advance;
    }
    return (int)count;
}

#endif
