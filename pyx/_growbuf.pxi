# Growable malloc'd byte buffers that become NumPy arrays without a copy.
# Included (not cimported) by the modules that build arrays of unknown final size: the
# struct and its nogil helpers come from _growbuf.pxd, the NumPy hand-over is here.

from libc.stdlib cimport free, realloc
from libc.string cimport memcpy

from _growbuf cimport GrowBuf, growbuf_reserve, growbuf_append, growbuf_free

cimport numpy as cnp

cnp.import_array()


cdef class _BufferOwner:
    """Frees a malloc'd block when the NumPy array that views it dies."""
    cdef void* ptr

    def __dealloc__(self):
        free(self.ptr)


cdef object growbuf_to_array(GrowBuf* b, int typenum, Py_ssize_t itemsize, Py_ssize_t ncols):
    """Hand the buffer to a new NumPy array (1-D if ncols == 0, else [rows, ncols]).

    The buffer is left empty; the array owns the memory from now on.
    """
    cdef cnp.npy_intp dims[2]
    cdef Py_ssize_t n = b.size // itemsize
    cdef int nd = 1 if ncols == 0 else 2
    cdef char* p
    cdef _BufferOwner owner
    if ncols == 0:
        dims[0] = n
    else:
        dims[0] = n // ncols
        dims[1] = ncols
    if n == 0:
        growbuf_free(b)
        return cnp.PyArray_ZEROS(nd, dims, typenum, 0)
    p = <char*>realloc(b.data, b.size)   # give back the slack
    if p == NULL:
        p = b.data
    arr = cnp.PyArray_SimpleNewFromData(nd, dims, typenum, p)
    owner = _BufferOwner.__new__(_BufferOwner)
    owner.ptr = p
    cnp.set_array_base(arr, owner)
    b.data = NULL
    b.size = 0
    b.cap = 0
    return arr
