// The one thread-local variable the header's functions use, and the functions that must stay out of line.
#if defined(__linux__)
#define _GNU_SOURCE
#endif
#include <pthread.h>
#if defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#endif
#include "CStimpakAtomics.h"

STIMPAK_THREAD_LOCAL stimpak_thread_state stimpak_thread __attribute__((aligned(64)));

__attribute__((noinline))
void stimpak_section_exit(stimpak_thread_state *_Nonnull state) {
    if (state->nesting != 0) {
        state->nesting -= 1;
        return;
    }
    __atomic_store_n(&state->section, __atomic_load_n(&state->section, __ATOMIC_RELAXED) + 1, __ATOMIC_RELEASE);
}

uintptr_t stimpak_stack_limit(uintptr_t reserve) {
    uintptr_t low = 0, size = 0;
#if defined(__APPLE__)
    pthread_t self = pthread_self();
    uintptr_t high = (uintptr_t)pthread_get_stackaddr_np(self);  // the top: stacks grow down
    size = (uintptr_t)pthread_get_stacksize_np(self);
    low = high - size;
#elif defined(__linux__)
    pthread_attr_t attributes;
    if (pthread_getattr_np(pthread_self(), &attributes) != 0) return 0;
    void *address = 0;
    size_t bytes = 0;
    int err = pthread_attr_getstack(&attributes, &address, &bytes);
    pthread_attr_destroy(&attributes);
    if (err != 0) return 0;
    low = (uintptr_t)address;
    size = (uintptr_t)bytes;
#else
    return 0;
#endif
    if (size == 0) return 0;
    // A small stack keeps half of itself in reserve.
    if (reserve > size / 2) reserve = size / 2;
    return low + reserve;
}

int stimpak_is_main_thread(void) {
#if defined(__APPLE__)
    return pthread_main_np() != 0;
#elif defined(__linux__)
    return syscall(SYS_gettid) == getpid();
#else
    return 0;
#endif
}

// The runtime's check (Swift calling convention; the executor is two words). Flags 0: never stop the program.
typedef struct {
    const void *identity;
    uintptr_t implementation;
} stimpak_serial_executor;

extern __attribute__((swiftcall)) _Bool swift_task_isCurrentExecutorWithFlags(stimpak_serial_executor executor,
                                                                              uint64_t flags);

int stimpak_is_current_executor(const void *identity, uintptr_t implementation) {
    stimpak_serial_executor executor = {identity, implementation};
    return swift_task_isCurrentExecutorWithFlags(executor, 0);
}
