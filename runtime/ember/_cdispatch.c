/* ember._cdispatch: the call of a custom op (ember.library.custom_op) in C.

   A custom op's call is a Python function generated for its parameters (library/_call.py)
   that does everything: argument and device checks, the meta step, kernel lookup,
   autograd, version counters. This type is its fast path, for the calls that need none
   of the slow parts: positional arguments only, every tensor parameter given an
   `ember.Tensor` outside autograd, all on one device, and (with a fake) a meta-step key
   already checked. Then it looks the kernel up and calls it, as the Python function
   would, for ~0.2 us instead of ~0.5; any other call goes to the Python function
   unchanged, so the two can never disagree on what a call means.
*/

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>

#include "_cslots.h"

enum { PARAM_TENSOR = 0, PARAM_VALUE = 1 };

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    PyObject *dict;      /* the op's attributes: name, schema, register_kernel, ... */
    PyObject *fallback;  /* the generated Python call: every case */
    PyObject *op;        /* the dispatch Op: `kernels` maps device type -> kernel */
    PyObject *default_;  /* the default implementation, or None */
    PyObject *checked;   /* the meta step's checked keys (a dict) */
    PyObject *tensor;    /* ember.Tensor: only exact tensors take the fast path */
    PyObject *device;    /* ember.device */
    char *kinds;         /* per parameter: PARAM_TENSOR or PARAM_VALUE */
    /* Where the __slots__ the fast path reads live in their objects, read as the
       interpreter's own LOAD_ATTR on a slot does (PyObject_GetAttr costs 3x more). */
    Py_ssize_t off_device, off_autograd, off_shape, off_dtype, off_kernels, off_type;
    Py_ssize_t nparams;
    int fast;            /* 0: every call goes to the fallback */
    int use_key;         /* the op has a fake: a call's key must be in `checked` */
} OpCall;



/* The meta step's key, as the Python call builds it: (shape, dtype) per tensor, the
   value of every other parameter. NULL with an exception, or NULL and *unusable when a
   value cannot be part of a key (the fallback then decides). */
static PyObject *
call_key(OpCall *self, PyObject *const *args, int *unusable)
{
    Py_ssize_t size = 0;
    for (Py_ssize_t i = 0; i < self->nparams; i++)
        size += self->kinds[i] == PARAM_TENSOR ? 2 : 1;
    PyObject *key = PyTuple_New(size);
    if (key == NULL)
        return NULL;
    Py_ssize_t k = 0;
    for (Py_ssize_t i = 0; i < self->nparams; i++) {
        if (self->kinds[i] == PARAM_TENSOR) {
            PyObject *shape = SLOT(args[i], self->off_shape);
            PyObject *dtype = SLOT(args[i], self->off_dtype);
            if (shape == NULL || dtype == NULL) {
                Py_DECREF(key);
                *unusable = 1;
                return NULL;
            }
            PyTuple_SET_ITEM(key, k++, Py_NewRef(shape));
            PyTuple_SET_ITEM(key, k++, Py_NewRef(dtype));
        }
        else {
            PyTuple_SET_ITEM(key, k++, Py_NewRef(args[i]));
        }
    }
    if (PyObject_Hash(key) == -1) {
        Py_DECREF(key);
        if (!PyErr_ExceptionMatches(PyExc_TypeError))
            return NULL;
        PyErr_Clear();
        *unusable = 1;
        return NULL;
    }
    return key;
}

/* The kernel of `dev`'s type, else the default implementation; a new reference, or NULL
   (no exception) when there is neither. */
static PyObject *
kernel_of(OpCall *self, PyObject *dev)
{
    PyObject *kernels = SLOT(self->op, self->off_kernels);
    PyObject *type = SLOT(dev, self->off_type);
    if (kernels == NULL || type == NULL || !PyDict_CheckExact(kernels))
        return NULL;
    PyObject *fn = PyDict_GetItemWithError(kernels, type); /* borrowed */
    if (fn != NULL)
        return Py_NewRef(fn);
    if (!PyErr_Occurred() && self->default_ != Py_None)
        return Py_NewRef(self->default_);
    return NULL;
}

static PyObject *
opcall_vectorcall(PyObject *callable, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    OpCall *self = (OpCall *)callable;
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    if (!self->fast || kwnames != NULL || nargs != self->nparams)
        goto fallback;
    PyObject *dev = NULL; /* borrowed from the first tensor, which keeps it alive */
    for (Py_ssize_t i = 0; i < nargs; i++) {
        if (self->kinds[i] != PARAM_TENSOR)
            continue;
        if (Py_TYPE(args[i]) != (PyTypeObject *)self->tensor)
            goto fallback;
        if (SLOT(args[i], self->off_autograd) != Py_None)
            goto fallback; /* in autograd (or an unset slot): the Python call records */
        PyObject *d = SLOT(args[i], self->off_device);
        if (dev == NULL)
            dev = d;
        else if (d != dev)
            goto fallback;
    }
    if (dev == NULL || Py_TYPE(dev) != (PyTypeObject *)self->device)
        goto fallback;
    if (self->use_key) {
        int unusable = 0;
        PyObject *key = call_key(self, args, &unusable);
        if (key == NULL) {
            if (unusable)
                goto fallback;
            return NULL;
        }
        int found = PyDict_Contains(self->checked, key);
        Py_DECREF(key);
        if (found < 0)
            return NULL;
        if (!found)
            goto fallback;
    }
    PyObject *fn = kernel_of(self, dev);
    if (fn == NULL) {
        if (PyErr_Occurred())
            return NULL;
        goto fallback; /* no kernel: the fallback says so */
    }
    PyObject *result = PyObject_Vectorcall(fn, args, nargs, NULL);
    Py_DECREF(fn);
    return result;
fallback:
    return PyObject_Vectorcall(self->fallback, args, nargsf, kwnames);
}

static PyObject *
opcall_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    PyObject *fallback, *op, *default_, *checked, *tensor, *device, *kinds;
    int fast;
    static char *names[] = {"fallback", "op", "default", "checked", "tensor", "device",
                            "kinds", "fast", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OOOO!O!O!O!p:OpCall", names, &fallback, &op,
                                     &default_, &PyDict_Type, &checked, &PyType_Type, &tensor,
                                     &PyType_Type, &device, &PyTuple_Type, &kinds, &fast))
        return NULL;
    Py_ssize_t offsets[6] = {
        slot_offset(tensor, "_device"), slot_offset(tensor, "_autograd"),
        slot_offset(tensor, "_shape"), slot_offset(tensor, "_dtype"),
        slot_offset((PyObject *)Py_TYPE(op), "kernels"), slot_offset(device, "type"),
    };
    for (int i = 0; i < 6; i++)
        if (offsets[i] < 0)
            return NULL;
    Py_ssize_t n = PyTuple_GET_SIZE(kinds);
    char *codes = PyMem_Malloc(n ? (size_t)n : 1);
    if (codes == NULL)
        return PyErr_NoMemory();
    for (Py_ssize_t i = 0; i < n; i++) {
        long code = PyLong_AsLong(PyTuple_GET_ITEM(kinds, i));
        if (code != PARAM_TENSOR && code != PARAM_VALUE) {
            PyMem_Free(codes);
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_ValueError, "OpCall: kinds are 0 (tensor) or 1 (value)");
            return NULL;
        }
        codes[i] = (char)code;
    }
    OpCall *self = (OpCall *)type->tp_alloc(type, 0);
    if (self == NULL) {
        PyMem_Free(codes);
        return NULL;
    }
    self->vectorcall = opcall_vectorcall;
    self->fallback = Py_NewRef(fallback);
    self->op = Py_NewRef(op);
    self->default_ = Py_NewRef(default_);
    self->checked = Py_NewRef(checked);
    self->tensor = Py_NewRef(tensor);
    self->device = Py_NewRef(device);
    self->off_device = offsets[0];
    self->off_autograd = offsets[1];
    self->off_shape = offsets[2];
    self->off_dtype = offsets[3];
    self->off_kernels = offsets[4];
    self->off_type = offsets[5];
    self->kinds = codes;
    self->nparams = n;
    self->fast = fast;
    return (PyObject *)self;
}

static int
opcall_traverse(OpCall *self, visitproc visit, void *arg)
{
    Py_VISIT(self->dict);
    Py_VISIT(self->fallback);
    Py_VISIT(self->op);
    Py_VISIT(self->default_);
    Py_VISIT(self->checked);
    Py_VISIT(self->tensor);
    Py_VISIT(self->device);
    return 0;
}

static int
opcall_clear(OpCall *self)
{
    Py_CLEAR(self->dict);
    Py_CLEAR(self->fallback);
    Py_CLEAR(self->op);
    Py_CLEAR(self->default_);
    Py_CLEAR(self->checked);
    Py_CLEAR(self->tensor);
    Py_CLEAR(self->device);
    return 0;
}

static void
opcall_dealloc(OpCall *self)
{
    PyObject_GC_UnTrack(self);
    opcall_clear(self);
    PyMem_Free(self->kinds);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *
opcall_repr(OpCall *self)
{
    PyObject *name = self->dict ? PyDict_GetItemString(self->dict, "name") : NULL;
    if (name == NULL)
        return PyUnicode_FromString("<ember custom op>");
    return PyUnicode_FromFormat("<ember custom op %S>", name);
}

static PyMemberDef opcall_members[] = {
    {"fallback", T_OBJECT, offsetof(OpCall, fallback), READONLY, "the Python call"},
    {"use_key", T_INT, offsetof(OpCall, use_key), 0, "whether calls check the meta key"},
    {NULL},
};

static PyGetSetDef opcall_getset[] = {
    {"__dict__", PyObject_GenericGetDict, PyObject_GenericSetDict, NULL, NULL},
    {NULL},
};

static PyTypeObject OpCallType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "ember.library.CustomOp",
    .tp_doc = "A custom op: call it as the function it was defined from.",
    .tp_basicsize = sizeof(OpCall),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_new = opcall_new,
    .tp_dealloc = (destructor)opcall_dealloc,
    .tp_traverse = (traverseproc)opcall_traverse,
    .tp_clear = (inquiry)opcall_clear,
    .tp_repr = (reprfunc)opcall_repr,
    .tp_call = PyVectorcall_Call,
    .tp_vectorcall_offset = offsetof(OpCall, vectorcall),
    .tp_dictoffset = offsetof(OpCall, dict),
    .tp_getattro = PyObject_GenericGetAttr,
    .tp_setattro = PyObject_GenericSetAttr,
    .tp_members = opcall_members,
    .tp_getset = opcall_getset,
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "ember._cdispatch", "The fast path of a custom op's call.", -1,
    NULL, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC
PyInit__cdispatch(void)
{
    if (PyType_Ready(&OpCallType) < 0)
        return NULL;
    PyObject *module = PyModule_Create(&module_def);
    if (module == NULL)
        return NULL;
    if (PyModule_AddObjectRef(module, "OpCall", (PyObject *)&OpCallType) < 0) {
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
