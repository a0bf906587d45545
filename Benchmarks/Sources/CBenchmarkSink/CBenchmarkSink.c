// Out of line in its own translation unit: the optimizer must assume the value is used.
#include "CBenchmarkSink.h"

__attribute__((noinline)) void stimpak_benchmark_sink(const void *_Nullable value) { (void)value; }

__attribute__((noinline)) void stimpak_benchmark_sink_int(intptr_t value) { (void)value; }

#if defined(__GLIBC__)
#include <malloc.h>
size_t stimpak_benchmark_allocated_bytes(void) { return mallinfo2().uordblks; }
#else
size_t stimpak_benchmark_allocated_bytes(void) { return 0; }
#endif
