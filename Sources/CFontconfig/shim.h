#ifndef TESSERA_CFONTCONFIG_SHIM_H
#define TESSERA_CFONTCONFIG_SHIM_H

// fontconfig for Tessera's fonts: which installed font has a glyph for a character, in the order
// fontconfig prefers after a given family (fallback), and which installed font stands in for a bundled
// face that cannot be found (the system's match for a family or a generic name).
#include <stdint.h>
#include <string.h>
#include <fontconfig/fontconfig.h>

/// Writes to `path` (NUL-terminated, at most `pathSize` bytes) the file of the first font, in
/// fontconfig's order of preference for `family` (NULL: the default), whose character set holds
/// `codepoint`, and its face index to `index`. Returns 1, or 0 when no installed font has it.
static inline int tessera_fc_font_for(uint32_t codepoint, const char *family, int preferColor,
                                      char *path, int pathSize, int *index) {
    FcConfig *config = FcConfigGetCurrent();
    if (config == NULL) return 0;
    FcPattern *pattern = FcPatternCreate();
    FcCharSet *wanted = FcCharSetCreate();
    if (pattern == NULL || wanted == NULL) {
        if (pattern) FcPatternDestroy(pattern);
        if (wanted) FcCharSetDestroy(wanted);
        return 0;
    }
    if (family != NULL && family[0] != 0) FcPatternAddString(pattern, FC_FAMILY, (const FcChar8 *)family);
    FcCharSetAddChar(wanted, codepoint);
    FcPatternAddCharSet(pattern, FC_CHARSET, wanted);
    if (preferColor) FcPatternAddBool(pattern, FC_COLOR, FcTrue);
    FcConfigSubstitute(config, pattern, FcMatchPattern);
    FcDefaultSubstitute(pattern);
    FcResult result;
    FcFontSet *fonts = FcFontSort(config, pattern, FcFalse, NULL, &result);
    int found = 0;
    for (int pass = 0; fonts != NULL && pass < 2 && !found; pass++) {
        for (int i = 0; i < fonts->nfont && !found; i++) {
            FcPattern *font = fonts->fonts[i];
            FcBool color = FcFalse;
            FcPatternGetBool(font, FC_COLOR, 0, &color);
            // First pass: a colour font when one is wanted (emoji); second: any font.
            if (pass == 0 && preferColor && !color) continue;
            FcCharSet *set = NULL;
            FcChar8 *file = NULL;
            if (FcPatternGetCharSet(font, FC_CHARSET, 0, &set) != FcResultMatch || !FcCharSetHasChar(set, codepoint)) continue;
            if (FcPatternGetString(font, FC_FILE, 0, &file) != FcResultMatch || file == NULL) continue;
            strncpy(path, (const char *)file, (size_t)pathSize - 1);
            path[pathSize - 1] = 0;
            int faceIndex = 0;
            FcPatternGetInteger(font, FC_INDEX, 0, &faceIndex);
            *index = faceIndex;
            found = 1;
        }
        if (!preferColor) break;
    }
    if (fonts != NULL) FcFontSetDestroy(fonts);
    FcCharSetDestroy(wanted);
    FcPatternDestroy(pattern);
    return found;
}

/// Writes to `path` the file fontconfig matches best for `family` ("DejaVu Sans", or a generic name
/// such as "sans-serif" or "monospace"), upright, in the bold or regular weight, among scalable fonts;
/// and its face index to `index` and its weight (FC_WEIGHT_*) to `weight`. `familyMatched` is 1 when
/// one of the chosen face's family names is `family` (ignoring case), 0 when fontconfig substituted
/// another family (for a generic name it always does). Returns 1, or 0 when fontconfig has no font.
static inline int tessera_fc_match(const char *family, int bold, char *path, int pathSize, int *index,
                                   int *weight, int *familyMatched) {
    FcConfig *config = FcConfigGetCurrent();
    if (config == NULL || family == NULL) return 0;
    FcPattern *pattern = FcPatternCreate();
    if (pattern == NULL) return 0;
    FcPatternAddString(pattern, FC_FAMILY, (const FcChar8 *)family);
    FcPatternAddInteger(pattern, FC_WEIGHT, bold ? FC_WEIGHT_BOLD : FC_WEIGHT_REGULAR);
    FcPatternAddInteger(pattern, FC_SLANT, FC_SLANT_ROMAN);
    FcPatternAddBool(pattern, FC_SCALABLE, FcTrue);
    FcConfigSubstitute(config, pattern, FcMatchPattern);
    FcDefaultSubstitute(pattern);
    FcResult result;
    FcPattern *font = FcFontMatch(config, pattern, &result);
    FcPatternDestroy(pattern);
    if (font == NULL) return 0;
    FcChar8 *file = NULL;
    int found = 0;
    if (FcPatternGetString(font, FC_FILE, 0, &file) == FcResultMatch && file != NULL && file[0] != 0) {
        strncpy(path, (const char *)file, (size_t)pathSize - 1);
        path[pathSize - 1] = 0;
        int faceIndex = 0, faceWeight = FC_WEIGHT_REGULAR;
        FcPatternGetInteger(font, FC_INDEX, 0, &faceIndex);
        FcPatternGetInteger(font, FC_WEIGHT, 0, &faceWeight);
        *index = faceIndex;
        *weight = faceWeight;
        *familyMatched = 0;
        FcChar8 *name = NULL;
        for (int i = 0; FcPatternGetString(font, FC_FAMILY, i, &name) == FcResultMatch; i++) {
            if (name != NULL && FcStrCmpIgnoreCase(name, (const FcChar8 *)family) == 0) { *familyMatched = 1; break; }
        }
        found = 1;
    }
    FcPatternDestroy(font);
    return found;
}

#endif
