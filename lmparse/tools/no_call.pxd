"""A tool block that ends holding text but no call: its text is content, never lost.

A family collects the text it skips before a block's first call (``no_call_skip``);
when the block then ends with no call, at its close tag (``no_call_end``) or at
the end of the output, the open tag and that text are handed back as content
and the close tag after them is plain text again. A call's name stops the
collection (text skipped before a call is still dropped); a block holding only
whitespace is dropped as before.
"""
from cpython.unicode cimport PyUnicode_GET_LENGTH, PyUnicode_Substring

from lmparse.tools.base cimport ToolParser


cdef inline bint no_call_back(ToolParser p) except -1:
    """Hand back the collected text (True), unless it is only whitespace."""
    held = ''.join(p._no_call_text)
    p._no_call_text = None
    if not held.strip():
        return False
    open_tag = p.get_tool_open_tag()
    p._handback = (open_tag if isinstance(open_tag, str) else '') + held
    p._close_tag = None
    p._payload_closed = True
    return True


cdef inline bint no_call_skip(ToolParser p, str text, Py_ssize_t a, Py_ssize_t b, bint final) except -1:
    """``text[a:b]`` skipped before the first call; ``final``: the output ends the block (the rest included)."""
    if p._no_call_text is None:
        return False
    if final:
        b = PyUnicode_GET_LENGTH(text)
    if b > a:
        p._no_call_text.append(PyUnicode_Substring(text, a, b))
    return final and no_call_back(p)


cdef inline bint no_call_end(ToolParser p, str text, Py_ssize_t a, Py_ssize_t b, object name) except -1:
    """The first call's step ended at ``b``: a ``name`` begins a call; none, with the close tag at ``b``,
    ends the block holding no call (True when its text was handed back)."""
    if p._no_call_text is None:
        return False
    close = p._close_tag
    if name is not None or close is None or not text.startswith(<str>close, b):
        p._no_call_text = None
        return False
    p._no_call_text.append(PyUnicode_Substring(text, a, b))
    return no_call_back(p)
