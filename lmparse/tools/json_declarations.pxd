cdef tuple declared_fields(type cls)
cdef tuple declared_layout(type cls)
