// The thread-local variables the header's functions use, and the functions that must stay out of line.
#if defined(__linux__)
#define _GNU_SOURCE
#endif
#include <pthread.h>
#if defined(__linux__)
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif
#include "CStimpakAtomics.h"

uintptr_t stimpak_detach_words[2] = {0, 0};

// The counter starts odd: not registered (see `stimpak_section_enter`); the stack limit starts at the highest
// address, so that a path push refuses until the context has made the path (see `stimpak_path_enter`).
STIMPAK_THREAD_LOCAL stimpak_thread_state stimpak_thread __attribute__((aligned(64))) = {
    .section = 1, .stack_limit = UINTPTR_MAX};

STIMPAK_THREAD_LOCAL uintptr_t stimpak_own_counts[2] = {0, 0};

__attribute__((noinline))
void stimpak_section_exit(stimpak_thread_state *_Nonnull state) {
    if (state->nesting != 0) {
        state->nesting -= 1;
        return;
    }
    __atomic_store_n(&state->section, __atomic_load_n(&state->section, __ATOMIC_RELAXED) + 1, __ATOMIC_RELEASE);
}

#if defined(__linux__)
static inline void stimpak_spin_hint(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

// The word's state once it is other than 1 (locked, nobody asleep), or after `count` spins: the container's
// critical sections are a few hundred instructions, often over before a thread would be put to sleep.
static uint32_t stimpak_mutex_spin(uint32_t *word, int count) {
    for (int spins = count;; spins--) {
        uint32_t state = __atomic_load_n(word, __ATOMIC_RELAXED);
        if (state != 1 || spins == 0) return state;
        stimpak_spin_hint();
    }
}

int stimpak_mutex_trylock_briefly(uint32_t *word) {
    // Twenty spins: about half a microsecond on the x86-64 machines measured (a pause is some 25 ns there), the
    // length of a critical section that missed in the cache a few times; a fifth of the lock's own spin.
    uint32_t state = stimpak_mutex_spin(word, 20);
    return state == 0 && __atomic_compare_exchange_n(word, &state, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED);
}

void stimpak_mutex_lock_contended(uint32_t *word) {
    uint32_t state = stimpak_mutex_spin(word, 100);
    if (state == 0) {
        if (__atomic_compare_exchange_n(word, &state, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) return;
        // `state` now holds what the word was.
    }
    for (;;) {
        // Taken as 2, not 1: this thread cannot know whether others sleep, so its unlock wakes one.
        if (state != 2 && __atomic_exchange_n(word, 2, __ATOMIC_ACQUIRE) == 0) return;
        // Sleeps only while the word is still 2 (the kernel compares it); a wake-up, a signal or a changed word
        // returns, and the loop tries again.
        syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, 2, (void *)0, (void *)0, 0);
        state = stimpak_mutex_spin(word, 100);
    }
}

// How many sleepers an unlock wakes: as many as there are cores, read once (0 until then).
static int stimpak_mutex_wake_count = 0;

// Wakes as many sleepers as there are cores. A woken thread runs only when the scheduler gives it a slice, so
// waking one at a time drains N sleepers in N slices (milliseconds each when threads outnumber cores); waking
// every sleeper makes them all runnable at once, and those beyond the cores can only lose the race to the ones
// running, each at a failed exchange, a FUTEX_WAIT and a context switch, while the unlocking thread pays for the
// wake-ups of all of them. A sleeper that is not woken is woken by the next unlock: whoever takes the lock after
// sleeping marks the word 2 again.
void stimpak_mutex_wake(uint32_t *word) {
    int count = __atomic_load_n(&stimpak_mutex_wake_count, __ATOMIC_RELAXED);
    if (count == 0) {
        long cores = sysconf(_SC_NPROCESSORS_ONLN);
        count = cores < 1 ? 1 : cores > 1024 ? 1024 : (int)cores;
        __atomic_store_n(&stimpak_mutex_wake_count, count, __ATOMIC_RELAXED);
    }
    syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, count, (void *)0, (void *)0, 0);
}
#endif

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
