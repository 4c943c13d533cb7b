/* ember._cstorage: the Storage type in C; the module also carries the per-op tensor paths
   of _ctensor.c (`empty_tensor`, `make_view`, `is_contiguous`, `exact_ints`).

   A storage is one device buffer plus the version counter that in-place ops bump. Every
   op result allocates one and every dead tensor frees one, so its two hot paths (taking a
   small block from the current stream's free lists, and putting it back) are what a
   1-element op pays beyond its kernel. In Python they cost ~1.5 us per op, most of it
   the interpreter's attribute traffic and the `__del__` call; here they cost ~0.15 us.

   Only the hit paths are here. Everything else (a miss, a large block, a block lent to
   other streams, caching off) calls the Python allocator, `ember._allocator`, which owns
   the pools, the lock and the statistics: this file must agree with it on three things,
   which `configure` hands over at import: the small-block limit and rounding, and the
   function that finds the current stream's free lists on devices whose pools are per
   stream. */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>

#include "_cslots.h"
#include "_cstorage.h"

typedef struct {
    PyObject_HEAD
    PyObject *weakrefs;
    PyObject *alloc;  /* the CachingAllocator; None for wrapped memory; NULL before a block */
    PyObject *block;  /* large blocks only */
    PyObject *home;   /* the free lists (a dict: size -> [(handle, ptr)]) the block goes to */
    PyObject *owner;  /* wrapped memory only: what keeps it alive */
    PyObject *device;
    PyObject *handle;
    PyObject *ptr;
    PyObject *size;   /* the block's size (an int), as the allocator rounded it */
    Py_ssize_t nbytes;
    Py_ssize_t version;
} StorageObject;

/* What `configure` sets: the allocator's constants and its per-stream lookup. */
static Py_ssize_t small_limit = -1;
static Py_ssize_t round_to = 0;
static PyObject *stream_home = NULL;

static PyObject *s_allocator, *s_fast, *s_allocated, *s_peak, *s_allocate, *s_release,
    *s_record_stream, *s_device;

/* alloc.<name> += delta (the allocator's byte counters are Python ints in its slots). */
static int
add_counter(PyObject *alloc, PyObject *name, PyObject *delta, int subtract, Py_ssize_t *now)
{
    PyObject *old = PyObject_GetAttr(alloc, name);
    if (old == NULL)
        return -1;
    PyObject *new = subtract ? PyNumber_Subtract(old, delta) : PyNumber_Add(old, delta);
    Py_DECREF(old);
    if (new == NULL)
        return -1;
    if (now != NULL)
        *now = PyLong_AsSsize_t(new);
    int rc = PyObject_SetAttr(alloc, name, new);
    Py_DECREF(new);
    return rc;
}

/* The hit path of CachingAllocator.allocate: a cached small block of `size` in `home`.
   Returns 1 when it took one, 0 when the allocator must be asked, -1 on error. */
static int
take_cached(StorageObject *self, PyObject *alloc, PyObject *home, Py_ssize_t size)
{
    if (!PyDict_CheckExact(home))
        return 0; /* NO_FAST_PATH, a read-only mapping: nothing comes from it */
    PyObject *key = PyLong_FromSsize_t(size);
    if (key == NULL)
        return -1;
    PyObject *blocks = PyDict_GetItemWithError(home, key); /* borrowed */
    Py_ssize_t n;
    if (blocks == NULL || !PyList_CheckExact(blocks) || (n = PyList_GET_SIZE(blocks)) == 0) {
        Py_DECREF(key);
        return PyErr_Occurred() ? -1 : 0;
    }
    PyObject *entry = PyList_GET_ITEM(blocks, n - 1);
    Py_INCREF(entry);
    if (PyList_SetSlice(blocks, n - 1, n, NULL) < 0
        || !PyTuple_CheckExact(entry) || PyTuple_GET_SIZE(entry) != 2) {
        Py_DECREF(entry);
        Py_DECREF(key);
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_SystemError, "Storage: a malformed free-list entry");
        return -1;
    }
    self->handle = Py_NewRef(PyTuple_GET_ITEM(entry, 0));
    self->ptr = Py_NewRef(PyTuple_GET_ITEM(entry, 1));
    Py_DECREF(entry);
    self->size = key;
    self->home = Py_NewRef(home);
    Py_ssize_t allocated;
    if (add_counter(alloc, s_allocated, key, 0, &allocated) < 0)
        return -1;
    PyObject *peak = PyObject_GetAttr(alloc, s_peak);
    if (peak == NULL)
        return -1;
    Py_ssize_t peak_now = PyLong_AsSsize_t(peak);
    Py_DECREF(peak);
    if (allocated > peak_now) {
        PyObject *value = PyLong_FromSsize_t(allocated);
        if (value == NULL || PyObject_SetAttr(alloc, s_peak, value) < 0) {
            Py_XDECREF(value);
            return -1;
        }
        Py_DECREF(value);
    }
    self->alloc = Py_NewRef(alloc);
    return 1;
}

/* Storage(dev, nbytes): a block of `nbytes` or more on `dev`, from the current stream's
   free lists when one of that size is cached, else from the allocator. */
PyObject *
storage_create(PyTypeObject *type, PyObject *dev, Py_ssize_t nbytes)
{
    if (stream_home == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "Storage: ember._cstorage is not configured");
        return NULL;
    }
    if (nbytes < 0) {
        PyErr_Format(PyExc_ValueError, "Storage: negative size %zd bytes", nbytes);
        return NULL;
    }
    StorageObject *self = (StorageObject *)type->tp_alloc(type, 0);
    if (self == NULL)
        return NULL;
    self->nbytes = nbytes;
    PyObject *alloc = PyObject_GetAttr(dev, s_allocator);
    if (alloc == NULL)
        goto fail;
    /* Another name of a device ("cpu:0", "opencl") shares its placement's allocator: the
       memory belongs to the placement, which is the device the allocator serves. */
    self->device = PyObject_GetAttr(alloc, s_device);
    if (self->device == NULL) {
        Py_DECREF(alloc);
        goto fail;
    }
    dev = self->device;
    PyObject *home = PyObject_GetAttr(alloc, s_fast);
    if (home == Py_None) {
        /* A device whose pools are per stream: the current stream's free lists. */
        Py_DECREF(home);
        home = PyObject_CallFunctionObjArgs(stream_home, alloc, dev, NULL);
    }
    if (home == NULL) {
        Py_DECREF(alloc);
        goto fail;
    }
    int took = 0;
    if (nbytes < small_limit) {
        Py_ssize_t size = (nbytes + round_to - 1) & -round_to;
        took = take_cached(self, alloc, home, size ? size : round_to);
    }
    Py_DECREF(home);
    if (took == 0) {
        PyObject *n = PyLong_FromSsize_t(nbytes);
        PyObject *r = n ? PyObject_CallMethodObjArgs(alloc, s_allocate, self, n, NULL) : NULL;
        Py_XDECREF(n);
        if (r == NULL)
            took = -1;
        Py_XDECREF(r);
    }
    Py_DECREF(alloc);
    if (took < 0)
        goto fail;
    return (PyObject *)self;
fail:
    Py_DECREF(self);
    return NULL;
}

static PyObject *
storage_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    PyObject *dev;
    Py_ssize_t nbytes;
    static char *names[] = {"dev", "nbytes", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "On:Storage", names, &dev, &nbytes))
        return NULL;
    return storage_create(type, dev, nbytes);
}

/* The same without building an argument tuple: the call every op result makes. */
static PyObject *
storage_vectorcall(PyObject *type, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    if (kwnames != NULL || nargs != 2) {
        /* Keywords or a wrong count: the tuple path parses them (and words the error). */
        PyObject *tuple = PyTuple_New(nargs);
        PyObject *kwds = kwnames != NULL ? PyDict_New() : NULL;
        PyObject *result = NULL;
        if (tuple != NULL && (kwnames == NULL || kwds != NULL)) {
            for (Py_ssize_t i = 0; i < nargs; i++)
                PyTuple_SET_ITEM(tuple, i, Py_NewRef(args[i]));
            int ok = 1;
            for (Py_ssize_t i = 0; kwnames != NULL && i < PyTuple_GET_SIZE(kwnames); i++)
                if (PyDict_SetItem(kwds, PyTuple_GET_ITEM(kwnames, i), args[nargs + i]) < 0)
                    ok = 0;
            if (ok)
                result = storage_new((PyTypeObject *)type, tuple, kwds);
        }
        Py_XDECREF(tuple);
        Py_XDECREF(kwds);
        return result;
    }
    Py_ssize_t nbytes = PyLong_AsSsize_t(args[1]);
    if (nbytes == -1 && PyErr_Occurred())
        return NULL;
    return storage_create((PyTypeObject *)type, args[0], nbytes);
}

/* Storage.__del__: back into its free lists, or to the allocator's slow path. */
static void
storage_finalize(PyObject *op)
{
    StorageObject *self = (StorageObject *)op;
    PyObject *alloc = self->alloc;
    if (alloc == NULL || alloc == Py_None)
        return;
    PyObject *type, *value, *traceback;
    PyErr_Fetch(&type, &value, &traceback);
    Py_INCREF(alloc);
    PyObject *blocks = NULL;
    if (self->home != NULL && PyDict_CheckExact(self->home) && self->size != NULL)
        blocks = PyDict_GetItemWithError(self->home, self->size); /* borrowed */
    if (blocks != NULL && PyList_CheckExact(blocks)) {
        PyObject *entry = PyTuple_Pack(2, self->handle, self->ptr);
        if (entry == NULL || PyList_Append(blocks, entry) < 0
            || add_counter(alloc, s_allocated, self->size, 1, NULL) < 0)
            PyErr_WriteUnraisable(op);
        Py_XDECREF(entry);
    }
    else if (PyErr_Occurred()) {
        PyErr_WriteUnraisable(op);
    }
    else {
        PyObject *r = PyObject_CallMethodObjArgs(alloc, s_release, op, NULL);
        if (r == NULL)
            PyErr_WriteUnraisable(op);
        Py_XDECREF(r);
    }
    /* The block is the allocator's again: a resurrected storage must not free it twice. */
    Py_SETREF(self->alloc, Py_NewRef(Py_None));
    Py_DECREF(alloc);
    PyErr_Restore(type, value, traceback);
}

static void
storage_dealloc(PyObject *op)
{
    StorageObject *self = (StorageObject *)op;
    if (PyObject_CallFinalizerFromDealloc(op) < 0)
        return; /* resurrected */
    if (self->weakrefs != NULL)
        PyObject_ClearWeakRefs(op);
    Py_CLEAR(self->alloc);
    Py_CLEAR(self->block);
    Py_CLEAR(self->home);
    Py_CLEAR(self->owner);
    Py_CLEAR(self->device);
    Py_CLEAR(self->handle);
    Py_CLEAR(self->ptr);
    Py_CLEAR(self->size);
    Py_TYPE(op)->tp_free(op);
}

static PyObject *
storage_wrap(PyObject *cls, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    /* wrap(dev, handle, ptr, nbytes, owner), `owner` also by keyword. */
    PyObject *owner = nargs == 5 ? args[4] : NULL;
    if (kwnames != NULL) {
        if (nargs != 4 || PyTuple_GET_SIZE(kwnames) != 1
            || !PyUnicode_Check(PyTuple_GET_ITEM(kwnames, 0))
            || PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(kwnames, 0), "owner") != 0) {
            PyErr_SetString(PyExc_TypeError, "wrap() takes (dev, handle, ptr, nbytes, owner)");
            return NULL;
        }
        owner = args[4];
    }
    if (owner == NULL) {
        PyErr_Format(PyExc_TypeError, "wrap() takes 5 arguments (%zd given)", nargs);
        return NULL;
    }
    Py_ssize_t nbytes = PyLong_AsSsize_t(args[3]);
    if (nbytes == -1 && PyErr_Occurred())
        return NULL;
    PyTypeObject *type = (PyTypeObject *)cls;
    StorageObject *self = (StorageObject *)type->tp_alloc(type, 0);
    if (self == NULL)
        return NULL;
    self->device = Py_NewRef(args[0]);
    self->handle = Py_NewRef(args[1]);
    self->ptr = Py_NewRef(args[2]);
    self->owner = Py_NewRef(owner);
    self->alloc = Py_NewRef(Py_None);
    self->nbytes = nbytes;
    return (PyObject *)self;
}

static PyObject *
storage_record_stream(PyObject *op, PyObject *stream)
{
    PyObject *alloc = ((StorageObject *)op)->alloc;
    if (alloc == NULL || alloc == Py_None)
        Py_RETURN_NONE;
    return PyObject_CallMethodObjArgs(alloc, s_record_stream, op, stream, NULL);
}

static PyMethodDef storage_methods[] = {
    {"wrap", (PyCFunction)(void (*)(void))storage_wrap, METH_FASTCALL | METH_KEYWORDS | METH_CLASS,
     "A storage over memory that `owner` keeps alive (a NumPy array, a DLPack capsule)."},
    {"record_stream", storage_record_stream, METH_O,
     "Mark the memory as used by `stream`: once freed, it is reused only after the work\n"
     "enqueued on `stream` up to the free has completed."},
    {NULL},
};

static PyMemberDef storage_members[] = {
    {"_alloc", T_OBJECT_EX, offsetof(StorageObject, alloc), 0, NULL},
    {"_block", T_OBJECT_EX, offsetof(StorageObject, block), 0, NULL},
    {"_home", T_OBJECT_EX, offsetof(StorageObject, home), 0, NULL},
    {"_owner", T_OBJECT_EX, offsetof(StorageObject, owner), 0, NULL},
    {"_size", T_OBJECT_EX, offsetof(StorageObject, size), 0, NULL},
    {"device", T_OBJECT_EX, offsetof(StorageObject, device), 0, NULL},
    {"handle", T_OBJECT_EX, offsetof(StorageObject, handle), 0, NULL},
    {"ptr", T_OBJECT_EX, offsetof(StorageObject, ptr), 0, NULL},
    {"nbytes", T_PYSSIZET, offsetof(StorageObject, nbytes), 0, NULL},
    {"version", T_PYSSIZET, offsetof(StorageObject, version), 0, NULL},
    {NULL},
};

PyTypeObject StorageType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "ember.Storage",
    .tp_doc = "A device buffer plus the version counter that in-place ops bump.",
    .tp_basicsize = sizeof(StorageObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = storage_new,
    .tp_vectorcall = storage_vectorcall,
    .tp_dealloc = storage_dealloc,
    .tp_finalize = storage_finalize,
    .tp_weaklistoffset = offsetof(StorageObject, weakrefs),
    .tp_methods = storage_methods,
    .tp_members = storage_members,
};

static PyObject *
configure(PyObject *module, PyObject *args)
{
    (void)module;
    PyObject *lookup;
    Py_ssize_t limit, rounding;
    if (!PyArg_ParseTuple(args, "nnO:configure", &limit, &rounding, &lookup))
        return NULL;
    if (rounding <= 0 || (rounding & (rounding - 1)) != 0) {
        PyErr_Format(PyExc_ValueError, "configure: rounding %zd is not a power of two", rounding);
        return NULL;
    }
    small_limit = limit;
    round_to = rounding;
    Py_XSETREF(stream_home, Py_NewRef(lookup));
    Py_RETURN_NONE;
}

static PyMethodDef module_methods[] = {
    {"configure", configure, METH_VARARGS,
     "configure(small_limit, rounding, stream_home): the allocator's small-block limit and\n"
     "rounding, and stream_home(alloc, dev), the current stream's free lists."},
    {NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "ember._cstorage", "The Storage type's hot paths in C.", -1,
    module_methods,
};

PyMODINIT_FUNC
PyInit__cstorage(void)
{
    if (PyType_Ready(&StorageType) < 0)
        return NULL;
#define INTERN(var, text) if ((var = PyUnicode_InternFromString(text)) == NULL) return NULL
    INTERN(s_allocator, "_allocator");
    INTERN(s_fast, "fast");
    INTERN(s_allocated, "allocated");
    INTERN(s_peak, "peak_allocated");
    INTERN(s_allocate, "allocate");
    INTERN(s_release, "release");
    INTERN(s_record_stream, "record_stream");
    INTERN(s_device, "device");
#undef INTERN
    if (tensor_paths_init() < 0)
        return NULL;
    PyObject *module = PyModule_Create(&module_def);
    if (module == NULL)
        return NULL;
    if (PyModule_AddFunctions(module, tensor_path_methods) < 0 ||
        PyModule_AddObjectRef(module, "Storage", (PyObject *)&StorageType) < 0) {
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
