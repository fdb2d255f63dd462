# pydantic v2 instance state set through the public C-API (see pydantic_state.pyx).
cdef object new_instance(object cls, dict state, object fields_set, bint extra_dict)
