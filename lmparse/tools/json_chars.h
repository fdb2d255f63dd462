/* Finding the characters JSON strings must escape (controls, '"', '\\'), 16 bytes at a
   time with SSE2 (a plain loop elsewhere). A header so that json_escape and xml_parser
   both inline it into their loops (a cimported function would be an indirect call). */
#ifndef LMPARSE_JSON_CHARS_H
#define LMPARSE_JSON_CHARS_H

#include <Python.h>
#if defined(__SSE2__) || defined(_M_X64) || (defined(_M_IX86_FP) && _M_IX86_FP >= 2)
#include <emmintrin.h>
#define LMP_SSE2 1
#endif
#if defined(__GNUC__) || defined(__clang__)
#define lmp_ctz(x) __builtin_ctz(x)
#else
static int lmp_ctz(unsigned int x) { int k = 0; while (!(x & 1u)) { x >>= 1; k++; } return k; }
#endif

#ifdef LMP_SSE2
/* Bit mask (one bit per byte, as _mm_movemask_epi8) of the 16 bytes of v that hold
   characters needing an escape, for characters of 1, 2 and 4 bytes. */
static inline unsigned int lmp_special_mask1(__m128i v) {
    return (unsigned int)_mm_movemask_epi8(_mm_or_si128(
        _mm_cmpeq_epi8(_mm_subs_epu8(v, _mm_set1_epi8(0x1f)), _mm_setzero_si128()),
        _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8(0x22)), _mm_cmpeq_epi8(v, _mm_set1_epi8(0x5c)))));
}
static inline unsigned int lmp_special_mask2(__m128i v) {
    return (unsigned int)_mm_movemask_epi8(_mm_or_si128(
        _mm_cmpeq_epi16(_mm_subs_epu16(v, _mm_set1_epi16(0x1f)), _mm_setzero_si128()),
        _mm_or_si128(_mm_cmpeq_epi16(v, _mm_set1_epi16(0x22)), _mm_cmpeq_epi16(v, _mm_set1_epi16(0x5c)))));
}
/* Code points are below 0x110000, so the signed comparison is exact. */
static inline unsigned int lmp_special_mask4(__m128i v) {
    return (unsigned int)_mm_movemask_epi8(_mm_or_si128(
        _mm_cmplt_epi32(v, _mm_set1_epi32(0x20)),
        _mm_or_si128(_mm_cmpeq_epi32(v, _mm_set1_epi32(0x22)), _mm_cmpeq_epi32(v, _mm_set1_epi32(0x5c)))));
}
#define LMP_NEXT_SPECIAL_BLOCKS(W, T, SHIFT) \
    for (; i + (Py_ssize_t)(16 / sizeof(T)) <= n; i += 16 / sizeof(T)) { \
        unsigned int bits = lmp_special_mask##W(_mm_loadu_si128((const __m128i *)(s + i))); \
        if (bits) return i + (Py_ssize_t)(lmp_ctz(bits) >> SHIFT); \
    }
#else
#define LMP_NEXT_SPECIAL_BLOCKS(W, T, SHIFT)
#endif

/* lmp_next_special{1,2,4}: first index >= i of a character needing an escape (n when none). */
#define LMP_DEFINE_NEXT_SPECIAL(W, T, SHIFT) \
static inline Py_ssize_t lmp_next_special##W(const T *s, Py_ssize_t i, Py_ssize_t n) { \
    LMP_NEXT_SPECIAL_BLOCKS(W, T, SHIFT) \
    for (; i < n; i++) { T c = s[i]; if (c < 0x20 || c == 0x22 || c == 0x5c) return i; } \
    return n; \
}
LMP_DEFINE_NEXT_SPECIAL(1, Py_UCS1, 0)
LMP_DEFINE_NEXT_SPECIAL(2, Py_UCS2, 1)
LMP_DEFINE_NEXT_SPECIAL(4, Py_UCS4, 2)

#endif
