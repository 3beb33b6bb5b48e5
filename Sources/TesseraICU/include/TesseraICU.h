#ifndef TESSERA_ICU_H
#define TESSERA_ICU_H

// ICU's line, grapheme and bidi algorithms behind plain C types. ICU renames every function with its
// major version (ubrk_open becomes ubrk_open_72); calling them from this file keeps Tessera free of
// any one version's names.
#include <stdint.h>

/// Break positions (UTF-16 offsets after 0, up to and including `length`) of `kind` (0: grapheme
/// clusters, 1: line-break opportunities) written to `out` (room for `length` + 1). Returns how many,
/// or -1 when ICU fails.
int32_t tessera_icu_breaks(int kind, const uint16_t *text, int32_t length, int32_t *out);

/// Word boundaries (UAX #29): the UTF-16 offsets after 0, up to and including `length`, written to
/// `out`, and for each whether the text since the previous boundary is a word (letters, numbers,
/// kana, ideographs) rather than spaces or punctuation, to `isWord` (both with room for `length`).
/// Returns how many, or -1.
int32_t tessera_icu_word_boundaries(const uint16_t *text, int32_t length, int32_t *out, uint8_t *isWord);

/// Runs the bidi algorithm over a paragraph: `paragraphLevel` 0 or 1, or -1 for the first strong
/// character's direction. Writes a level per UTF-16 unit to `levels` and the logical index shown at
/// each visual position to `visual` (both `length` long; `visual` may be NULL). Returns the
/// paragraph's level, or -1.
int32_t tessera_icu_bidi(const uint16_t *text, int32_t length, int32_t paragraphLevel,
                         uint8_t *levels, int32_t *visual);

/// 1 when the text holds a character that can give some character an odd or raised level in a
/// left-to-right paragraph (R, AL, AN, or an embedding, override or isolate control), else 0: without
/// one, every level is 0.
int tessera_icu_needs_bidi(const uint16_t *text, int32_t length);

/// 1 when the code point is a mark (general category Mn, Mc or Me), else 0: a trie lookup.
int tessera_icu_is_mark(int32_t codePoint);

/// The bidi class of a code point (ICU's UCharDirection numbering).
int32_t tessera_icu_bidi_class(int32_t codePoint);

/// The Unicode version of ICU's data, as "15.0.0.0", into `out` (at least 20 bytes).
void tessera_icu_unicode_version(char *out);

#endif
