#include "TesseraICU.h"
#include <stdlib.h>
#include <pthread.h>
#include <string.h>
#include <unicode/utypes.h>
#include <unicode/ubrk.h>
#include <unicode/ubidi.h>
#include <unicode/uchar.h>
#include <unicode/uversion.h>
#include <unicode/utf16.h>

// Opening a break iterator loads and compiles its rules (tens of microseconds), so each thread keeps
// one of each kind and only hands it new text; the thread's exit closes them.
static pthread_key_t iterator_key;
static pthread_once_t iterator_once = PTHREAD_ONCE_INIT;

typedef struct ThreadIterators { UBreakIterator *kinds[3]; } ThreadIterators;

static void close_iterators(void *value) {
    ThreadIterators *iterators = (ThreadIterators *)value;
    for (int i = 0; i < 3; i++) if (iterators->kinds[i] != NULL) ubrk_close(iterators->kinds[i]);
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
        UBreakIterator *iterator = ubrk_open(kind == 2 ? UBRK_WORD : kind == 1 ? UBRK_LINE : UBRK_CHARACTER, "", NULL, 0, &status);
        if (U_FAILURE(status)) return NULL;
        iterators->kinds[kind] = iterator;
    }
    return iterators->kinds[kind];
}

static int32_t apply_default_number_and_hyphen_rules(const uint16_t *text, int32_t length, int32_t *out, int32_t count);

// Walks `kind`'s boundaries after 0 in `text`, writing each to `out` and, when `isWord` is given,
// whether the text before it was a word (the rule status is "none" after spaces and punctuation).
// Returns how many, or -1. The iterator lets go of the caller's text before returning.
static int32_t collect_boundaries(int kind, const uint16_t *text, int32_t length, int32_t *out, uint8_t *isWord) {
    UBreakIterator *iterator = thread_iterator(kind);
    if (iterator == NULL) return -1;
    UErrorCode status = U_ZERO_ERROR;
    ubrk_setText(iterator, (const UChar *)text, length, &status);
    if (U_FAILURE(status)) return -1;
    int32_t count = 0;
    for (int32_t p = ubrk_first(iterator); p != UBRK_DONE; p = ubrk_next(iterator)) {
        if (p == 0) continue;
        if (isWord != NULL) isWord[count] = ubrk_getRuleStatus(iterator) != UBRK_WORD_NONE;
        out[count++] = p;
    }
    ubrk_setText(iterator, NULL, 0, &status);
    return count;
}

int32_t tessera_icu_word_boundaries(const uint16_t *text, int32_t length, int32_t *out, uint8_t *isWord) {
    return collect_boundaries(2, text, length, out, isWord);
}

int32_t tessera_icu_breaks(int kind, const uint16_t *text, int32_t length, int32_t *out) {
    int32_t count = collect_boundaries(kind == 1 ? 1 : 0, text, length, out, NULL);
    if (count < 0) return -1;
    if (kind == 1) count = apply_default_number_and_hyphen_rules(text, length, out, count);
    return count;
}

// The line-break class of a code point after UAX #14's rule LB1 (AI, SG and XX as AL; SA as CM when a
// mark, else AL; CJ as NS).
static int32_t line_class(UChar32 c) {
    int32_t value = u_getIntPropertyValue(c, UCHAR_LINE_BREAK);
    switch (value) {
    case U_LB_AMBIGUOUS: case U_LB_SURROGATE: case U_LB_UNKNOWN: return U_LB_ALPHABETIC;
    case U_LB_COMPLEX_CONTEXT: {
        int8_t type = u_charType(c);
        return (type == U_NON_SPACING_MARK || type == U_COMBINING_SPACING_MARK) ? U_LB_COMBINING_MARK : U_LB_ALPHABETIC;
    }
    case U_LB_CONDITIONAL_JAPANESE_STARTER: return U_LB_NONSTARTER;
    default: return value;
    }
}

static int is_attached(int32_t cls) { return cls == U_LB_COMBINING_MARK || cls == U_LB_ZWJ; }

// ICU's line rules anticipate three changes UAX #14 made after the Unicode version its data carries:
// no break after a word-initial hyphen before letters ("-word", LB20a), a break between a space and a
// full stop or comma that starts a number (" .5", LB15c), and no break inside ".5" where no number
// precedes the stop (LB25's pair form). Tessera follows the rules of the version ICU's data carries, as
// that version's LineBreakTest.txt states them, so these are put back: a break after such a hyphen,
// none before such a stop, and one between the stop and the digit. Only hyphens and infix separators
// are looked at, so text costs one comparison a UTF-16 unit.

static int is_hyphen_or_infix_candidate(uint16_t u) {
    switch (u) {
    case 0x2D: case 0x2010: case 0x2C: case 0x2E: case 0x3A: case 0x3B: case 0x37E: case 0x589: case 0x60C:
    case 0x60D: case 0x7F8: case 0x2044: case 0xFE10: case 0xFE13: case 0xFE14:
        return 1;
    default:
        return 0;
    }
}

// Index of `offset` in the sorted `out`, or where it would go.
static int32_t break_slot(const int32_t *out, int32_t count, int32_t offset) {
    int32_t low = 0, high = count;
    while (low < high) {
        int32_t mid = (low + high) / 2;
        if (out[mid] < offset) low = mid + 1; else high = mid;
    }
    return low;
}

static void set_break(int32_t *out, int32_t *count, int32_t offset, int present) {
    int32_t slot = break_slot(out, *count, offset);
    int found = slot < *count && out[slot] == offset;
    if (present && !found) {
        memmove(out + slot + 1, out + slot, sizeof(int32_t) * (size_t)(*count - slot));
        out[slot] = offset;
        (*count)++;
    } else if (!present && found) {
        memmove(out + slot, out + slot + 1, sizeof(int32_t) * (size_t)(*count - slot - 1));
        (*count)--;
    }
}

static int has_break(const int32_t *out, int32_t count, int32_t offset) {
    int32_t slot = break_slot(out, count, offset);
    return slot < count && out[slot] == offset;
}

// The class of the code point that ends before `end`, and its start in `*start`; -1 at the text's start.
static int32_t class_before(const uint16_t *text, int32_t end, int32_t *start) {
    if (end <= 0) { *start = 0; return -1; }
    int32_t i = end;
    UChar32 c;
    U16_PREV(text, 0, i, c);
    *start = i;
    return line_class(c);
}

static int32_t apply_default_number_and_hyphen_rules(const uint16_t *text, int32_t length, int32_t *out, int32_t count) {
    for (int32_t i = 0; i < length; i++) {
        if (!is_hyphen_or_infix_candidate(text[i])) continue;
        int32_t cls = line_class(text[i]);
        int isHyphen = cls == U_LB_HYPHEN || text[i] == 0x2010;
        if (!isHyphen && cls != U_LB_INFIX_NUMERIC) continue;
        // The next character that is not a mark attached to this one: where it starts, its class.
        int32_t next = i + 1, nextClass = -1;
        while (next < length) {
            int32_t after = next;
            UChar32 c;
            U16_NEXT(text, after, length, c);
            nextClass = line_class(c);
            if (!is_attached(nextClass)) break;
            next = after;
            nextClass = -1;
        }
        int32_t previousStart;
        int32_t previous = class_before(text, i, &previousStart);
        if (isHyphen) {
            int wordInitial = previous == -1 || previous == U_LB_SPACE || previous == U_LB_MANDATORY_BREAK ||
                previous == U_LB_CARRIAGE_RETURN || previous == U_LB_LINE_FEED || previous == U_LB_NEXT_LINE ||
                previous == U_LB_ZWSPACE || previous == U_LB_GLUE;
            if (wordInitial && nextClass == U_LB_ALPHABETIC) set_break(out, &count, next, 1);
            continue;
        }
        // LB13 (× IS) holds after spaces too, unless a zero-width space precedes them (LB8).
        if (previous == U_LB_SPACE) {
            int32_t start = previousStart, before;
            do { before = class_before(text, start, &start); } while (before == U_LB_SPACE);
            if (before != U_LB_ZWSPACE) set_break(out, &count, i, 0);
        }
        // LB25: IS × NU only inside a number, NU (NU | SY | IS)* IS; else LB31 allows the break.
        if (nextClass == U_LB_NUMERIC && !has_break(out, count, next)) {
            int32_t start = i, before;
            do {
                before = class_before(text, start, &start);
            } while (before != -1 && (is_attached(before) || before == U_LB_BREAK_SYMBOLS || before == U_LB_INFIX_NUMERIC));
            if (before != U_LB_NUMERIC) set_break(out, &count, next, 1);
        }
    }
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
                if (visual != NULL) ubidi_getVisualMap(bidi, allVisual, &status);
                if (U_SUCCESS(status) && visual != NULL) {
                    int32_t n = 0;
                    for (int32_t i = 0; i < total && n < length; i++) {
                        if (allVisual[i] < length) visual[n++] = allVisual[i];
                    }
                }
                if (U_SUCCESS(status)) result = ubidi_getParaLevel(bidi);
            }
        }
    }
    if (bidi != NULL) ubidi_close(bidi);
    free(padded); free(allLevels); free(allVisual);
    return result;
}

int tessera_icu_needs_bidi(const uint16_t *text, int32_t length) {
    for (int32_t i = 0; i < length;) {
        if (text[i] < 0x0590) { i++; continue; }  // nothing below Hebrew is R, AL, AN or a control
        UChar32 c;
        U16_NEXT(text, i, length, c);
        switch (u_charDirection(c)) {
        case U_RIGHT_TO_LEFT: case U_RIGHT_TO_LEFT_ARABIC: case U_ARABIC_NUMBER:
        case U_LEFT_TO_RIGHT_EMBEDDING: case U_LEFT_TO_RIGHT_OVERRIDE: case U_RIGHT_TO_LEFT_EMBEDDING:
        case U_RIGHT_TO_LEFT_OVERRIDE: case U_POP_DIRECTIONAL_FORMAT: case U_LEFT_TO_RIGHT_ISOLATE:
        case U_RIGHT_TO_LEFT_ISOLATE: case U_FIRST_STRONG_ISOLATE: case U_POP_DIRECTIONAL_ISOLATE:
            return 1;
        default: break;
        }
    }
    return 0;
}

int tessera_icu_is_mark(int32_t codePoint) {
    int8_t type = u_charType(codePoint);
    return type == U_NON_SPACING_MARK || type == U_ENCLOSING_MARK || type == U_COMBINING_SPACING_MARK;
}

int32_t tessera_icu_bidi_class(int32_t codePoint) { return (int32_t)u_charDirection(codePoint); }

void tessera_icu_unicode_version(char *out) {
    UVersionInfo version;
    u_getUnicodeVersion(version);
    u_versionToString(version, out);
}
