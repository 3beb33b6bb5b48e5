#ifndef TESSERA_CFONTCONFIG_SHIM_H
#define TESSERA_CFONTCONFIG_SHIM_H

// fontconfig for Tessera's font fallback: which installed font has a glyph for a character, in the
// order fontconfig prefers after a given family.
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

#endif
