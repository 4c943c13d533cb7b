/* What _cstorage.c and _ctensor.c, the two halves of ember._cstorage, share. */
#ifndef EMBER_CSTORAGE_H
#define EMBER_CSTORAGE_H

#include <Python.h>

#define EMBER_HIDDEN __attribute__((visibility("hidden")))

/* The Storage type (_cstorage.c), and a new storage of `nbytes` on `dev` from the caching
   allocator's hit path. */
extern EMBER_HIDDEN PyTypeObject StorageType;
EMBER_HIDDEN PyObject *storage_create(PyTypeObject *type, PyObject *dev, Py_ssize_t nbytes);

/* The tensor paths' module functions and their one-time setup (_ctensor.c). */
extern EMBER_HIDDEN PyMethodDef tensor_path_methods[];
EMBER_HIDDEN int tensor_paths_init(void);

#endif
