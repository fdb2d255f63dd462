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

/* First index >= i of a character needing an escape (n when none). */
static inline Py_ssize_t lmp_next_special1(const Py_UCS1 *s, Py_ssize_t i, Py_ssize_t n) {
#ifdef LMP_SSE2
    const __m128i low = _mm_set1_epi8(0x1f), q = _mm_set1_epi8(0x22), b = _mm_set1_epi8(0x5c);
    const __m128i zero = _mm_setzero_si128();
    for (; i + 16 <= n; i += 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(s + i));
        __m128i m = _mm_or_si128(_mm_cmpeq_epi8(_mm_subs_epu8(v, low), zero),
                                 _mm_or_si128(_mm_cmpeq_epi8(v, q), _mm_cmpeq_epi8(v, b)));
        int bits = _mm_movemask_epi8(m);
        if (bits) return i + lmp_ctz((unsigned int)bits);
    }
#endif
    for (; i < n; i++) { Py_UCS1 c = s[i]; if (c < 0x20 || c == 0x22 || c == 0x5c) return i; }
    return n;
}

static inline Py_ssize_t lmp_next_special2(const Py_UCS2 *s, Py_ssize_t i, Py_ssize_t n) {
#ifdef LMP_SSE2
    const __m128i low = _mm_set1_epi16(0x1f), q = _mm_set1_epi16(0x22), b = _mm_set1_epi16(0x5c);
    const __m128i zero = _mm_setzero_si128();
    for (; i + 8 <= n; i += 8) {
        __m128i v = _mm_loadu_si128((const __m128i *)(s + i));
        __m128i m = _mm_or_si128(_mm_cmpeq_epi16(_mm_subs_epu16(v, low), zero),
                                 _mm_or_si128(_mm_cmpeq_epi16(v, q), _mm_cmpeq_epi16(v, b)));
        int bits = _mm_movemask_epi8(m);
        if (bits) return i + (lmp_ctz((unsigned int)bits) >> 1);
    }
#endif
    for (; i < n; i++) { Py_UCS2 c = s[i]; if (c < 0x20 || c == 0x22 || c == 0x5c) return i; }
    return n;
}

static inline Py_ssize_t lmp_next_special4(const Py_UCS4 *s, Py_ssize_t i, Py_ssize_t n) {
#ifdef LMP_SSE2
    /* Code points are below 0x110000, so the signed comparison is exact. */
    const __m128i limit = _mm_set1_epi32(0x20), q = _mm_set1_epi32(0x22), b = _mm_set1_epi32(0x5c);
    for (; i + 4 <= n; i += 4) {
        __m128i v = _mm_loadu_si128((const __m128i *)(s + i));
        __m128i m = _mm_or_si128(_mm_cmplt_epi32(v, limit),
                                 _mm_or_si128(_mm_cmpeq_epi32(v, q), _mm_cmpeq_epi32(v, b)));
        int bits = _mm_movemask_epi8(m);
        if (bits) return i + (lmp_ctz((unsigned int)bits) >> 2);
    }
#endif
    for (; i < n; i++) { Py_UCS4 c = s[i]; if (c < 0x20 || c == 0x22 || c == 0x5c) return i; }
    return n;
}

#endif
