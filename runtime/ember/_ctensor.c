/* The per-op tensor paths of ember._cstorage (the module is built from _cstorage.c and
   this file): `empty_tensor`, the allocation of every op result; `make_view`, every view's
   result; `is_contiguous`; and `exact_ints`, the common case of size arguments. Each
   replaces Python that ran on every op: slot stores and small loops cost microseconds in
   the interpreter and tenths of one here. */

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "_cslots.h"
#include "_cstorage.h"

/* What `configure_tensor` sets: the Tensor type, its layout memo, and where its slots are. */
static PyTypeObject *tensor_type = NULL;
static PyObject *layout_cache = NULL; /* shape -> (numel, contiguous strides) */
static PyObject *layout_of = NULL;    /* contiguous_layout(shape), which fills the memo */
static Py_ssize_t off_storage, off_offset, off_shape, off_strides, off_dtype, off_device,
    off_contiguous, off_autograd;
static PyObject *s_itemsize, *zero;


static void
set_slot(PyObject *obj, Py_ssize_t offset, PyObject *value)
{
    PyObject *old = SLOT(obj, offset);
    SLOT(obj, offset) = Py_NewRef(value);
    Py_XDECREF(old);
}

/* empty_tensor(shape, dtype, device): a new contiguous tensor over fresh memory, as
   `object.__new__(Tensor)` then setting its slots would make it, in ~0.1 us instead of
   ~0.5. */
static PyObject *
empty_tensor(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    (void)module;
    if (nargs != 3) {
        PyErr_Format(PyExc_TypeError, "empty_tensor takes 3 arguments (%zd given)", nargs);
        return NULL;
    }
    if (tensor_type == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "empty_tensor: the Tensor type is not configured");
        return NULL;
    }
    PyObject *shape = args[0], *dtype = args[1], *dev = args[2];
    PyObject *layout = PyDict_GetItemWithError(layout_cache, shape);
    if (layout != NULL)
        Py_INCREF(layout);
    else if (PyErr_Occurred() || (layout = PyObject_CallOneArg(layout_of, shape)) == NULL)
        return NULL;
    if (!PyTuple_CheckExact(layout) || PyTuple_GET_SIZE(layout) != 2) {
        Py_DECREF(layout);
        PyErr_SetString(PyExc_SystemError, "empty_tensor: a malformed layout");
        return NULL;
    }
    PyObject *tensor = NULL, *storage = NULL;
    PyObject *item = PyObject_GetAttr(dtype, s_itemsize);
    Py_ssize_t numel = PyLong_AsSsize_t(PyTuple_GET_ITEM(layout, 0));
    Py_ssize_t itemsize = item ? PyLong_AsSsize_t(item) : -1;
    Py_XDECREF(item);
    if ((numel == -1 || itemsize == -1) && PyErr_Occurred())
        goto done;
    storage = storage_create(&StorageType, dev, numel * itemsize);
    if (storage == NULL)
        goto done;
    tensor = tensor_type->tp_alloc(tensor_type, 0);
    if (tensor == NULL)
        goto done;
    set_slot(tensor, off_storage, storage);
    set_slot(tensor, off_offset, zero);
    set_slot(tensor, off_shape, shape);
    set_slot(tensor, off_strides, PyTuple_GET_ITEM(layout, 1));
    set_slot(tensor, off_dtype, dtype);
    set_slot(tensor, off_device, dev);
    set_slot(tensor, off_contiguous, Py_True);
    set_slot(tensor, off_autograd, Py_None);
done:
    Py_XDECREF(storage);
    Py_DECREF(layout);
    return tensor;
}

/* Whether (shape, strides) is row-major dense: PyTorch's is_contiguous, as the Python
   loop it replaces (~1.5 us there for a 4-d tensor on this kind of machine). 1, 0, or -1
   with an exception. */
static int
dense_geometry(PyObject *shape, PyObject *strides)
{
    if (!PyTuple_Check(shape) || !PyTuple_Check(strides)) {
        PyErr_SetString(PyExc_TypeError, "is_contiguous: shape and strides must be tuples");
        return -1;
    }
    Py_ssize_t n = PyTuple_GET_SIZE(shape);
    if (PyTuple_GET_SIZE(strides) != n) {
        PyErr_Format(PyExc_ValueError, "is_contiguous: %zd sizes but %zd strides", n,
                     PyTuple_GET_SIZE(strides));
        return -1;
    }
    Py_ssize_t sizes[64];
    if (n > 64) {
        PyErr_SetString(PyExc_ValueError, "is_contiguous: more than 64 dimensions");
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        sizes[i] = PyNumber_AsSsize_t(PyTuple_GET_ITEM(shape, i), PyExc_OverflowError);
        if (sizes[i] == -1 && PyErr_Occurred())
            return -1;
        if (sizes[i] == 0)
            return 1; /* an empty tensor is contiguous whatever its strides */
    }
    Py_ssize_t step = 1;
    int overflowed = 0; /* step beyond any stride: the next non-1 dim cannot match */
    for (Py_ssize_t i = n - 1; i >= 0; i--) {
        if (sizes[i] == 1)
            continue;
        /* clipped, not raised, beyond 64 bits: such a stride is no dense step anyway */
        Py_ssize_t stride = PyNumber_AsSsize_t(PyTuple_GET_ITEM(strides, i), NULL);
        if (stride == -1 && PyErr_Occurred())
            return -1;
        if (overflowed || stride != step)
            return 0;
        if (__builtin_mul_overflow(step, sizes[i], &step))
            overflowed = 1;
    }
    return 1;
}

static PyObject *
is_contiguous(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    (void)module;
    if (nargs != 2) {
        PyErr_Format(PyExc_TypeError, "is_contiguous takes 2 arguments (%zd given)", nargs);
        return NULL;
    }
    int dense = dense_geometry(args[0], args[1]);
    if (dense < 0)
        return NULL;
    return PyBool_FromLong(dense);
}

/* exact_ints(args): the tuple of sizes in `args` (f(2, 3) or f((2, 3)) or f([2, 3])) when
   every one is an exact int, else None (the caller's Python path then converts __index__
   objects and words the errors). */
static PyObject *
exact_ints(PyObject *module, PyObject *args)
{
    (void)module;
    PyObject *items = args;
    if (PyTuple_Check(items) && PyTuple_GET_SIZE(items) == 1 &&
        (PyTuple_Check(PyTuple_GET_ITEM(items, 0)) || PyList_Check(PyTuple_GET_ITEM(items, 0))))
        items = PyTuple_GET_ITEM(items, 0);
    if (PyList_Check(items)) {
        for (Py_ssize_t i = 0; i < PyList_GET_SIZE(items); i++)
            if (!PyLong_CheckExact(PyList_GET_ITEM(items, i)))
                Py_RETURN_NONE;
        return PyList_AsTuple(items);
    }
    if (!PyTuple_Check(items))
        Py_RETURN_NONE;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(items); i++)
        if (!PyLong_CheckExact(PyTuple_GET_ITEM(items, i)))
            Py_RETURN_NONE;
    if (PyTuple_CheckExact(items))
        return Py_NewRef(items);
    return PyTuple_GetSlice(items, 0, PyTuple_GET_SIZE(items)); /* a Size: a plain tuple */
}

/* make_view(base, offset, shape, strides): a Tensor over base's storage with new geometry
   and no autograd metadata, as the eight slot stores in Python would make it. */
static PyObject *
make_view(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    (void)module;
    if (nargs != 4) {
        PyErr_Format(PyExc_TypeError, "make_view takes 4 arguments (%zd given)", nargs);
        return NULL;
    }
    if (tensor_type == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "make_view: the Tensor type is not configured");
        return NULL;
    }
    PyObject *base = args[0];
    if (!PyObject_TypeCheck(base, tensor_type)) {
        PyErr_Format(PyExc_TypeError, "make_view: base must be a Tensor, not %s",
                     Py_TYPE(base)->tp_name);
        return NULL;
    }
    PyObject *storage = SLOT(base, off_storage), *dtype = SLOT(base, off_dtype),
             *dev = SLOT(base, off_device);
    if (storage == NULL || dtype == NULL || dev == NULL) {
        PyErr_SetString(PyExc_AttributeError, "make_view: base has no storage, dtype or device");
        return NULL;
    }
    int dense = dense_geometry(args[2], args[3]);
    if (dense < 0)
        return NULL;
    PyObject *tensor = tensor_type->tp_alloc(tensor_type, 0);
    if (tensor == NULL)
        return NULL;
    set_slot(tensor, off_storage, storage);
    set_slot(tensor, off_offset, args[1]);
    set_slot(tensor, off_shape, args[2]);
    set_slot(tensor, off_strides, args[3]);
    set_slot(tensor, off_dtype, dtype);
    set_slot(tensor, off_device, dev);
    set_slot(tensor, off_contiguous, dense ? Py_True : Py_False);
    set_slot(tensor, off_autograd, Py_None);
    return tensor;
}

static PyObject *
configure_tensor(PyObject *module, PyObject *args)
{
    (void)module;
    PyObject *type, *cache, *layout;
    if (!PyArg_ParseTuple(args, "O!O!O:configure_tensor", &PyType_Type, &type, &PyDict_Type,
                          &cache, &layout))
        return NULL;
    Py_ssize_t offsets[8];
    const char *names[8] = {"_storage", "_offset", "_shape", "_strides",
                            "_dtype", "_device", "_contiguous", "_autograd"};
    for (int i = 0; i < 8; i++)
        if ((offsets[i] = slot_offset(type, names[i])) < 0)
            return NULL;
    off_storage = offsets[0];
    off_offset = offsets[1];
    off_shape = offsets[2];
    off_strides = offsets[3];
    off_dtype = offsets[4];
    off_device = offsets[5];
    off_contiguous = offsets[6];
    off_autograd = offsets[7];
    Py_XSETREF(tensor_type, (PyTypeObject *)Py_NewRef(type));
    Py_XSETREF(layout_cache, Py_NewRef(cache));
    Py_XSETREF(layout_of, Py_NewRef(layout));
    Py_RETURN_NONE;
}

PyMethodDef tensor_path_methods[] = {
    {"empty_tensor", (PyCFunction)(void (*)(void))empty_tensor, METH_FASTCALL,
     "empty_tensor(shape, dtype, device): a new contiguous tensor over fresh memory."},
    {"make_view", (PyCFunction)(void (*)(void))make_view, METH_FASTCALL,
     "make_view(base, offset, shape, strides): a view of base's storage, no autograd."},
    {"is_contiguous", (PyCFunction)(void (*)(void))is_contiguous, METH_FASTCALL,
     "is_contiguous(shape, strides): whether the geometry is row-major dense."},
    {"exact_ints", exact_ints, METH_O,
     "exact_ints(args): args (or its one sequence) as a tuple when all exact ints, else None."},
    {"configure_tensor", configure_tensor, METH_VARARGS,
     "configure_tensor(Tensor, layout_cache, contiguous_layout): what empty_tensor builds."},
    {NULL},
};

int
tensor_paths_init(void)
{
    if ((s_itemsize = PyUnicode_InternFromString("itemsize")) == NULL)
        return -1;
    if ((zero = PyLong_FromLong(0)) == NULL)
        return -1;
    return 0;
}
