// The few atomic operations Stimpak's lock-free resolve path needs, on machine words that Swift allocates.
// Swift has no atomics that build on macOS 10.15 / iOS 13 without a package dependency, so these wrap the
// compiler's __atomic builtins (which the thread sanitizer understands). See ARCHITECTURE.md.
#ifndef C_STIMPAK_ATOMICS_H
#define C_STIMPAK_ATOMICS_H

#include <stdint.h>

static inline uintptr_t stimpak_load(const uintptr_t *_Nonnull word) {
    return __atomic_load_n(word, __ATOMIC_SEQ_CST);
}

static inline void stimpak_store(uintptr_t *_Nonnull word, uintptr_t value) {
    __atomic_store_n(word, value, __ATOMIC_SEQ_CST);
}

static inline void stimpak_store_release(uintptr_t *_Nonnull word, uintptr_t value) {
    __atomic_store_n(word, value, __ATOMIC_RELEASE);
}

static inline uintptr_t stimpak_load_relaxed(const uintptr_t *_Nonnull word) {
    return __atomic_load_n(word, __ATOMIC_RELAXED);
}

static inline void stimpak_store_relaxed(uintptr_t *_Nonnull word, uintptr_t value) {
    __atomic_store_n(word, value, __ATOMIC_RELAXED);
}

static inline uintptr_t stimpak_exchange(uintptr_t *_Nonnull word, uintptr_t value) {
    return __atomic_exchange_n(word, value, __ATOMIC_SEQ_CST);
}

#endif
