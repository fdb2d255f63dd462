# cython: language_level=3
"""pydantic v2 model instances built with the state their constructors produce, in compiled code.

pydantic v2 keeps an instance's state in four attributes: ``__dict__`` (every
field, in declaration order), ``__pydantic_fields_set__``, ``__pydantic_extra__``
(None, or a dict when the model allows extra fields) and
``__pydantic_private__``. :func:`new_instance` sets the four through the public
C-API (``PyType_GenericNew``, what ``object.__new__`` allocates, and
``PyObject_GenericSetAttr``, what ``object.__setattr__`` does), with no
Python-level call. The engines' type converters (``lmparse.compat.lmdeploy_types``,
``lmparse.integrations.vllm_types``) compare it once per process against the
public constructor with :func:`same_instance` and fall back to the constructor
when anything differs.
"""
from cpython.object cimport PyObject_GenericSetAttr
from cpython.type cimport PyType_GenericNew

__all__ = ['same_instance']

cdef tuple _EMPTY = ()


cdef object new_instance(object cls, dict state, object fields_set, bint extra_dict):
    """An instance of the model class ``cls`` with ``state`` as its fields (``state`` is taken, not copied)."""
    # object.__new__ for a model class: the type's own allocation (pydantic models are never abstract)
    obj = PyType_GenericNew(cls, _EMPTY, None)
    PyObject_GenericSetAttr(obj, '__dict__', state)
    PyObject_GenericSetAttr(obj, '__pydantic_fields_set__', set(fields_set))
    PyObject_GenericSetAttr(obj, '__pydantic_extra__', {} if extra_dict else None)
    PyObject_GenericSetAttr(obj, '__pydantic_private__', None)
    return obj


def same_instance(a: object, b: object) -> bool:
    """Whether two model instances hold the same state, nested models included, and serialise alike."""
    if type(a) is not type(b):
        return False
    if not (a == b and a.model_dump() == b.model_dump() and a.model_dump_json() == b.model_dump_json()
            and a.model_dump_json(exclude_unset=True) == b.model_dump_json(exclude_unset=True)
            and a.model_fields_set == b.model_fields_set
            and list(a.__dict__) == list(b.__dict__)
            and a.__pydantic_extra__ == b.__pydantic_extra__
            and a.__pydantic_private__ == b.__pydantic_private__):
        return False
    for key, value in a.__dict__.items():
        other = b.__dict__[key]
        if isinstance(value, list):
            if not isinstance(other, list) or len(value) != len(other):
                return False
            if not all(same_instance(x, y) if hasattr(x, 'model_fields_set') else x == y
                       for x, y in zip(value, other)):
                return False
        elif hasattr(value, 'model_fields_set') and not same_instance(value, other):
            return False
    return True
