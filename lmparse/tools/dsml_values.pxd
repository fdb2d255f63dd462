"""DSML values as vLLM's DeepSeek parsers give them: see ``dsml_values.pyx``."""

cdef object engine_types(object props, str key, bint raw)
cdef str engine_json(str text, tuple types)
cdef str engine_text(str raw, tuple types)
cdef object unwrapped(str value, object props, bint coerce)
