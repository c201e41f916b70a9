# Growable malloc'd byte buffers: the struct and its nogil helpers.
#
#     from _growbuf cimport GrowBuf, growbuf_reserve, growbuf_append, growbuf_free
#
# Only `cdef inline` here (no module of this name exists at run time; see _bleu.pxd). The
# struct lives in a .pxd so that every module, and the shared .pxd files that keep
# GrowBufs in their own structs (_intern.pxd), mean the same C type. _growbuf.pxi cimports
# these and adds the NumPy hand-over (growbuf_to_array).
# realloc of a large block is an mremap on glibc, so growing never doubles peak memory.

from libc.stdlib cimport free, realloc
from libc.string cimport memcpy


cdef struct GrowBuf:
    char* data
    Py_ssize_t size      # bytes in use
    Py_ssize_t cap       # bytes allocated


cdef inline int growbuf_reserve(GrowBuf* b, Py_ssize_t extra) noexcept nogil:
    """Make room for ``extra`` more bytes; 0 on success, -1 when out of memory."""
    cdef Py_ssize_t need = b.size + extra
    cdef Py_ssize_t cap
    cdef char* p
    if need <= b.cap:
        return 0
    cap = b.cap + b.cap // 2 + 65536
    if cap < need:
        cap = need
    p = <char*>realloc(b.data, cap)
    if p == NULL:
        return -1
    b.data = p
    b.cap = cap
    return 0


cdef inline int growbuf_append(GrowBuf* b, const void* src, Py_ssize_t nbytes) noexcept nogil:
    if growbuf_reserve(b, nbytes) != 0:
        return -1
    memcpy(b.data + b.size, src, nbytes)
    b.size += nbytes
    return 0


cdef inline void growbuf_free(GrowBuf* b) noexcept nogil:
    free(b.data)
    b.data = NULL
    b.size = 0
    b.cap = 0
