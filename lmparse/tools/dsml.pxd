# The DSML family's parse phases and marker indices (lmparse.tools.dsml).

cdef enum:
    D_INVOKE_START = 0
    D_INVOKE_HEADER = 1
    D_PARAM_OR_END = 2
    D_PARAM_HEADER = 3
    D_STRING = 4
    D_JSON = 5
    D_PARAM_END = 6
    D_HELD = 7
    D_JSON_AFTER = 8  # a JSON value ended lexically: whitespace held until its close tag
    D_RAW = 9  # a JSON value that turned out not to be JSON: held raw text, a JSON string at its end

# Marker indices in ``_markers``.
cdef enum:
    K_INVOKE = 0
    K_PARAM = 1
    K_INVOKE_CLOSE = 2
    K_PARAM_CLOSE = 3
    K_BLOCK_CLOSE = 4
    K_COUNT = 5

cdef enum:
    # Raw text up to this long is scanned lead by lead; longer text with one substring search.
    _SHORT_VALUE = 256
    # Whitespace between a close tag and the tag that confirms it: a longer run makes the close tag text.
    _CONFIRM_WINDOW = 64
