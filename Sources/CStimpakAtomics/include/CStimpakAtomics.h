// The few atomic operations Stimpak's lock-free resolve path needs, on machine words that Swift allocates,
// and the thread-local state of the resolve path.
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

static inline uintptr_t stimpak_load_relaxed(const uintptr_t *_Nonnull word) {
    return __atomic_load_n(word, __ATOMIC_RELAXED);
}

static inline void stimpak_store_relaxed(uintptr_t *_Nonnull word, uintptr_t value) {
    __atomic_store_n(word, value, __ATOMIC_RELAXED);
}

static inline uintptr_t stimpak_exchange(uintptr_t *_Nonnull word, uintptr_t value) {
    return __atomic_exchange_n(word, value, __ATOMIC_SEQ_CST);
}
static inline uintptr_t stimpak_fetch_add(uintptr_t *_Nonnull word, uintptr_t value) {
    return __atomic_fetch_add(word, value, __ATOMIC_SEQ_CST);
}
static inline uintptr_t stimpak_fetch_sub(uintptr_t *_Nonnull word, uintptr_t value) {
    return __atomic_fetch_sub(word, value, __ATOMIC_SEQ_CST);
}
static inline uint32_t stimpak_exchange32(uint32_t *_Nonnull word, uint32_t value) {
    return __atomic_exchange_n(word, value, __ATOMIC_ACQUIRE);
}
static inline void stimpak_store32(uint32_t *_Nonnull word, uint32_t value) {
    __atomic_store_n(word, value, __ATOMIC_RELEASE);
}
// Stores `desired` if the word holds `*expected` and returns 1; otherwise loads what it holds into `*expected`
// and returns 0. Seq-cst either way.
static inline int stimpak_compare_exchange(uintptr_t *_Nonnull word, uintptr_t *_Nonnull expected, uintptr_t desired) {
    return __atomic_compare_exchange_n(word, expected, desired, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
}

// The stack of scopes disposed while their container's lock was busy, whose detachment waits for a holder of
// that lock (DeferredDetach.swift): its top (a scope's `Unmanaged` bits, 0 when the stack is empty), then how
// many threads are detaching scopes they took from it.
extern uintptr_t stimpak_detach_words[2];

static inline uintptr_t *_Nonnull stimpak_detach_words_address(void) {
    return stimpak_detach_words;
}

// One thread's state on the resolve path, in thread-local storage so that finding it is a few
// instructions: the read-section counter (odd while inside; other threads read it atomically when they
// retire what readers may hold), the registrations being made (only this thread writes `depth` and `path`, with
// atomic stores; a writer reclaiming registrations reads them atomically: a transient's registration is
// pushed inside the read section that found it, and the path is what keeps it alive while its factory
// runs; `path` holds twice the maximum depth, the scope each factory runs for beside its registration,
// `maximum` entries further, which only this thread reads), and
// the thread's ResolutionContext (unretained; a pthread key holds the reference and releases it when
// the thread exits), the lowest stack address a resolution may start at (0 when the thread's stack
// bounds are unknown; the highest address while the thread has no context, and so no path to push on), how
// many sections are open inside the outermost one (a key's `==` or `hash` runs inside a section and may
// resolve), whether the context holds `.graph` instances (cleared when the outermost resolution ends), and
// the address of the scope the open section's resolve started from (its origin: it reads that scope's words and
// table, the registrations' words and the registry's table, and no other scope's), or `STIMPAK_ANY_ORIGIN` once a
// section nested in it started (it may read any scope's): a writer that retires what only one scope's resolves
// can reach reads it after the counter (see `stimpak_section_enter`).
// The first eight words are a cache line, so that two threads' counters don't share one. The ninth, on a line
// of its own, says whether the thread scans the registered threads' list without the lock (Reclamation.swift):
// 0 while the thread is not registered, 2 while it is and does not scan, 3 while it scans; only this thread
// writes it, and a thread that frees what a scan may read (an exiting thread's state, an outgrown list) waits
// for every registered thread's word to leave 3. The tenth, which only this thread reads and writes, is where
// its last scan found a thread inside a section: a reader the scheduler preempted inside one stays there for a
// time slice, so the next scan looks at it first. The eleventh, which only this thread reads and writes, says
// whether the synchronous resolve running at depth 0 is an `await` resolve's first attempt (which hands a wait
// for another thread's creation back, to suspend on, instead of blocking).
typedef struct stimpak_thread_state {
    uintptr_t section;
    uintptr_t depth;
    const void *_Nullable *_Nullable path;
    void *_Nullable context;
    uintptr_t stack_limit;
    uintptr_t nesting;
    uintptr_t has_graph;
    uintptr_t origin;
    uintptr_t scanning;
    uintptr_t scan_hint;
    uintptr_t serves_await;
} stimpak_thread_state;

#if defined(__linux__)
// initial-exec: a direct offset from the thread pointer, no __tls_get_addr call.
#define STIMPAK_THREAD_LOCAL __thread __attribute__((tls_model("initial-exec")))
#else
#define STIMPAK_THREAD_LOCAL __thread
#endif

extern STIMPAK_THREAD_LOCAL stimpak_thread_state stimpak_thread;

static inline stimpak_thread_state *_Nonnull stimpak_thread_get(void) {
    return &stimpak_thread;
}

// This thread's share of two counts that a wait reads: Reclamation's `dropping` (what it took to release and is
// releasing now) and DeferredDetach's `detaching` (1 while it detaches scopes it took). A deinit that such a
// release runs may call `Container.reclaim()`, which waits for the others' share only, not for its own caller.
extern STIMPAK_THREAD_LOCAL uintptr_t stimpak_own_counts[2];

static inline uintptr_t *_Nonnull stimpak_own_counts_address(void) {
    return stimpak_own_counts;
}

// The origin of a section in which a nested one started: no scope's address.
#define STIMPAK_ANY_ORIGIN ((uintptr_t)1)

// Enters the read section (the counter becomes odd) from the scope at `origin`, or counts a section nested in
// the open one: 0; or 1, having done neither, when the thread's counter is not registered yet. A thread's
// counter starts odd and is made even when its context registers it, so that the one test a section's entry
// makes anyway (is it odd?) also finds a thread to register (see `ReadSection.enter`).
//
// The origin is stored before the counter's seq-cst store, so a writer whose seq-cst load finds the counter odd
// then reads this section's origin (or a later one's, once this section is over). A nested section may start
// anywhere: its entry marks the section's origin as any with a seq-cst store before it reads, so that a writer
// whose scan read the outer origin either ran before that store in the seq-cst order (and what it unpublished
// before scanning is out of the nested section's reach) or reads the mark.
static inline __attribute__((always_inline)) int stimpak_section_enter(
    stimpak_thread_state *_Nonnull state, uintptr_t origin) {
    uintptr_t section = __atomic_load_n(&state->section, __ATOMIC_RELAXED);
    if (section & 1) {
        if (state->context == 0) return 1;
        state->nesting += 1;
        __atomic_store_n(&state->origin, STIMPAK_ANY_ORIGIN, __ATOMIC_SEQ_CST);
        return 0;
    }
    __atomic_store_n(&state->origin, origin, __ATOMIC_RELAXED);
    __atomic_store_n(&state->section, section + 1, __ATOMIC_SEQ_CST);
    return 0;
}

// Leaves the read section. Deliberately out of line (defined in CStimpakAtomics.c): to the Swift and LLVM
// optimizers it is a call that may release any object, so no retain of what the section read can be
// moved after it. An inline atomic store is no such barrier: the ARC optimizer once sank the retain of a
// cached instance past it, and a writer freed the instance in between (see ARCHITECTURE.md).
void stimpak_section_exit(stimpak_thread_state *_Nonnull state);

static inline uintptr_t stimpak_section_load(stimpak_thread_state *_Nonnull state) {
    return __atomic_load_n(&state->section, __ATOMIC_SEQ_CST);
}

// Whether the thread's open section (its counter was found odd) may read the table of the scope at `origin`: it
// started from that scope, or a section nested in it started.
static inline int stimpak_section_may_read(stimpak_thread_state *_Nonnull state, uintptr_t origin) {
    uintptr_t started = __atomic_load_n(&state->origin, __ATOMIC_SEQ_CST);
    return started == origin || started == STIMPAK_ANY_ORIGIN;
}

// This thread's scan word (see `stimpak_thread_state`): 0, 2 or 3.
static inline uintptr_t stimpak_scanning_load(stimpak_thread_state *_Nonnull state) {
    return __atomic_load_n(&state->scanning, __ATOMIC_SEQ_CST);
}

// Sets this thread's scan word: 3 before a scan (seq-cst, so that no load of the scan moves before it), 2 after
// (release: the scan's loads are done), and 2 or 0 as the thread is registered or unregistered.
static inline void stimpak_scanning_store(stimpak_thread_state *_Nonnull state, uintptr_t value) {
    __atomic_store_n(&state->scanning, value, value == 3 ? __ATOMIC_SEQ_CST : __ATOMIC_RELEASE);
}

// The lowest address this thread's stack may reach while `reserve` bytes are still left below it, or 0
// when the bounds are unknown.
uintptr_t stimpak_stack_limit(uintptr_t reserve);

// Whether the calling thread is the process's main thread (where Apple platforms run the main actor).
int stimpak_is_main_thread(void);

// Whether the calling code runs on the serial executor whose two words are `identity` and
// `implementation` (an `UnownedSerialExecutor`), asked of the Swift runtime in its mode that answers
// instead of stopping the program.
int stimpak_is_current_executor(const void *_Nullable identity, uintptr_t implementation);

// Pushes `registration` on the path, with `scope`, the scope its factory (or callback) runs for: 0, or 1 when
// it is already on it (a cycle), or 2 when the path already holds `maximum` registrations or the stack is down
// to its reserve, or the thread has no context, and so no path, yet (its `stack_limit` is then the highest
// address, so the stack check refuses). The scope is a plain store: only this thread reads it, while the entry
// is on the path.
static inline __attribute__((always_inline)) int stimpak_path_enter(stimpak_thread_state *_Nonnull state, const void *_Nonnull registration,
                                     const void *_Nonnull scope, uintptr_t maximum) {
    uintptr_t depth = state->depth;
    for (uintptr_t index = 0; index < depth; index++) {
        if (state->path[index] == registration) return 1;
    }
    if (depth >= maximum) return 2;
    if ((uintptr_t)__builtin_frame_address(0) < state->stack_limit) return 2;
    // Loaded once: a store through `path` could change `state->path` as far as the compiler knows.
    const void *_Nullable *_Nonnull path = state->path;
    path[maximum + depth] = scope;
    __atomic_store_n(&path[depth], registration, __ATOMIC_RELAXED);
    __atomic_store_n(&state->depth, depth + 1, __ATOMIC_RELEASE);
    return 0;
}

// Pops the innermost registration and returns the new depth. A release store: what this thread did with the
// registration happens before a reclaiming writer that sees it gone.
static inline __attribute__((always_inline)) uintptr_t stimpak_path_leave(stimpak_thread_state *_Nonnull state) {
    uintptr_t depth = state->depth - 1;
    __atomic_store_n(&state->depth, depth, __ATOMIC_RELEASE);
    return depth;
}

#if defined(__linux__)
// A mutex on one 32-bit word, for `Lock` on Linux, where a pthread mutex costs about 55 instructions a lock and
// unlock: the futex mutex of Ulrich Drepper's "Futexes Are Tricky" (mutex 3), as Rust's standard library has it.
// The word is 0 when unlocked, 1 when locked, 2 when locked and a thread may be asleep waiting for it. Locking
// is one compare-and-swap, unlocking one exchange; the kernel is asked only to sleep and to wake.
void stimpak_mutex_lock_contended(uint32_t *_Nonnull word);
void stimpak_mutex_wake(uint32_t *_Nonnull word);

static inline __attribute__((always_inline)) void stimpak_mutex_lock(uint32_t *_Nonnull word) {
    uint32_t unlocked = 0;
    if (__atomic_compare_exchange_n(word, &unlocked, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) return;
    stimpak_mutex_lock_contended(word);
}

// Takes the lock if it is free and returns 1; returns 0 at once if another thread holds it.
static inline __attribute__((always_inline)) int stimpak_mutex_trylock(uint32_t *_Nonnull word) {
    uint32_t unlocked = 0;
    return __atomic_compare_exchange_n(word, &unlocked, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED);
}

// Takes the lock if it is free, or becomes free while its holder runs (the word stays 1, nobody asleep) within a
// short spin, and returns 1; returns 0, without sleeping, once a thread sleeps on it or the spin is over.
int stimpak_mutex_trylock_briefly(uint32_t *_Nonnull word);

// Inline, and still a barrier to reference counting: Swift's LLVM ARC pass moves a retain down past a plain load
// or store (which is how it once sank a retain past an inline read-section exit), but stops at an atomic
// read-modify-write such as this exchange, so what the lock's holder retained stays retained before others run.
// Keep it an exchange: a plain release store here would let a retain of a guarded object sink past the unlock.
static inline __attribute__((always_inline)) void stimpak_mutex_unlock(uint32_t *_Nonnull word) {
    // 2: threads may be asleep; they are woken, and the one that takes the lock marks the word 2 again.
    if (__atomic_exchange_n(word, 0, __ATOMIC_RELEASE) == 2) stimpak_mutex_wake(word);
}
#endif

// Whether `registration` is on the path of `state`'s thread, which may be running: for a reclaiming writer.
static inline int stimpak_path_contains(stimpak_thread_state *_Nonnull state, const void *_Nonnull registration) {
    const void *_Nullable *_Nullable path = state->path;
    if (path == 0) return 0;
    uintptr_t depth = __atomic_load_n(&state->depth, __ATOMIC_ACQUIRE);
    for (uintptr_t index = 0; index < depth; index++) {
        if (__atomic_load_n(&path[index], __ATOMIC_RELAXED) == registration) return 1;
    }
    return 0;
}

#endif
