cimport cython
from cpython.unicode cimport PyUnicode_Substring

from lmparse.tools.base cimport ToolParser

# Driver phases; the grammar reports the phase a matched marker leads to.
cdef enum:
    PH_FUNCTION = 0
    PH_ARG_START = 1
    PH_ARG_NAME = 2
    PH_ARG_VALUE = 3
    PH_CALL_END = 4
    PH_DONE = 5

# What the driver holds of a name that the text has not terminated yet.
cdef enum:
    NAME_NONE = 0
    NAME_OPEN = 1      # its text so far
    NAME_DONE = 2      # all of it; the value opener (value_open) is still to come

# Hooks a Python subclass overrides (bit per hook); the others run compiled.
cdef enum:
    XH_FUNCTION = 1
    XH_ARG_START = 2
    XH_ARG_NAME = 4
    XH_CALL_END = 8


cdef struct XmlStep:
    # After a match: the phase it leads to and, for a name, its stripped span
    # (name_start -1: no name, the block holds no call).
    int phase
    Py_ssize_t name_start
    Py_ssize_t name_end
    # After "need more text": the text before ``skip`` is junk the driver may
    # drop, and ``resume`` characters after it were already searched.
    Py_ssize_t skip
    Py_ssize_t resume
    # The first character of every scanned marker and of the block's close tag
    # (0 when they differ); set by the driver per block.
    Py_UCS4 lead
    # Held names (the driver's compiled path only; the Python-visible hooks
    # keep every name in the payload). In: ``may_hold`` and ``held`` (NAME_*,
    # what the driver holds of the current name). After "need more text":
    # ``text[piece_start:piece_end]`` is more of the name, consumed up to
    # ``skip`` (piece_start -1: none), and ``held`` the new state. After a
    # match with ``name_raw``: the name is the held text joined with the raw
    # span ``name_start:name_end``, stripped (None when empty and
    # ``name_optional``).
    bint may_hold
    int held
    Py_ssize_t piece_start
    Py_ssize_t piece_end
    bint name_raw
    bint name_optional


@cython.final
cdef class ValueEnds:
    # What ends a value in one kind of block (the driver's value scan): its close
    # tag, or with that missing function_close or the block's close tag; each
    # only when one of the markers of its follow tuple (the block's close tag
    # too after the first two) or the end of the output comes next, after at most
    # 64 whitespace characters. The close tag needs no confirmation when a Python
    # hook decides what follows a value (confirm_close False).
    cdef readonly str close
    cdef readonly str function_close
    cdef readonly object block
    cdef readonly tuple close_follow
    cdef readonly tuple fc_follow
    cdef readonly tuple block_follow
    cdef readonly bint confirm_close
    # a drifted close tag ('</parameter1>', a bare '</parameter') confirmed by what
    # follows ends the value too (confirm_close and a close tag ending in '>')
    cdef readonly bint drift
    # the first characters of the three markers; lead: that character when they share one, else 0
    cdef readonly str leads
    cdef Py_UCS4 lead


@cython.final
cdef class XmlGrammar:
    cdef readonly str function_open
    cdef readonly str function_name_end
    cdef readonly str arg_open
    cdef readonly str arg_name_end
    cdef readonly str value_open
    cdef readonly str function_close
    cdef readonly bint multiple_calls
    cdef readonly tuple function_open_prefixes
    cdef readonly tuple arg_open_prefixes
    cdef readonly tuple function_close_prefixes
    # the value side, copied into each parser
    cdef readonly str value_close
    cdef tuple value_prefixes
    cdef bint hold_all_value_prefixes
    # what ends a value in a block closed by the class's close tag (value_ends_for)
    cdef readonly ValueEnds value_ends
    cdef readonly bint strip_newlines
    cdef readonly bint cdata_values
    cdef readonly bint quoted_numbers
    # function_open when the dialect declares bare calls (bare_call_open) and no hook; else None
    cdef readonly str bare_open
    cdef int hooks
    # what a Python dialect class resolved its declarations and hooks to (None: a compiled class)
    cdef tuple basis
    # first characters of the scanned markers
    cdef Py_UCS4 lead
    cdef str leads

    cdef Py_UCS4 block_lead(self, object close_tag)
    cdef ValueEnds value_ends_for(self, object close_tag)
    cdef Py_ssize_t function(self, ToolParser owner, str payload, Py_ssize_t pos, bint final, XmlStep *st) except -2
    cdef Py_ssize_t arg_start(self, ToolParser owner, str payload, Py_ssize_t pos, XmlStep *st) except -2
    cdef Py_ssize_t arg_name(self, ToolParser owner, str payload, Py_ssize_t pos, XmlStep *st) except -2
    cdef Py_ssize_t call_end(self, str payload, Py_ssize_t pos, bint final, XmlStep *st) except -2


cdef XmlGrammar grammar_for(type cls)
cdef object python_step(ToolParser owner, int phase, str text, Py_ssize_t pos, Py_ssize_t size, bint final,
                        XmlStep *st)


cdef inline object _step_name(str text, XmlStep *st):
    if st.name_start < 0:
        return None
    return PyUnicode_Substring(text, st.name_start, st.name_end)
