/* Reading and finding __slots__ from C, as the interpreter's own LOAD_ATTR on a slot does
   (PyObject_GetAttr on a slot costs three times more): shared by _cstorage.c and
   _cdispatch.c. */
#ifndef EMBER_CSLOTS_H
#define EMBER_CSLOTS_H

#include <Python.h>
#include <structmember.h>

/* The object in the slot at `offset` of `obj` (NULL when unset); borrowed. */
#define SLOT(obj, offset) (*(PyObject **)((char *)(obj) + (offset)))

/* The offset of the object slot `name` of instances of `type` (a __slots__ member), or -1
   with a TypeError. */
static inline Py_ssize_t
slot_offset(PyObject *type, const char *name)
{
    PyObject *descr = PyObject_GetAttrString(type, name);
    if (descr == NULL)
        return -1;
    Py_ssize_t offset = -1;
    if (Py_IS_TYPE(descr, &PyMemberDescr_Type)) {
        PyMemberDef *member = ((PyMemberDescrObject *)descr)->d_member;
        if (member->type == T_OBJECT_EX || member->type == T_OBJECT)
            offset = member->offset;
    }
    Py_DECREF(descr);
    if (offset < 0)
        PyErr_Format(PyExc_TypeError, "%R.%s is not an object slot", type, name);
    return offset;
}

#endif
