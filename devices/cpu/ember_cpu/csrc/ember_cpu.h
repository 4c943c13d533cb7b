/* Shared declarations of the ember-cpu kernels.
 *
 * Pointers cross the cffi boundary as intptr_t: Python keeps each storage's address as
 * an int, so a kernel call casts nothing per call (see DESIGN.md, "The hot-path budget").
 * Shapes and strides are in elements.
 */
#ifndef EMBER_CPU_H
#define EMBER_CPU_H

#include <stdint.h>
#include <stddef.h>

/* dtype codes: the runtime's ember.dtype.index values. */
enum {
    EM_BOOL = 0,
    EM_UINT8 = 1,
    EM_INT8 = 2,
    EM_INT32 = 3,
    EM_INT64 = 4,
    EM_FLOAT16 = 5,
    EM_FLOAT32 = 6,
    EM_FLOAT64 = 7,
};

#define EM_MAX_DIMS 16

/* Elementwise loops above this many elements are split across OpenMP threads. */
#define EM_PARALLEL_GRAIN 32768

typedef _Float16 em_half;

/* The intra-op thread budget set by ember.set_num_threads. Global, unlike OpenMP's own
 * setting, which is per calling thread; every parallel region asks for this many. */
int em_threads(void);

/* Error reporting: kernels that can fail (an index out of range) return non-zero and
 * leave a message here; the Python side raises it. */
extern _Thread_local char em_error_message[256];

#endif
