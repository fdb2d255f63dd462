"""DSML values as vLLM 0.33's DeepSeek V3.2 / V4 parsers give them (``DsmlToolParser``'s replace-mode switches).

``coerce_values_to_schema``: a value is converted to its parameter's schema type where it is a value of
that type (``string="true"`` ``42`` of an integer parameter is 42, a JSON object's text of an object
parameter is the object); a JSON scalar that is none of the parameter's types is its text when the schema
admits a string (``null`` of a string parameter is ``"null"``); an integral number of a number parameter
is an integer (``5.0``: ``5``). What vLLM's coercion would invent (``"1"`` as ``true``, ``"4_2"`` as 42)
is left as written. ``unwrap_wrapper_arguments``: a call whose only parameter is an undeclared
``arguments`` / ``input`` holding an object (or the object's text) of declared keys has that object as its
arguments, its values then converted as any top-level value. Sources: ``vllm/parser/deepseek_v4.py``
(``_dsml_arg_converter``, ``_unwrap_wrapper_args``), ``vllm/parser/engine/parser_engine.py``
(``_fix_arg_types``) and ``vllm/tool_parsers/utils.py`` (``coerce_to_schema_type``).
"""
import json

from lmparse.tools.json_escape cimport json_string_body
from lmparse.tools.xml_values cimport held_value_json, is_json, schema_types_c, value_kind

cdef extern from "Python.h":
    Py_ssize_t PyUnicode_GET_LENGTH(object)


cdef object engine_types(object props, str key, bint raw):
    """The types of parameter ``key`` in the call's ``props`` (None: no schema names one, or ``raw`` text
    of a string-only parameter, streamed as it is)."""
    schema = (<dict>props).get(key) if props is not None else None
    if not isinstance(schema, dict):
        return None
    types = schema_types_c(schema, 0)
    if not types or (raw and value_kind(<tuple>types) == 0):
        return None
    return types


cdef str engine_json(str text, tuple types):
    """A JSON value (``text``) as vLLM's schema coercion (``vllm/tool_parsers/utils.py``,
    ``coerce_to_schema_type`` via ``ParserEngine._fix_arg_types``) leaves it, where that loses nothing:
    an integral number of a ``number`` parameter is written as an integer (``5.0``: ``5``), a scalar
    that is not a value of the parameter's types is its text when the schema admits a string
    (``null`` for a string parameter: ``"null"``); anything else as written."""
    cdef bint ok
    value = json.loads(text)
    if value is None:
        ok = 'null' in types
    elif value is True or value is False:
        ok = 'boolean' in types
    elif type(value) is int:
        ok = 'integer' in types or 'number' in types
    elif type(value) is float:
        if 'number' in types and (<float>value).is_integer():
            return str(int(value))
        ok = 'number' in types or 'integer' in types
    else:
        return text  # strings, objects and arrays as written
    if ok or 'string' not in types:
        return text
    text = text.strip()
    return '"' + json_string_body(text, 0, PyUnicode_GET_LENGTH(text)) + '"'


cdef str engine_text(str raw, tuple types):
    """A raw-text value as ``coerce_values_to_schema`` gives it: converted where it is a value of a type of
    the parameter other than string (``engine_json``), else the text itself as a JSON string."""
    cdef Py_ssize_t n = PyUnicode_GET_LENGTH(raw)
    out = held_value_json(raw, 0, n, types) if value_kind(types) else None
    if out is None or (<str>out).startswith('"'):  # a string: as written (a quoted one keeps its quotes)
        return '"' + json_string_body(raw, 0, n) + '"'
    return engine_json(out, types)


cdef object _coerced_object(dict args, dict props):
    """The top-level values of ``args`` converted to their parameters' types (vLLM's ``_fix_arg_types``
    runs on unwrapped arguments too); None when none changes."""
    cdef bint changed = False
    out = {}
    for k, v in args.items():
        schema = props.get(k)
        types = schema_types_c(schema, 0) if isinstance(schema, dict) else ()
        if types and type(v) is str:
            new = json.loads(engine_text(<str>v, <tuple>types))
        elif types and (v is None or type(v) in (bool, int, float)):
            new = json.loads(engine_json(json.dumps(v), <tuple>types))
        else:
            new = v
        changed |= type(new) is not type(v) or new != v
        out[k] = new
    return out if changed else None


cdef object unwrapped(str value, object props, bint coerce):
    """The arguments a lone wrapper parameter stands for (vLLM's ``_unwrap_wrapper_args`` in
    ``vllm/parser/deepseek_v4.py``): its JSON object, or the object its string holds, written as the
    model wrote it (``coerce``: its values converted as ``_coerced_object``), when every key is a declared
    parameter; else None."""
    if not is_json(value):  # finite numbers only: what json.dumps writes back is JSON
        return None
    outer = json.loads(value)
    text = value.strip()
    if type(outer) is str:
        text = (<str>outer).strip()
        if not is_json(text):
            return None
        outer = json.loads(text)
    if type(outer) is not dict or type(props) is not dict or not (<dict>outer).keys() <= (<dict>props).keys():
        return None
    if coerce:
        fixed = _coerced_object(<dict>outer, <dict>props)
        if fixed is not None:
            return json.dumps(fixed, ensure_ascii=False)
    return text
