// The comparison's sink: an opaque call that receives a result without retaining it, so that the optimizer
// can't delete the work that made the result and the sink adds no retain, release or store of its own.
#ifndef C_BENCHMARK_SINK_H
#define C_BENCHMARK_SINK_H

#include <stddef.h>
#include <stdint.h>

void stimpak_benchmark_sink(const void *_Nullable value);
void stimpak_benchmark_sink_int(intptr_t value);


// Bytes the allocator has handed out and not taken back (glibc's mallinfo2().uordblks; 0 elsewhere).
size_t stimpak_benchmark_allocated_bytes(void);

#endif
