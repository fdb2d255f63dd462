"""A tool block closed holding text but no call: its text is content (``no_call_block_is_content``).

An XML-family dialect that declares ``no_call_block_is_content = True`` (K2
Horizon: vLLM's parser returns such a group as text) has the text skipped
before a block's first call collected (``no_call_skip``); when the block's
close tag then ends it with no call (``no_call_end``), the open tag and that
text are handed back as content and the close tag after them is plain text
again. A call's name stops the collection (text skipped before a call is
still dropped); a block holding only whitespace, and one cut by the end of the
output (the truncation rule), are dropped as for every dialect. Other
dialects drop such a block (vLLM's Qwen3-Coder parser does).
"""
from cpython.unicode cimport PyUnicode_Substring

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


cdef inline int no_call_skip(ToolParser p, str text, Py_ssize_t a, Py_ssize_t b) except -1:
    """``text[a:b]`` was skipped before the block's first call."""
    if p._no_call_text is not None:
        p._no_call_text.append(PyUnicode_Substring(text, a, b))
    return 0


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
