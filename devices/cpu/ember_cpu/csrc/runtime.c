/* Memory and threads of the CPU device.
 *
 * em_alloc/em_free are the raw allocation calls behind the runtime's caching allocator
 * (runtime/ember/_allocator.py), which keeps freed blocks and carves large ones from
 * segments; nothing is cached here, so the allocator's statistics are the whole truth.
 */
#include <omp.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "cblas.h"
#include "ember_cpu.h"

_Thread_local char em_error_message[256];

const char* em_last_error(void) { return em_error_message; }

#define EM_ALIGN 64
#define EM_HUGE_PAGE ((size_t)2 << 20)

/* Blocks of 2 MiB and more start on a huge-page boundary and ask for transparent huge
 * pages: streaming kernels then take one TLB miss per 2 MiB instead of per 4 KiB (a
 * 16M-element sum runs ~40 GB/s instead of ~25 on a VM). Where THP is off the advice is
 * simply ignored. */
intptr_t em_alloc(size_t nbytes) {
    void* p = NULL;
    size_t align = nbytes >= EM_HUGE_PAGE ? EM_HUGE_PAGE : EM_ALIGN;
    if (posix_memalign(&p, align, nbytes ? nbytes : 1) != 0) return 0;
#ifdef MADV_HUGEPAGE
    if (nbytes >= EM_HUGE_PAGE) madvise(p, nbytes, MADV_HUGEPAGE);
#endif
    return (intptr_t)p;
}

void em_free(intptr_t ptr, size_t nbytes) {
    (void)nbytes;
    free((void*)ptr);
}

static int thread_budget;  /* 0: OpenMP's default (OMP_NUM_THREADS or the core count) */

void em_set_num_threads(int n) {
    __atomic_store_n(&thread_budget, n, __ATOMIC_RELAXED);
    scipy_openblas_set_num_threads(n);
    /* Kernels outside this extension (ember_cpu.load_inline's) open plain `omp parallel`
       regions, which take the calling thread's OpenMP default: make it the budget too. */
    if (n > 0) omp_set_num_threads(n);
}

int em_threads(void) {
    int n = __atomic_load_n(&thread_budget, __ATOMIC_RELAXED);
    return n > 0 ? n : omp_get_max_threads();
}

int em_get_num_threads(void) { return em_threads(); }
