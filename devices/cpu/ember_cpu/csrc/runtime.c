/* Memory and threads of the CPU device.
 *
 * Large blocks are cached by size class and handed out again, so that an op allocating
 * a 64 MB result does not pay 16k page faults on every call. Small blocks go straight to
 * malloc, whose own arenas already recycle them cheaply.
 */
#include <omp.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "cblas.h"
#include "ember_cpu.h"

_Thread_local char em_error_message[256];

const char* em_last_error(void) { return em_error_message; }

#define EM_LARGE_BLOCK (1u << 20)        /* blocks from 1 MiB up are cached */
#define EM_ALIGN 64
#define EM_HUGE_PAGE ((size_t)2 << 20)
#define EM_CLASSES 64
#define EM_CACHE_LIMIT ((size_t)4 << 30)  /* never keep more than 4 GiB idle */

typedef struct em_block {
    struct em_block* next;
    size_t nbytes;
} em_block;

/* One free list per size class: class k holds blocks of exactly size_for_class(k). */
static em_block* free_lists[EM_CLASSES];
static size_t cached_bytes;
static int64_t cache_hits;
static int64_t raw_allocs;
static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;

/* Size classes: 1 MiB, then four classes per power of two (at most 25% waste). */
static size_t round_large(size_t n, int* klass) {
    size_t base = EM_LARGE_BLOCK;
    int k = 0;
    while (base * 2 <= n && k + 8 < EM_CLASSES) {
        base *= 2;
        k += 4;
    }
    if (n > 2 * base) {  /* beyond the largest class: not cached */
        *klass = -1;
        return n;
    }
    size_t quarter = base / 4;
    size_t steps = (n - base + quarter - 1) / quarter;
    if (steps > 4) steps = 4;
    *klass = k + (int)steps;
    return base + steps * quarter;
}

/* Large blocks start on a huge-page boundary and ask for transparent huge pages: streaming
 * kernels then take one TLB miss per 2 MiB instead of per 4 KiB (a 16M-element sum runs
 * ~40 GB/s instead of ~25 on a VM). Where THP is off the advice is simply ignored. */
static void* alloc_pages(size_t size) {
    void* p = NULL;
    size_t align = size >= EM_HUGE_PAGE ? EM_HUGE_PAGE : 4096;
    if (posix_memalign(&p, align, size) != 0) return NULL;
#ifdef MADV_HUGEPAGE
    if (size >= EM_HUGE_PAGE) madvise(p, size, MADV_HUGEPAGE);
#endif
    return p;
}

intptr_t em_alloc(size_t nbytes) {
    if (nbytes < EM_LARGE_BLOCK) {
        void* p = NULL;
        if (posix_memalign(&p, EM_ALIGN, nbytes ? nbytes : 1) != 0) return 0;
        return (intptr_t)p;
    }
    int k;
    size_t size = round_large(nbytes, &k);
    if (k < 0) return (intptr_t)malloc(nbytes);
    pthread_mutex_lock(&cache_lock);
    em_block* b = free_lists[k];
    if (b) {
        free_lists[k] = b->next;
        cached_bytes -= size;
        cache_hits++;
        pthread_mutex_unlock(&cache_lock);
        return (intptr_t)b;
    }
    raw_allocs++;
    pthread_mutex_unlock(&cache_lock);
    return (intptr_t)alloc_pages(size);
}

void em_free(intptr_t ptr, size_t nbytes) {
    if (!ptr) return;
    if (nbytes < EM_LARGE_BLOCK) {
        free((void*)ptr);
        return;
    }
    int k;
    size_t size = round_large(nbytes, &k);
    if (k < 0) {
        free((void*)ptr);
        return;
    }
    pthread_mutex_lock(&cache_lock);
    if (cached_bytes + size <= EM_CACHE_LIMIT) {
        em_block* b = (em_block*)ptr;
        b->next = free_lists[k];
        b->nbytes = size;
        free_lists[k] = b;
        cached_bytes += size;
        pthread_mutex_unlock(&cache_lock);
        return;
    }
    pthread_mutex_unlock(&cache_lock);
    free((void*)ptr);
}

void em_empty_cache(void) {
    pthread_mutex_lock(&cache_lock);
    for (int k = 0; k < EM_CLASSES; k++) {
        em_block* b = free_lists[k];
        while (b) {
            em_block* next = b->next;
            free(b);
            b = next;
        }
        free_lists[k] = NULL;
    }
    cached_bytes = 0;
    pthread_mutex_unlock(&cache_lock);
}

size_t em_cached_bytes(void) { return cached_bytes; }
int64_t em_cache_hits(void) { return cache_hits; }
int64_t em_raw_allocs(void) { return raw_allocs; }

static int thread_budget;  /* 0: OpenMP's default (OMP_NUM_THREADS or the core count) */

void em_set_num_threads(int n) {
    __atomic_store_n(&thread_budget, n, __ATOMIC_RELAXED);
    scipy_openblas_set_num_threads(n);
}

int em_threads(void) {
    int n = __atomic_load_n(&thread_budget, __ATOMIC_RELAXED);
    return n > 0 ? n : omp_get_max_threads();
}

int em_get_num_threads(void) { return em_threads(); }
