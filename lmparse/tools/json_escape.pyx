"""JSON string escaping, exactly as ``json.dumps(s, ensure_ascii=False)`` does it.

Streamed string arguments (XML parameter values, DSML ``string="true"``
values) are escaped chunk by chunk, so this runs over most of their text. The
stdlib's C encoder reads and writes every character through generic
accessors (about 30 instructions a character). Here the characters that need
an escape (controls, '"', '\\') are found and counted 16 bytes at a time
(SSE2; a plain loop elsewhere), and the output is written a block at a time.
"""
from cpython.unicode cimport PyUnicode_Substring
from libc.string cimport memcpy

cdef extern from "Python.h":
    ctypedef unsigned char Py_UCS1
    ctypedef unsigned short Py_UCS2
    int PyUnicode_KIND(object u)
    void *PyUnicode_DATA(object u)
    Py_ssize_t PyUnicode_GET_LENGTH(object u)
    bint PyUnicode_IS_ASCII(object u)
    Py_UCS4 PyUnicode_MAX_CHAR_VALUE(object u)
    object PyUnicode_New(Py_ssize_t size, Py_UCS4 maxchar)
    void PyUnicode_WRITE(int kind, void *data, Py_ssize_t index, Py_UCS4 value) nogil

cdef extern from "json_chars.h":
    pass

cdef extern from *:
    """
    #include <string.h>
    /* Characters the escape of c adds: \\" \\\\ \\n \\r \\t \\b \\f one, other controls \\u00XX five. */
    static inline Py_ssize_t lmp_escape_extra(Py_UCS4 c) {
        return (c == 0x22 || c == 0x5c || c == 0x0a || c == 0x0d || c == 0x09 || c == 0x08 || c == 0x0c) ? 1 : 5;
    }

    /* The character after the backslash for each character needing an escape ('u' for
       \\u00XX): a table, not a switch, so mixed escapes do not mispredict an indirect jump. */
    static const unsigned char lmp_escape_letter[0x60] = {
        'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'b', 't', 'n', 'u', 'f', 'r', 'u', 'u',
        'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u',
        0, 0, 0x22, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x5c, 0, 0, 0,
    };

    /* Writes the escape of c (a control character, '"' or '\\') at d; sets len to its length. */
    #define LMP_WRITE_ESCAPE(T, d, c, len) do { \
        unsigned char letter_ = lmp_escape_letter[(c)]; \
        (d)[0] = 0x5c; (d)[1] = letter_; (len) = 2; \
        if (letter_ == 'u') { \
            (d)[2] = 0x30; (d)[3] = 0x30; \
            (d)[4] = (T)"0123456789abcdef"[(c) >> 4]; (d)[5] = (T)"0123456789abcdef"[(c) & 15]; \
            (len) = 6; \
        } \
    } while (0)

    #define LMP_DEFINE_ESCAPE(W, T) \
    static Py_ssize_t lmp_escape_extra_scan##W(const T *s, Py_ssize_t n) { \
        Py_ssize_t i = 0, extra = 0; \
        while ((i = lmp_next_special##W(s, i, n)) < n) { extra += lmp_escape_extra(s[i]); i++; } \
        return extra; \
    } \
    static T *lmp_escape_write##W(const T *s, Py_ssize_t n, T *d) { \
        Py_ssize_t i = 0, k, len; \
        for (;;) { \
            k = lmp_next_special##W(s, i, n); \
            if (k - i < 16) { while (i < k) *d++ = s[i++]; } /* cheaper than a memcpy call */ \
            else { memcpy(d, s + i, (size_t)(k - i) * sizeof(T)); d += k - i; } \
            if (k == n) return d; \
            LMP_WRITE_ESCAPE(T, d, s[k], len); \
            d += len; \
            i = k + 1; \
        } \
    }
    LMP_DEFINE_ESCAPE(1, Py_UCS1)
    LMP_DEFINE_ESCAPE(2, Py_UCS2)
    LMP_DEFINE_ESCAPE(4, Py_UCS4)
    #define lmp_escape_extra2 lmp_escape_extra_scan2
    #define lmp_escape_extra4 lmp_escape_extra_scan4

    #ifdef LMP_SSE2
    /* Escape-dense text (source code) has a special character every ~10 characters, so the
       write pass stores whole 16-byte blocks and lets the next store overwrite from where the
       first escape goes: no per-character copy loop. A store is safe while 16 bytes of input
       remain, since the output left is at least the input left. */
    #define LMP_DEFINE_BLOCK_WRITE(W, T, SHIFT) \
    static T *lmp_block_write##W(const T *s, Py_ssize_t n, T *d) { \
        const Py_ssize_t lanes = 16 / sizeof(T); \
        Py_ssize_t i = 0, len; \
        while (i + lanes <= n) { \
            __m128i v = _mm_loadu_si128((const __m128i *)(s + i)); \
            unsigned int bits = lmp_special_mask##W(v); \
            _mm_storeu_si128((__m128i *)d, v); \
            if (!bits) { i += lanes; d += lanes; continue; } \
            Py_ssize_t k = (Py_ssize_t)(lmp_ctz(bits) >> SHIFT); \
            i += k; d += k; \
            LMP_WRITE_ESCAPE(T, d, s[i], len); \
            d += len; i++; \
        } \
        return lmp_escape_write##W(s + i, n - i, d); \
    }
    LMP_DEFINE_BLOCK_WRITE(1, Py_UCS1, 0)
    LMP_DEFINE_BLOCK_WRITE(2, Py_UCS2, 1)
    LMP_DEFINE_BLOCK_WRITE(4, Py_UCS4, 2)
    #else
    #define lmp_block_write1 lmp_escape_write1
    #define lmp_block_write2 lmp_escape_write2
    #define lmp_block_write4 lmp_escape_write4
    #endif

    /* One-byte text (the common case) is counted a block at a time, however dense its escapes:
       each byte's extra length (1 or 5) is summed with SAD, no per-escape work. */
    #ifdef LMP_SSE2
    static Py_ssize_t lmp_escape_extra1(const Py_UCS1 *s, Py_ssize_t n) {
        const __m128i low = _mm_set1_epi8(0x1f), zero = _mm_setzero_si128();
        const __m128i q = _mm_set1_epi8(0x22), b = _mm_set1_epi8(0x5c), nl = _mm_set1_epi8(0x0a);
        const __m128i cr = _mm_set1_epi8(0x0d), tab = _mm_set1_epi8(0x09), bsp = _mm_set1_epi8(0x08);
        const __m128i ff = _mm_set1_epi8(0x0c), one = _mm_set1_epi8(1), five = _mm_set1_epi8(5);
        __m128i sum = zero;
        Py_ssize_t i = 0;
        for (; i + 16 <= n; i += 16) {
            __m128i v = _mm_loadu_si128((const __m128i *)(s + i));
            __m128i ctrl = _mm_cmpeq_epi8(_mm_subs_epu8(v, low), zero);
            __m128i named = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, nl), _mm_cmpeq_epi8(v, cr)),
                                         _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, tab), _mm_cmpeq_epi8(v, bsp)),
                                                      _mm_cmpeq_epi8(v, ff)));
            __m128i quoted = _mm_or_si128(_mm_cmpeq_epi8(v, q), _mm_cmpeq_epi8(v, b));
            /* one more character for \" \\ and the named controls, five for the other controls */
            __m128i w = _mm_or_si128(_mm_and_si128(_mm_or_si128(quoted, named), one),
                                     _mm_and_si128(_mm_andnot_si128(named, ctrl), five));
            sum = _mm_add_epi64(sum, _mm_sad_epu8(w, zero));
        }
        long long halves[2];
        _mm_storeu_si128((__m128i *)halves, sum);
        return (Py_ssize_t)(halves[0] + halves[1]) + lmp_escape_extra_scan1(s + i, n - i);
    }
    #else
    #define lmp_escape_extra1 lmp_escape_extra_scan1
    #endif
    """
    Py_ssize_t lmp_escape_extra1(const Py_UCS1 *s, Py_ssize_t n) noexcept nogil
    Py_ssize_t lmp_escape_extra2(const Py_UCS2 *s, Py_ssize_t n) noexcept nogil
    Py_ssize_t lmp_escape_extra4(const Py_UCS4 *s, Py_ssize_t n) noexcept nogil
    Py_UCS1 *lmp_block_write1(const Py_UCS1 *s, Py_ssize_t n, Py_UCS1 *d) noexcept nogil
    Py_UCS2 *lmp_block_write2(const Py_UCS2 *s, Py_ssize_t n, Py_UCS2 *d) noexcept nogil
    Py_UCS4 *lmp_block_write4(const Py_UCS4 *s, Py_ssize_t n, Py_UCS4 *d) noexcept nogil

__all__ = ['escape_json_string']


cdef enum:
    # Bytes of stack for escaping in one pass: a string whose worst case (every
    # character a six-character \u00XX) fits is written here first, then copied.
    _STACK_BYTES = 12288


cdef Py_ssize_t _write(int kind, const char *data, Py_ssize_t n, char *d) noexcept nogil:
    """Escape ``n`` characters of ``kind`` at ``d``; returns the characters written."""
    if kind == 1:
        return lmp_block_write1(<const Py_UCS1 *>data, n, <Py_UCS1 *>d) - <Py_UCS1 *>d
    if kind == 2:
        return lmp_block_write2(<const Py_UCS2 *>data, n, <Py_UCS2 *>d) - <Py_UCS2 *>d
    return lmp_block_write4(<const Py_UCS4 *>data, n, <Py_UCS4 *>d) - <Py_UCS4 *>d


cdef str _escape(str text, Py_ssize_t start, Py_ssize_t end, bint quote):
    cdef str src = text
    if not PyUnicode_IS_ASCII(text) and (start != 0 or end != PyUnicode_GET_LENGTH(text)):
        # The result's kind must be the narrowest that holds its widest character:
        # the substring has it, and escapes only add ASCII.
        src = PyUnicode_Substring(text, start, end)
        start, end = 0, PyUnicode_GET_LENGTH(src)
    cdef int kind = PyUnicode_KIND(src)
    cdef char *data = <char *>PyUnicode_DATA(src) + start * kind
    cdef Py_ssize_t n = end - start, length
    cdef Py_ssize_t q = 1 if quote else 0
    cdef char buf[_STACK_BYTES]
    # Short strings: one pass onto the stack, copied once the length is known.
    # Long ones: count, then write in place.
    cdef bint staged = n <= _STACK_BYTES // (6 * kind)
    if staged:
        length = _write(kind, data, n, buf)
    elif kind == 1:
        length = n + lmp_escape_extra1(<const Py_UCS1 *>data, n)
    elif kind == 2:
        length = n + lmp_escape_extra2(<const Py_UCS2 *>data, n)
    else:
        length = n + lmp_escape_extra4(<const Py_UCS4 *>data, n)
    if length == n and not quote:
        if start == 0 and end == PyUnicode_GET_LENGTH(src):
            return src
        return PyUnicode_Substring(src, start, end)
    out = PyUnicode_New(length + 2 * q, PyUnicode_MAX_CHAR_VALUE(src))
    cdef char *odata = <char *>PyUnicode_DATA(out)
    if staged:
        memcpy(odata + q * kind, buf, length * kind)
    else:
        _write(kind, data, n, odata + q * kind)
    if quote:
        PyUnicode_WRITE(kind, odata, 0, 0x22)
        PyUnicode_WRITE(kind, odata, length + 1, 0x22)
    return <str>out


cdef str json_string_body(str text, Py_ssize_t start, Py_ssize_t end):
    """``json.dumps(text[start:end], ensure_ascii=False)`` without the quotes."""
    return _escape(text, start, end, False)


cdef str json_quoted(str text):
    """``json.dumps(text, ensure_ascii=False)``."""
    return _escape(text, 0, PyUnicode_GET_LENGTH(text), True)


def escape_json_string(str text, Py_ssize_t start=0, end=None, bint quote=True):
    """``json.dumps(text[start:end], ensure_ascii=False)`` (without quotes when ``quote`` is False)."""
    cdef Py_ssize_t n = PyUnicode_GET_LENGTH(text)
    cdef Py_ssize_t stop = n if end is None else min(<Py_ssize_t>end, n)
    if start < 0 or stop < start:
        raise ValueError(f'invalid range [{start}:{end}] for a string of length {n}')
    return _escape(text, start, stop, quote)
