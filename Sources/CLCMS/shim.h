#ifndef TESSERA_CLCMS_SHIM_H
#define TESSERA_CLCMS_SHIM_H

// LittleCMS for Tessera's image decoder: conversions from the colour space a file describes (an
// embedded ICC profile, or primaries and a transfer curve) to sRGB. LittleCMS returns NULL on
// failure and reports why through a context's error handler; nothing here jumps. Each conversion
// has its own context, whose handler writes into the conversion's message, so a failure is
// reported with LittleCMS's own words and no state is shared between threads.
//
// Each context also has an allocator of its own (a memory-handler plug-in): it counts the bytes
// LittleCMS holds for the conversion and refuses an allocation that would pass the conversion's
// limit, before anything is allocated or zeroed. LittleCMS allocates a lookup table's whole size, as
// its tag declares it, before it reads the table, so a profile of a few hundred bytes could otherwise
// make it allocate and zero half a gigabyte; refused, the read fails and the profile is not used.
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <lcms2.h>
#include <lcms2_plugin.h>

/// The pixels a conversion reads: 8-bit BGRA with straight alpha, copied through (a Tessera bitmap's
/// ARGB8888 words on a little-endian machine, once unpremultiplied: see
/// `tessera_colour_convert_premultiplied`), 8-bit CMYK (0 = no ink), 8-bit CMYK stored inverted as
/// Adobe writes it (255 = no ink), or 8-bit grey. BGRA is converted to BGRA, CMYK to RGBA (its
/// fourth byte left alone), grey to RGB.
enum {
    TESSERA_COLOUR_BGRA = 0,
    TESSERA_COLOUR_CMYK = 1,
    TESSERA_COLOUR_CMYK_INVERTED = 2,
    TESSERA_COLOUR_GREY = 3,
};

typedef struct TesseraColourConversion {
    cmsContext context;
    cmsHTRANSFORM transform;
    /// The first error LittleCMS reported (or the shim's own reason), empty when there was none.
    char message[256];
    /// What LittleCMS holds for this conversion, in bytes: now, the most at once, and the limit. An
    /// allocation that would pass the limit is refused (and `memoryRefused` set).
    size_t memoryInUse;
    size_t memoryPeak;
    size_t memoryLimit;
    int memoryRefused;
} TesseraColourConversion;

/// Before each block the allocator hands LittleCMS: its size and the conversion it is counted for
/// (none for the context's own record, which LittleCMS makes and frees before and after it knows the
/// conversion). 16 bytes, so the block keeps malloc's alignment.
typedef struct TesseraColourBlock {
    size_t size;
    TesseraColourConversion *owner;
} TesseraColourBlock;

static inline void *tessera_colour_malloc(cmsContext context, cmsUInt32Number size) {
    TesseraColourConversion *owner = (TesseraColourConversion *)cmsGetContextUserData(context);
    if (owner != NULL) {
        size_t inUse = __atomic_load_n(&owner->memoryInUse, __ATOMIC_RELAXED);
        if ((size_t)size > owner->memoryLimit || inUse > owner->memoryLimit - (size_t)size) {
            __atomic_store_n(&owner->memoryRefused, 1, __ATOMIC_RELAXED);
            return NULL;
        }
    }
    TesseraColourBlock *block = (TesseraColourBlock *)malloc(sizeof(TesseraColourBlock) + (size_t)size);
    if (block == NULL) return NULL;
    block->size = size;
    block->owner = owner;
    if (owner != NULL) {
        size_t now = __atomic_add_fetch(&owner->memoryInUse, (size_t)size, __ATOMIC_RELAXED);
        size_t peak = __atomic_load_n(&owner->memoryPeak, __ATOMIC_RELAXED);
        while (now > peak && !__atomic_compare_exchange_n(&owner->memoryPeak, &peak, now, 1, __ATOMIC_RELAXED,
                                                          __ATOMIC_RELAXED)) {}
    }
    return block + 1;
}

static inline void tessera_colour_free(cmsContext context, void *pointer) {
    (void)context;
    if (pointer == NULL) return;
    TesseraColourBlock *block = (TesseraColourBlock *)pointer - 1;
    if (block->owner != NULL) __atomic_sub_fetch(&block->owner->memoryInUse, block->size, __ATOMIC_RELAXED);
    free(block);
}

static inline void *tessera_colour_realloc(cmsContext context, void *pointer, cmsUInt32Number size) {
    if (pointer == NULL) return tessera_colour_malloc(context, size);
    TesseraColourBlock *old = (TesseraColourBlock *)pointer - 1;
    void *moved = tessera_colour_malloc(context, size);
    if (moved == NULL) return NULL;
    memcpy(moved, pointer, old->size < (size_t)size ? old->size : (size_t)size);
    tessera_colour_free(context, pointer);
    return moved;
}

/// The allocator plug-in every conversion's context is made with.
static inline cmsPluginMemHandler *tessera_colour_memory_plugin(void) {
    static cmsPluginMemHandler plugin = {
        { cmsPluginMagicNumber, 2060, cmsPluginMemHandlerSig, NULL },
        tessera_colour_malloc, tessera_colour_free, tessera_colour_realloc, NULL, NULL, NULL,
    };
    return &plugin;
}

static inline void tessera_colour_log(cmsContext context, cmsUInt32Number code, const char *text) {
    (void)code;
    TesseraColourConversion *conversion = (TesseraColourConversion *)cmsGetContextUserData(context);
    if (conversion == NULL || conversion->message[0] != 0) return;
    snprintf(conversion->message, sizeof conversion->message, "%s", text ? text : "LittleCMS failed");
}

static inline void tessera_colour_fail(TesseraColourConversion *conversion, const char *message) {
    if (conversion->message[0] == 0) snprintf(conversion->message, sizeof conversion->message, "%s", message);
}

/// An RGB profile from a white point and primaries (x, y pairs: white, red, green, blue) and one
/// transfer curve for the three channels: LittleCMS's parametric curve `curveType` (1: Y = X^g;
/// 4: Y = (aX + b)^g from X = d, Y = cX below) with its parameters (g, a, b, c, d). The samples are
/// the curve's input, so a file's decoding exponent or its inverse transfer function goes here.
/// NULL when LittleCMS refuses the values (a singular set of primaries, a white point of y = 0).
static inline cmsHPROFILE tessera_colour_rgb_profile(cmsContext context, const double xy[8], int curveType,
                                                     const double parameters[5]) {
    cmsCIExyY white = { xy[0], xy[1], 1.0 };
    cmsCIExyYTRIPLE primaries = { { xy[2], xy[3], 1.0 }, { xy[4], xy[5], 1.0 }, { xy[6], xy[7], 1.0 } };
    cmsToneCurve *curve = cmsBuildParametricToneCurve(context, curveType, parameters);
    if (curve == NULL) return NULL;
    cmsToneCurve *curves[3] = { curve, curve, curve };
    cmsHPROFILE profile = cmsCreateRGBProfileTHR(context, &white, &primaries, curves);
    cmsFreeToneCurve(curve);
    return profile;
}

/// Makes the conversion from `source` (which it closes) to sRGB for pixels laid out as `layout`.
static inline void tessera_colour_finish(TesseraColourConversion *conversion, cmsHPROFILE source, int layout,
                                         int intent) {
    if (source == NULL) { tessera_colour_fail(conversion, "LittleCMS could not read the profile"); return; }
    cmsProfileClassSignature kind = cmsGetDeviceClass(source);
    cmsColorSpaceSignature space = cmsGetColorSpace(source);
    cmsUInt32Number input = 0;
    cmsUInt32Number flags = cmsFLAGS_NOCACHE;
    const char *refusal = NULL;
    if (kind == cmsSigLinkClass || kind == cmsSigAbstractClass || kind == cmsSigNamedColorClass) {
        refusal = "a device-link, abstract or named-colour profile describes no image colours";
    } else if (layout == TESSERA_COLOUR_BGRA) {
        if (space != cmsSigRgbData) refusal = "the profile is not an RGB profile, and the pixels are RGB";
        input = TYPE_BGRA_8;
        flags |= cmsFLAGS_COPY_ALPHA;
    } else if (layout == TESSERA_COLOUR_CMYK || layout == TESSERA_COLOUR_CMYK_INVERTED) {
        if (space != cmsSigCmykData) refusal = "the profile is not a CMYK profile, and the pixels are CMYK";
        input = layout == TESSERA_COLOUR_CMYK ? TYPE_CMYK_8 : TYPE_CMYK_8_REV;
    } else if (layout == TESSERA_COLOUR_GREY) {
        if (space != cmsSigGrayData) refusal = "the profile is not a grey profile, and the pixels are grey";
        input = TYPE_GRAY_8;
        // Run only over the 256 grey levels to make a table: evaluated exactly, not resampled into
        // LittleCMS's 33-point grid, whose straight segments miss the steep start of sRGB's curve.
        flags |= cmsFLAGS_NOOPTIMIZE;
    } else {
        refusal = "unknown pixel layout";
    }
    if (refusal != NULL) {
        tessera_colour_fail(conversion, refusal);
        cmsCloseProfile(source);
        return;
    }
    cmsHPROFILE sRGB = cmsCreate_sRGBProfileTHR(conversion->context);
    if (sRGB == NULL) {
        tessera_colour_fail(conversion, "LittleCMS could not make the sRGB profile");
        cmsCloseProfile(source);
        return;
    }
    cmsUInt32Number output = layout == TESSERA_COLOUR_GREY ? TYPE_RGB_8
        : (layout == TESSERA_COLOUR_BGRA ? TYPE_BGRA_8 : TYPE_RGBA_8);
    conversion->transform = cmsCreateTransformTHR(conversion->context, source, input, sRGB, output,
                                                  (cmsUInt32Number)intent, flags);
    cmsCloseProfile(sRGB);
    cmsCloseProfile(source);
    if (conversion->transform == NULL) tessera_colour_fail(conversion, "LittleCMS could not make the conversion");
}

static inline TesseraColourConversion *tessera_colour_begin(size_t memoryLimit) {
    TesseraColourConversion *conversion = (TesseraColourConversion *)calloc(1, sizeof *conversion);
    if (conversion == NULL) return NULL;
    conversion->memoryLimit = memoryLimit;
    conversion->context = cmsCreateContext(tessera_colour_memory_plugin(), conversion);
    if (conversion->context == NULL) {
        tessera_colour_fail(conversion, "LittleCMS could not make a context");
        return conversion;
    }
    cmsSetLogErrorHandlerTHR(conversion->context, tessera_colour_log);
    return conversion;
}

/// The conversion from the ICC profile at `profile` (`size` bytes) to sRGB for pixels laid out as
/// `layout`, with rendering intent `intent`, LittleCMS holding at most `memoryLimit` bytes while it
/// reads the profile and makes the conversion. NULL only when out of memory; otherwise `transform` is
/// set, or NULL with `message` saying why (a profile LittleCMS cannot read, one of the wrong colour
/// space for the pixels, a device link) and `memoryRefused` set when the limit was reached. Free with
/// `tessera_colour_close`.
static inline TesseraColourConversion *tessera_colour_open_profile(const uint8_t *profile, size_t size, int layout,
                                                                   int intent, size_t memoryLimit) {
    TesseraColourConversion *conversion = tessera_colour_begin(memoryLimit);
    if (conversion == NULL || conversion->context == NULL) return conversion;
    if (size > 0xFFFFFFFFu) { tessera_colour_fail(conversion, "the profile is too large"); return conversion; }
    cmsHPROFILE source = cmsOpenProfileFromMemTHR(conversion->context, profile, (cmsUInt32Number)size);
    tessera_colour_finish(conversion, source, layout, intent);
    return conversion;
}

/// The conversion to sRGB from the RGB space of white point and primaries `xy` and transfer curve
/// `curveType` with `parameters` (see `tessera_colour_rgb_profile`), for BGRA pixels, within
/// `memoryLimit` bytes as `tessera_colour_open_profile`.
static inline TesseraColourConversion *tessera_colour_open_parametric(const double xy[8], int curveType,
                                                                      const double parameters[5], int intent,
                                                                      size_t memoryLimit) {
    TesseraColourConversion *conversion = tessera_colour_begin(memoryLimit);
    if (conversion == NULL || conversion->context == NULL) return conversion;
    cmsHPROFILE source = tessera_colour_rgb_profile(conversion->context, xy, curveType, parameters);
    tessera_colour_finish(conversion, source, TESSERA_COLOUR_BGRA, intent);
    return conversion;
}

/// Converts `count` pixels from `input` to `output` (which may be `input` itself when both are four
/// bytes a pixel; a grey conversion writes three bytes a pixel, RGB).
static inline void tessera_colour_convert(const TesseraColourConversion *conversion, const void *input,
                                          void *output, size_t count) {
    cmsDoTransform(conversion->transform, input, output, (cmsUInt32Number)count);
}

/// Converts `count` premultiplied BGRA pixels (a Tessera bitmap's ARGB8888 words on a little-endian
/// machine) in place through a BGRA conversion, in runs of 1,024: each translucent pixel is
/// unpremultiplied, converted and premultiplied again (no colour above its alpha); opaque pixels are
/// converted as they are and transparent ones stay transparent. (LittleCMS 2.14's own premultiplied
/// formats are not used: they return translucent colours unconverted.)
static inline void tessera_colour_convert_premultiplied(const TesseraColourConversion *conversion, uint8_t *pixels,
                                                        size_t count) {
    enum { RUN = 1024 };
    uint8_t run[RUN * 4];
    for (size_t start = 0; start < count; start += RUN) {
        size_t n = count - start < RUN ? count - start : RUN;
        uint8_t *p = pixels + start * 4;
        for (size_t i = 0; i < n; i++) {
            unsigned a = p[i * 4 + 3];
            for (int c = 0; c < 3; c++) {
                unsigned v = p[i * 4 + c];
                if (a != 255) v = a == 0 ? 0 : (v * 255u + a / 2) / a;
                run[i * 4 + c] = (uint8_t)(v > 255 ? 255 : v);
            }
            run[i * 4 + 3] = (uint8_t)a;
        }
        cmsDoTransform(conversion->transform, run, run, (cmsUInt32Number)n);
        for (size_t i = 0; i < n; i++) {
            unsigned a = p[i * 4 + 3];
            for (int c = 0; c < 3; c++) {
                unsigned v = run[i * 4 + c];
                if (a != 255) v = (v * a + 127) / 255;
                p[i * 4 + c] = (uint8_t)(v > a ? a : v);
            }
        }
    }
}

/// Frees the conversion, its transform and its context.
static inline void tessera_colour_close(TesseraColourConversion *conversion) {
    if (conversion == NULL) return;
    if (conversion->transform != NULL) cmsDeleteTransform(conversion->transform);
    if (conversion->context != NULL) cmsDeleteContext(conversion->context);
    free(conversion);
}

/// Serialises `profile` into `out` (at most `capacity` bytes); returns the bytes it needs, or 0 when
/// LittleCMS cannot write it. With `out` NULL, only the size is returned. For making test files.
static inline size_t tessera_colour_profile_bytes(cmsHPROFILE profile, uint8_t *out, size_t capacity) {
    cmsUInt32Number needed = 0;
    if (!cmsSaveProfileToMem(profile, NULL, &needed)) return 0;
    if (out == NULL) return needed;
    if (needed > capacity) return 0;
    return cmsSaveProfileToMem(profile, out, &needed) ? needed : 0;
}

#endif
