#include "TesseraICU.h"
#include <stdlib.h>
#include <pthread.h>
#include <string.h>
#include <unicode/utypes.h>
#include <unicode/ubrk.h>
#include <unicode/ubidi.h>
#include <unicode/uchar.h>
#include <unicode/uversion.h>

// Opening a break iterator loads and compiles its rules (tens of microseconds), so each thread keeps
// one of each kind and only hands it new text; the thread's exit closes them.
static pthread_key_t iterator_key;
static pthread_once_t iterator_once = PTHREAD_ONCE_INIT;

typedef struct ThreadIterators { UBreakIterator *kinds[2]; } ThreadIterators;

static void close_iterators(void *value) {
    ThreadIterators *iterators = (ThreadIterators *)value;
    for (int i = 0; i < 2; i++) if (iterators->kinds[i] != NULL) ubrk_close(iterators->kinds[i]);
    free(iterators);
}

static void make_iterator_key(void) { pthread_key_create(&iterator_key, close_iterators); }

static UBreakIterator *thread_iterator(int kind) {
    pthread_once(&iterator_once, make_iterator_key);
    ThreadIterators *iterators = (ThreadIterators *)pthread_getspecific(iterator_key);
    if (iterators == NULL) {
        iterators = (ThreadIterators *)calloc(1, sizeof(ThreadIterators));
        if (iterators == NULL) return NULL;
        pthread_setspecific(iterator_key, iterators);
    }
    if (iterators->kinds[kind] == NULL) {
        UErrorCode status = U_ZERO_ERROR;
        UBreakIterator *iterator = ubrk_open(kind == 1 ? UBRK_LINE : UBRK_CHARACTER, "", NULL, 0, &status);
        if (U_FAILURE(status)) return NULL;
        iterators->kinds[kind] = iterator;
    }
    return iterators->kinds[kind];
}

int32_t tessera_icu_breaks(int kind, const uint16_t *text, int32_t length, int32_t *out) {
    UBreakIterator *iterator = thread_iterator(kind == 1 ? 1 : 0);
    if (iterator == NULL) return -1;
    UErrorCode status = U_ZERO_ERROR;
    ubrk_setText(iterator, (const UChar *)text, length, &status);
    if (U_FAILURE(status)) return -1;
    int32_t count = 0;
    for (int32_t p = ubrk_first(iterator); p != UBRK_DONE; p = ubrk_next(iterator)) {
        if (p > 0) out[count++] = p;
    }
    // Let go of the caller's text.
    ubrk_setText(iterator, NULL, 0, &status);
    return count;
}

int32_t tessera_icu_bidi(const uint16_t *text, int32_t length, int32_t paragraphLevel,
                         uint8_t *levels, int32_t *visual) {
    // ICU skips resolving levels when a text is all of one direction (its order is the same either
    // way), which leaves, for example, an Arabic-Indic digit or an embedding at level 0 instead of the
    // algorithm's 2. A second paragraph holding a Latin and a Hebrew letter makes every text mixed;
    // paragraphs are resolved independently (rule P1), so the first one's levels and order are
    // exactly the algorithm's, and the extra paragraph is dropped from the results.
    int32_t total = length + 3;
    UChar *padded = (UChar *)malloc(sizeof(UChar) * (size_t)total);
    UBiDiLevel *allLevels = (UBiDiLevel *)malloc((size_t)total);
    int32_t *allVisual = (int32_t *)malloc(sizeof(int32_t) * (size_t)total);
    if (padded == NULL || allLevels == NULL || allVisual == NULL) {
        free(padded); free(allLevels); free(allVisual);
        return -1;
    }
    memcpy(padded, text, sizeof(UChar) * (size_t)length);
    padded[length] = 0x2029;
    padded[length + 1] = 0x0041;
    padded[length + 2] = 0x05D0;
    UErrorCode status = U_ZERO_ERROR;
    UBiDi *bidi = ubidi_openSized(total, 0, &status);
    int32_t result = -1;
    if (U_SUCCESS(status) && bidi != NULL) {
        UBiDiLevel level = paragraphLevel < 0 ? UBIDI_DEFAULT_LTR : (UBiDiLevel)paragraphLevel;
        ubidi_setPara(bidi, padded, total, level, NULL, &status);
        if (U_SUCCESS(status)) {
            const UBiDiLevel *computed = ubidi_getLevels(bidi, &status);
            if (U_SUCCESS(status)) {
                for (int32_t i = 0; i < length; i++) levels[i] = computed[i];
                ubidi_getVisualMap(bidi, allVisual, &status);
                if (U_SUCCESS(status)) {
                    int32_t n = 0;
                    for (int32_t i = 0; i < total && n < length; i++) {
                        if (allVisual[i] < length) visual[n++] = allVisual[i];
                    }
                    result = ubidi_getParaLevel(bidi);
                }
            }
        }
    }
    if (bidi != NULL) ubidi_close(bidi);
    free(padded); free(allLevels); free(allVisual);
    return result;
}

int32_t tessera_icu_bidi_class(int32_t codePoint) { return (int32_t)u_charDirection(codePoint); }

void tessera_icu_unicode_version(char *out) {
    UVersionInfo version;
    u_getUnicodeVersion(version);
    u_versionToString(version, out);
}
