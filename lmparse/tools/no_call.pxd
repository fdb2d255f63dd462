"""A tool block closed holding text but no call: its text is content (``no_call_block_is_content``).

An XML-family dialect that declares ``no_call_block_is_content = True`` (K2
Horizon: vLLM's parser returns such a group as text) has the text skipped
before a block's first call collected (``no_call_skip``); when the block's
close tag then ends it with no call (``no_call_end``), the open tag and that
text are handed back as content and the close tag after them is plain text
again. A call's name stops the collection (text skipped before a call is
still dropped), unless it is no name (a JSON envelope where the name goes): that
call's text is collected as well; a block holding only whitespace, and one cut by the end of the
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


cdef inline bint _no_name(object name) except -1:
    """A call "name" no tool is named by (whitespace, quotes, brackets: a JSON envelope written where the
    layout puts the name, as vLLM's K2 Horizon parser refuses it)."""
    for c in <str>name:
        if c.isspace() or c in '{}[]"\'<>':
            return True
    return False


cdef inline bint no_call_end(ToolParser p, str text, Py_ssize_t a, Py_ssize_t b, object name) except -1:
    """The first call's step ended at ``b``: a ``name`` begins a call; none, with the close tag at ``b``,
    ends the block holding no call (True; the block closed when its text was handed back). A name that
    is no name is text too: collected (True, the block still open) unless the close tag ends it at ``b``."""
    if p._no_call_text is None:
        return False
    close = p._close_tag
    at_close = close is not None and text.startswith(<str>close, b)
    if (name is not None and not _no_name(name)) or (name is None and not at_close):
        p._no_call_text = None
        return False
    if name is None:
        p._no_call_text.append(PyUnicode_Substring(text, a, b))
        return no_call_back(p)
    # The call as written around its name (held across chunks, so not all in ``text``): the same for any chunking.
    opener, closer = getattr(type(p), 'function_open', None) or '', getattr(type(p), 'function_close', None) or ''
    p._no_call_text.append(opener + <str>name + (closer if closer and text.endswith(closer, a, b) else ''))
    return no_call_back(p) if at_close else True
