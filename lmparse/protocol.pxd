# Delta and call types shared by every parser module (cimported for fast construction).

cdef class DeltaFunctionCall:
    cdef public object name
    cdef public object arguments


cdef class DeltaToolCall:
    cdef public object id
    cdef public object type
    cdef public Py_ssize_t index
    cdef public object function


cdef class DeltaMessage:
    cdef public object role
    cdef public object content
    cdef public object reasoning_content
    cdef public object tool_calls


cdef class FunctionCall:
    cdef public object name
    cdef public object arguments


cdef class ToolCall:
    cdef public object id
    cdef public object type
    cdef public object function


# Fast constructors for the hot path: no keyword parsing, no validation.
cdef DeltaMessage new_delta_message(object content, object reasoning_content, object tool_calls)
cdef DeltaToolCall new_tool_identity(Py_ssize_t index, str call_id, str name)
cdef DeltaToolCall new_tool_arguments(Py_ssize_t index, str arguments)
cdef DeltaToolCall new_tool_delta(Py_ssize_t index, object name, object arguments)
