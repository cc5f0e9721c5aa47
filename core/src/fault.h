/* Fault injection for tests (compiled in when TAGG_FAULT_INJECTION is defined,
 * which the CMake option of the same name does; off in release packages).
 *
 *   TAGG_FAULT="aggregator_write:rank=R[:after=N]"
 *     the (N+1)-th aggregator file write on rank R fails with EIO
 *   TAGG_FAULT="aggregator_read:rank=R[:after=N]"   likewise for reads
 *   TAGG_FAULT="direct_write:rank=R[:after=N]"  the (N+1)-th extent rank R writes itself
 *                                     (tagg_io_direct: direct and speculative calls) fails
 *   TAGG_FAULT="direct_read:rank=R[:after=N]"   likewise for reads
 *   TAGG_FAULT="nvr_alloc:rank=R"      the NVR tier's posix_fallocate reports ENOSPC on rank R
 *   TAGG_FAULT="tier_alloc:rank=R"     the test tier's memAlloc fails (out of space) on rank R
 *   TAGG_FAULT="tier_write:rank=R[:after=N]"  the test tier's (N+1)-th memWrite fails on rank R
 *   TAGG_FAULT="tier_read:rank=R[:after=N]"   likewise for memRead
 *   TAGG_FAULT="async_write:rank=R[:after=N]" asynchronous mode: the (N+1)-th staged
 *                                     write a worker thread executes on rank R fails
 *   TAGG_FAULT="wb_flush:rank=R[:after=N]"    the (N+1)-th write-out of the bytes kept behind
 *                                     (write_behind) on rank R fails
 *   TAGG_FAULT_ASYNC_DELAY_MS=N       asynchronous mode: a worker sleeps N ms before each job
 *                                     (a tiny staging pool then fills deterministically)
 *   TAGG_FAULT_ASYNC_LATE_MS=N        asynchronous mode: a worker whose own job failed (a fault
 *                                     above) sleeps N ms before recording the failure
 *   TAGG_FAULT_SYNC_DELAY_MS=N        a sync of a file (tagg_file_sync, a close with fsync=1)
 *                                     sleeps N ms on every rank before its agreement (the
 *                                     measured check's write windows charge it to the writes)
 */
#ifndef TAGG_FAULT_H
#define TAGG_FAULT_H

#include <stdbool.h>

/* True when the operation `op` on `rank` must fail now (counts calls). */
bool tagg_fault(const char *op, int rank);

/* Sleeps the milliseconds the environment variable `name` gives (the
 * TAGG_FAULT_ASYNC_*_MS switches above); nothing when unset, not a positive
 * number, or built without fault injection. */
void tagg_fault_sleep(const char *name);

#endif
