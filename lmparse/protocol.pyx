# cython: language_level=3
"""OpenAI-style chat delta and tool-call types.

Lightweight cdef-class equivalents of the pydantic models used by LMDeploy's
parser layer: same fields, same defaults, same ``model_dump`` output, but
construction costs a few dozen nanoseconds instead of microseconds.
"""
cimport cython
from cpython.dict cimport PyDict_GetItem
from cpython.object cimport PyObject
from libc.stdint cimport uint64_t

import copy as _copy
import copyreg as _copyreg
import json as _json
from operator import index as _operator_index
from random import getrandbits as _getrandbits

__all__ = [
    "DeltaFunctionCall",
    "DeltaToolCall",
    "DeltaMessage",
    "FunctionCall",
    "ToolCall",
    "random_call_id",
]

# shortuuid's default alphabet: no 0/1/I/O/l, 57 symbols.
ID_ALPHABET = "23456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
cdef enum:
    _ID_LEN = 22
cdef const char* _ALPHABET_C = b"23456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
# 50 * 57**10 is the largest multiple of 57**10 below 2**64: accepting only words
# under it gives 10 unbiased base-57 digits per word (~98% acceptance).
cdef uint64_t _WORD_LIMIT = 50ULL * 362033331456891249ULL

_newobj = _copyreg.__newobj__


def random_call_id(str prefix not None = ""):
    """Return ``prefix`` followed by 22 random base-57 characters.

    Uses the global ``random`` instance, which CPython reseeds after fork, so
    forked server workers do not produce colliding ids.
    """
    cdef char buf[_ID_LEN]
    cdef int filled = 0
    cdef int k
    cdef uint64_t word
    while filled < _ID_LEN:
        word = _getrandbits(64)
        if word >= _WORD_LIMIT:
            continue
        for k in range(10):
            if filled == _ID_LEN:
                break
            buf[filled] = _ALPHABET_C[word % 57]
            word //= 57
            filled += 1
    return prefix + buf[:_ID_LEN].decode("ascii")


# ---------------------------------------------------------------- validation

cdef inline object _opt_str(object value, str owner, str field):
    if value is None or isinstance(value, str):
        return value
    raise TypeError(f"{owner}.{field} must be str or None, got {type(value).__name__}")


cdef inline object _req_str(object value, str owner, str field):
    if isinstance(value, str):
        return value
    raise TypeError(f"{owner}.{field} must be str, got {type(value).__name__}")


cdef inline Py_ssize_t _as_index(object value) except? -1:
    # bool is an int subclass; pydantic accepts it too, so do we.
    if isinstance(value, int):
        return value
    # Integer-likes (e.g. numpy ints) via __index__; floats and str are rejected.
    try:
        return _operator_index(value)
    except TypeError:
        raise TypeError(f"DeltaToolCall.index must be int, got {type(value).__name__}") from None


cdef int _check_keys(dict data, tuple allowed, str owner) except -1:
    for key in data:
        if key not in allowed:
            raise ValueError(f"{owner}: unexpected field {key!r} (allowed: {', '.join(allowed)})")
    return 0


cdef tuple _DELTA_FUNCTION_FIELDS = ("name", "arguments")
cdef tuple _DELTA_TOOL_CALL_FIELDS = ("id", "type", "index", "function")
cdef tuple _DELTA_MESSAGE_FIELDS = ("role", "content", "reasoning_content", "tool_calls")
cdef tuple _FUNCTION_CALL_FIELDS = ("name", "arguments")
cdef tuple _TOOL_CALL_FIELDS = ("id", "type", "function")


cdef object _to_delta_function(object value):
    """Coerce dict / model / attribute object into a DeltaFunctionCall."""
    cdef DeltaFunctionCall fn
    cdef PyObject* pname
    cdef PyObject* pargs
    if value is None or isinstance(value, DeltaFunctionCall):
        return value
    if isinstance(value, dict):
        # Borrowed lookups; only scan keys for a typo when the sizes disagree.
        pname = PyDict_GetItem(value, "name")
        pargs = PyDict_GetItem(value, "arguments")
        if len(<dict>value) != (pname is not NULL) + (pargs is not NULL):
            _check_keys(<dict>value, _DELTA_FUNCTION_FIELDS, "DeltaFunctionCall")
        name = <object>pname if pname is not NULL else None
        arguments = <object>pargs if pargs is not NULL else None
    else:
        try:
            name = value.name
            arguments = value.arguments
        except AttributeError:
            raise TypeError(
                "DeltaToolCall.function must be a DeltaFunctionCall, a dict or an object "
                f"with .name/.arguments, got {type(value).__name__}"
            ) from None
    fn = DeltaFunctionCall.__new__(DeltaFunctionCall)
    fn.name = _opt_str(name, "DeltaFunctionCall", "name")
    fn.arguments = _opt_str(arguments, "DeltaFunctionCall", "arguments")
    return fn


cdef object _to_function_call(object value):
    """Coerce dict / model / attribute object into a FunctionCall."""
    cdef FunctionCall fn
    if isinstance(value, FunctionCall):
        return value
    if isinstance(value, dict):
        _check_keys(<dict>value, _FUNCTION_CALL_FIELDS, "FunctionCall")
        try:
            name = (<dict>value)["name"]
            arguments = (<dict>value)["arguments"]
        except KeyError as exc:
            raise ValueError(f"FunctionCall: missing required field {exc.args[0]!r}") from None
    elif value is None:
        raise TypeError("ToolCall.function is required, got None")
    else:
        try:
            name = value.name
            arguments = value.arguments
        except AttributeError:
            raise TypeError(
                "ToolCall.function must be a FunctionCall, a dict or an object "
                f"with .name/.arguments, got {type(value).__name__}"
            ) from None
    fn = FunctionCall.__new__(FunctionCall)
    fn.name = _req_str(name, "FunctionCall", "name")
    fn.arguments = _req_str(arguments, "FunctionCall", "arguments")
    return fn


cdef object _to_delta_tool_call(object value):
    if isinstance(value, DeltaToolCall):
        return value
    if isinstance(value, dict):
        _check_keys(<dict>value, _DELTA_TOOL_CALL_FIELDS, "DeltaToolCall")
        if "index" not in <dict>value:
            raise ValueError("DeltaToolCall: missing required field 'index'")
        return DeltaToolCall(**value)
    try:
        index = value.index
        call_id = value.id
        call_type = value.type
        function = value.function
    except AttributeError:
        raise TypeError(
            "DeltaMessage.tool_calls items must be DeltaToolCall, dict or an object "
            f"with .index/.id/.type/.function, got {type(value).__name__}"
        ) from None
    return DeltaToolCall(index, call_id, call_type, function)


cdef object _to_tool_call_list(object value):
    if value is None:
        return None
    if not isinstance(value, (list, tuple)):
        raise TypeError(f"DeltaMessage.tool_calls must be a list or None, got {type(value).__name__}")
    # Always a fresh list, as pydantic does, so callers' lists are not aliased.
    return [_to_delta_tool_call(item) for item in value]


cdef object _dump_any(object value, bint exclude_none):
    # Fields may have been reassigned after construction; dump whatever is there.
    if isinstance(value, DeltaFunctionCall):
        return _dump_delta_function(<DeltaFunctionCall>value, exclude_none)
    if isinstance(value, DeltaToolCall):
        return _dump_delta_tool_call(<DeltaToolCall>value, exclude_none)
    if isinstance(value, FunctionCall):
        return _dump_function_call(<FunctionCall>value, exclude_none)
    if isinstance(value, (list, tuple)):
        return [_dump_any(item, exclude_none) for item in value]
    dump = getattr(value, "model_dump", None)
    if dump is not None:
        return dump(exclude_none=exclude_none)
    return value


cdef inline str _dumps(dict data, object indent):
    if indent is None:
        return _json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return _json.dumps(data, ensure_ascii=False, indent=indent)


cdef object _apply_update(object obj, object update, tuple fields):
    if update:
        for key, value in update.items():
            if key not in fields:
                raise ValueError(f"{type(obj).__name__}: unknown field {key!r}")
            # No validation, matching pydantic's model_copy(update=...).
            setattr(obj, key, value)
    return obj


# ---------------------------------------------------------------- classes
#
# The three delta classes are streamed by the thousand, so they stay out of the
# cycle collector (no_gc): their fields hold strings, None, a delta function
# and a list of delta tool calls, which never lead back to them. A cycle a
# caller builds on purpose (a message inside its own tool_calls) is not freed.

@cython.freelist(64)
@cython.no_gc
cdef class DeltaFunctionCall:
    """Incremental function call: ``name`` and/or an ``arguments`` fragment."""

    model_fields = _DELTA_FUNCTION_FIELDS
    __match_args__ = _DELTA_FUNCTION_FIELDS

    def __init__(self, name=None, arguments=None):
        self.name = _opt_str(name, "DeltaFunctionCall", "name")
        self.arguments = _opt_str(arguments, "DeltaFunctionCall", "arguments")

    def model_dump(self, *, bint exclude_none=False, mode="python", **ignored):
        return _dump_delta_function(self, exclude_none)

    def model_dump_json(self, *, bint exclude_none=False, indent=None, **ignored):
        return _dumps(_dump_delta_function(self, exclude_none), indent)

    def model_copy(self, update=None, bint deep=False):
        cdef DeltaFunctionCall new = type(self).__new__(type(self))
        new.name = self.name
        new.arguments = self.arguments
        return _apply_update(new, update, _DELTA_FUNCTION_FIELDS)

    def __eq__(self, other):
        if not isinstance(other, DeltaFunctionCall):
            return NotImplemented
        if type(self) is not type(other):
            return False
        cdef DeltaFunctionCall o = other
        return self.name == o.name and self.arguments == o.arguments

    def __repr__(self):
        return f"{type(self).__name__}(name={self.name!r}, arguments={self.arguments!r})"

    def __reduce__(self):
        return _newobj, (type(self),), (self.name, self.arguments)

    def __setstate__(self, state):
        self.name, self.arguments = state


@cython.freelist(64)
@cython.no_gc
cdef class DeltaToolCall:
    """One tool call fragment inside a streamed delta, addressed by ``index``."""

    model_fields = _DELTA_TOOL_CALL_FIELDS
    __match_args__ = _DELTA_TOOL_CALL_FIELDS

    def __init__(self, index, id=None, type="function", function=None):
        self.index = _as_index(index)
        self.id = _opt_str(id, "DeltaToolCall", "id")
        if type is not None and type != "function":
            raise ValueError(f"DeltaToolCall.type must be 'function' or None, got {type!r}")
        self.type = type
        self.function = _to_delta_function(function)

    def model_dump(self, *, bint exclude_none=False, mode="python", **ignored):
        return _dump_delta_tool_call(self, exclude_none)

    def model_dump_json(self, *, bint exclude_none=False, indent=None, **ignored):
        return _dumps(_dump_delta_tool_call(self, exclude_none), indent)

    def model_copy(self, update=None, bint deep=False):
        cdef DeltaToolCall new = type(self).__new__(type(self))
        new.id = self.id
        new.type = self.type
        new.index = self.index
        new.function = _copy.deepcopy(self.function) if deep else self.function
        return _apply_update(new, update, _DELTA_TOOL_CALL_FIELDS)

    def __eq__(self, other):
        if not isinstance(other, DeltaToolCall):
            return NotImplemented
        if type(self) is not type(other):
            return False
        cdef DeltaToolCall o = other
        return (
            self.index == o.index
            and self.id == o.id
            and self.type == o.type
            and self.function == o.function
        )

    def __repr__(self):
        return (
            f"{type(self).__name__}(id={self.id!r}, type={self.type!r}, "
            f"index={self.index!r}, function={self.function!r})"
        )

    def __reduce__(self):
        return _newobj, (type(self),), (self.id, self.type, self.index, self.function)

    def __setstate__(self, state):
        self.id, self.type, self.index, self.function = state


@cython.freelist(64)
@cython.no_gc
cdef class DeltaMessage:
    """A streamed chat delta: role, content, reasoning and tool call fragments."""

    model_fields = _DELTA_MESSAGE_FIELDS
    __match_args__ = _DELTA_MESSAGE_FIELDS

    def __init__(self, role=None, content=None, reasoning_content=None, tool_calls=None):
        self.role = _opt_str(role, "DeltaMessage", "role")
        self.content = _opt_str(content, "DeltaMessage", "content")
        self.reasoning_content = _opt_str(reasoning_content, "DeltaMessage", "reasoning_content")
        self.tool_calls = _to_tool_call_list(tool_calls)

    def model_dump(self, *, bint exclude_none=False, mode="python", **ignored):
        return _dump_delta_message(self, exclude_none)

    def model_dump_json(self, *, bint exclude_none=False, indent=None, **ignored):
        return _dumps(_dump_delta_message(self, exclude_none), indent)

    def model_copy(self, update=None, bint deep=False):
        cdef DeltaMessage new = type(self).__new__(type(self))
        new.role = self.role
        new.content = self.content
        new.reasoning_content = self.reasoning_content
        new.tool_calls = _copy.deepcopy(self.tool_calls) if deep else self.tool_calls
        return _apply_update(new, update, _DELTA_MESSAGE_FIELDS)

    def __eq__(self, other):
        if not isinstance(other, DeltaMessage):
            return NotImplemented
        if type(self) is not type(other):
            return False
        cdef DeltaMessage o = other
        return (
            self.role == o.role
            and self.content == o.content
            and self.reasoning_content == o.reasoning_content
            and self.tool_calls == o.tool_calls
        )

    def __repr__(self):
        return (
            f"{type(self).__name__}(role={self.role!r}, content={self.content!r}, "
            f"reasoning_content={self.reasoning_content!r}, tool_calls={self.tool_calls!r})"
        )

    def __reduce__(self):
        return _newobj, (type(self),), (self.role, self.content, self.reasoning_content, self.tool_calls)

    def __setstate__(self, state):
        self.role, self.content, self.reasoning_content, self.tool_calls = state


cdef class FunctionCall:
    """A complete function call (non-streaming responses)."""

    model_fields = _FUNCTION_CALL_FIELDS
    __match_args__ = _FUNCTION_CALL_FIELDS

    def __init__(self, name, arguments):
        self.name = _req_str(name, "FunctionCall", "name")
        self.arguments = _req_str(arguments, "FunctionCall", "arguments")

    def model_dump(self, *, bint exclude_none=False, mode="python", **ignored):
        return _dump_function_call(self, exclude_none)

    def model_dump_json(self, *, bint exclude_none=False, indent=None, **ignored):
        return _dumps(_dump_function_call(self, exclude_none), indent)

    def model_copy(self, update=None, bint deep=False):
        cdef FunctionCall new = type(self).__new__(type(self))
        new.name = self.name
        new.arguments = self.arguments
        return _apply_update(new, update, _FUNCTION_CALL_FIELDS)

    def __eq__(self, other):
        if not isinstance(other, FunctionCall):
            return NotImplemented
        if type(self) is not type(other):
            return False
        cdef FunctionCall o = other
        return self.name == o.name and self.arguments == o.arguments

    def __repr__(self):
        return f"{type(self).__name__}(name={self.name!r}, arguments={self.arguments!r})"

    def __reduce__(self):
        return _newobj, (type(self),), (self.name, self.arguments)

    def __setstate__(self, state):
        self.name, self.arguments = state


cdef class ToolCall:
    """A complete tool call; ``id`` defaults to ``'chatcmpl-' + 22 random chars``."""

    model_fields = _TOOL_CALL_FIELDS
    __match_args__ = _TOOL_CALL_FIELDS

    def __init__(self, function, id=None, type="function"):
        # None means "generate", a convenience over pydantic (which would reject it).
        self.id = random_call_id("chatcmpl-") if id is None else _req_str(id, "ToolCall", "id")
        if type != "function":
            raise ValueError(f"ToolCall.type must be 'function', got {type!r}")
        self.type = type
        self.function = _to_function_call(function)

    def model_dump(self, *, bint exclude_none=False, mode="python", **ignored):
        return _dump_tool_call(self, exclude_none)

    def model_dump_json(self, *, bint exclude_none=False, indent=None, **ignored):
        return _dumps(_dump_tool_call(self, exclude_none), indent)

    def model_copy(self, update=None, bint deep=False):
        cdef ToolCall new = type(self).__new__(type(self))
        new.id = self.id
        new.type = self.type
        new.function = _copy.deepcopy(self.function) if deep else self.function
        return _apply_update(new, update, _TOOL_CALL_FIELDS)

    def __eq__(self, other):
        if not isinstance(other, ToolCall):
            return NotImplemented
        if type(self) is not type(other):
            return False
        cdef ToolCall o = other
        return self.id == o.id and self.type == o.type and self.function == o.function

    def __repr__(self):
        return f"{type(self).__name__}(id={self.id!r}, type={self.type!r}, function={self.function!r})"

    def __reduce__(self):
        return _newobj, (type(self),), (self.id, self.type, self.function)

    def __setstate__(self, state):
        self.id, self.type, self.function = state


# ---------------------------------------------------------------- dumping

cdef dict _dump_delta_function(DeltaFunctionCall obj, bint exclude_none):
    if not exclude_none:
        return {"name": obj.name, "arguments": obj.arguments}
    out = {}
    if obj.name is not None:
        out["name"] = obj.name
    if obj.arguments is not None:
        out["arguments"] = obj.arguments
    return out


cdef dict _dump_delta_tool_call(DeltaToolCall obj, bint exclude_none):
    fn = obj.function
    if fn is not None:
        fn = _dump_any(fn, exclude_none)
    if not exclude_none:
        return {"id": obj.id, "type": obj.type, "index": obj.index, "function": fn}
    out = {}
    if obj.id is not None:
        out["id"] = obj.id
    if obj.type is not None:
        out["type"] = obj.type
    out["index"] = obj.index
    if fn is not None:
        out["function"] = fn
    return out


cdef dict _dump_delta_message(DeltaMessage obj, bint exclude_none):
    calls = obj.tool_calls
    if calls is not None:
        calls = _dump_any(calls, exclude_none)
    if not exclude_none:
        return {
            "role": obj.role,
            "content": obj.content,
            "reasoning_content": obj.reasoning_content,
            "tool_calls": calls,
        }
    out = {}
    if obj.role is not None:
        out["role"] = obj.role
    if obj.content is not None:
        out["content"] = obj.content
    if obj.reasoning_content is not None:
        out["reasoning_content"] = obj.reasoning_content
    if calls is not None:
        out["tool_calls"] = calls
    return out


cdef dict _dump_function_call(FunctionCall obj, bint exclude_none):
    if not exclude_none:
        return {"name": obj.name, "arguments": obj.arguments}
    out = {}
    if obj.name is not None:
        out["name"] = obj.name
    if obj.arguments is not None:
        out["arguments"] = obj.arguments
    return out


cdef dict _dump_tool_call(ToolCall obj, bint exclude_none):
    fn = obj.function
    if fn is not None:
        fn = _dump_any(fn, exclude_none)
    if not exclude_none:
        return {"id": obj.id, "type": obj.type, "function": fn}
    out = {}
    if obj.id is not None:
        out["id"] = obj.id
    if obj.type is not None:
        out["type"] = obj.type
    if fn is not None:
        out["function"] = fn
    return out


# ---------------------------------------------------------------- fast paths

cdef DeltaMessage new_delta_message(object content, object reasoning_content, object tool_calls):
    cdef DeltaMessage msg = DeltaMessage.__new__(DeltaMessage)
    msg.role = "assistant"
    msg.content = content
    msg.reasoning_content = reasoning_content
    msg.tool_calls = tool_calls
    return msg


cdef DeltaToolCall new_tool_identity(Py_ssize_t index, str call_id, str name):
    cdef DeltaFunctionCall fn = DeltaFunctionCall.__new__(DeltaFunctionCall)
    fn.name = name
    cdef DeltaToolCall call = DeltaToolCall.__new__(DeltaToolCall)
    call.id = call_id
    call.type = "function"
    call.index = index
    call.function = fn
    return call


cdef DeltaToolCall new_tool_arguments(Py_ssize_t index, str arguments):
    cdef DeltaFunctionCall fn = DeltaFunctionCall.__new__(DeltaFunctionCall)
    fn.arguments = arguments
    cdef DeltaToolCall call = DeltaToolCall.__new__(DeltaToolCall)
    call.index = index
    call.function = fn
    return call


cdef DeltaToolCall new_tool_delta(Py_ssize_t index, object name, object arguments):
    cdef DeltaFunctionCall fn = DeltaFunctionCall.__new__(DeltaFunctionCall)
    fn.name = name
    fn.arguments = arguments
    cdef DeltaToolCall call = DeltaToolCall.__new__(DeltaToolCall)
    call.index = index
    call.function = fn
    return call
