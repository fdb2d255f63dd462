"""What a JSON-envelope dialect class declares (field names, layout), read once per class and checked."""
from lmparse.tools.base cimport class_basis, immutable_type, same_basis


# class -> (name_field, argument_field, argument_field_aliases) as declared. A compiled class's entry
# is final; a Python class's is compared by identity at each construction (the
# base's class_basis), so a changed declaration rebuilds it. Threads racing on
# a miss only build the same entry twice.
cdef tuple _FIELD_NAMES = ('name_field', 'argument_field', 'argument_field_aliases')
cdef dict _declared = {}


cdef tuple declared_fields(type cls):
    entry = _declared.get(cls)
    if entry is not None and immutable_type(cls):
        return <tuple>entry
    fields = class_basis(cls, _FIELD_NAMES)
    if entry is not None and same_basis(<tuple>entry, fields):
        return <tuple>entry
    for field in fields[:2]:
        if not isinstance(field, str):
            raise TypeError(f'{cls.__name__}.name_field and argument_field must be str, got {type(field).__name__}')
    aliases = fields[2]
    if not isinstance(aliases, tuple) or not all(isinstance(a, str) for a in aliases):
        raise TypeError(f'{cls.__name__}.argument_field_aliases must be a tuple of str')
    if len(_declared) >= 256:
        _declared.clear()
    _declared[cls] = fields
    return fields


# class -> (envelope_array, bare_call_open, name_as_key) as declared; cached like _declared.
cdef tuple _LAYOUT_NAMES = ('envelope_array', 'bare_call_open', 'name_as_key', 'call_tags')
cdef dict _declared_layouts = {}


cdef tuple declared_layout(type cls):
    entry = _declared_layouts.get(cls)
    if entry is not None and immutable_type(cls):
        return <tuple>entry
    layout = class_basis(cls, _LAYOUT_NAMES)
    if entry is not None and same_basis(<tuple>entry, layout):
        return <tuple>entry
    bare = layout[1]
    if bare is not None and (type(bare) is not str or not bare):
        raise TypeError(f'{cls.__name__}.bare_call_open must be a non-empty str or None, got {bare!r}')
    if bare == '[' and not layout[0]:
        raise TypeError(f"{cls.__name__}.bare_call_open '[' needs envelope_array = True")
    tags = layout[3]
    if tags is not None and not (type(tags) is tuple and len(tags) == 2 and all(type(t) is str and t for t in tags)):
        raise TypeError(f'{cls.__name__}.call_tags must be None or two non-empty str, got {tags!r}')
    if len(_declared_layouts) >= 256:
        _declared_layouts.clear()
    _declared_layouts[cls] = layout
    return layout
