// The header's functions are static inline; this file defines the one thread-local variable they use.
#include "CStimpakAtomics.h"

STIMPAK_THREAD_LOCAL stimpak_thread_state stimpak_thread __attribute__((aligned(64)));
