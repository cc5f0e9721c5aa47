/* Write-behind: a rank's independent raw-data rewrites kept in its memory
 * until the next point where they must reach the store (write_behind=<bytes>).
 *
 * HDF5 turns some calls into runs of independent read-modify-writes of the
 * same bytes: a write of some members of a compound dataset (h5bench's
 * interleaved pattern, h5py's dset['x'] = ...) reads the records back
 * ("background"), sets the members and writes the records again, once per
 * member and per type-conversion buffer (1 MiB). Kept here, the later reads
 * are served from memory and the store sees each byte once, in large pieces.
 *
 * When HDF5's selection fits its conversion buffer, the read and the rewrite
 * are collective calls: file.c then asks every rank (io_write, tagg_io_read).
 *
 * Only such rewrites are kept: a write whose every piece lies in the ranges of
 * this rank's last raw read (independent or collective), with no write between. Any other
 * write goes through at once, after what is kept: HDF5 relies on that for
 * writes other ranks depend on (rank 0 writes a contiguous dataset's fill
 * values at creation, then every rank passes a barrier tagg cannot see).
 *
 * What is kept is written, in file order, before:
 *   - any metadata write and any collective call of this rank (so HDF5's
 *     order "raw data, then the metadata that points to it" holds for SWMR
 *     readers, and aggregators of a collective call read what the rank wrote),
 *   - the file's flush, size change and close (collective: their error
 *     agreement carries a failed write-out to every rank),
 *   - a write that would make it hold more than the limit.
 * Reads of this rank see it (the kept bytes overlay the store's). Other ranks
 * see it after one of the points above: MPI-IO's non-atomic consistency, which
 * HDF5 documents for parallel files (sync, barrier, sync). Off in atomic mode
 * (H5Fset_mpi_atomicity) and in asynchronous mode (which stages writes itself).
 * A failed write-out fails the call that made it; the bytes kept are dropped. */
#ifndef TAGG_WBEHIND_H
#define TAGG_WBEHIND_H

#include <stdint.h>

#include "extents.h"

typedef struct tagg_file tagg_file_t;
typedef struct tagg_wb   tagg_wb_t;

/* A rank's cache of at most limit bytes (> 0). NULL when out of memory. */
tagg_wb_t *tagg_wb_new(uint64_t limit);
/* Frees the cache and whatever it still holds (not written). */
void tagg_wb_free(tagg_wb_t *wb);
/* Bytes held. */
uint64_t tagg_wb_bytes(const tagg_wb_t *wb);

/* Notes the ranges of a raw-data read of this rank (the last
 * one counts). Returns 0 or -1 (no memory: nothing noted). */
int tagg_wb_note_read(tagg_wb_t *wb, const tagg_extents_t *x);
/* Any other read (collective, metadata): the next write is no rewrite. */
void tagg_wb_forget_read(tagg_wb_t *wb);
/* When every extent of x lies in a range of the last read noted (and no write
 * came between), keeps x's bytes (copied; later bytes over earlier ones) and returns 1.
 * Otherwise, or when x is larger than the limit, writes out what is kept and
 * returns 0: the caller writes x itself. -1 with an error pushed. */
int tagg_wb_write(tagg_file_t *f, const tagg_extents_t *x);
/* True when every extent of x lies inside what is kept (a read of x needs no
 * storage access). */
int tagg_wb_holds(const tagg_wb_t *wb, const tagg_extents_t *x);
/* Fills the parts of x's extents the cache holds and appends the rest, in
 * order, to `rest` (to be read from the store). Returns 0 or -1 (no memory). */
int tagg_wb_read(const tagg_wb_t *wb, const tagg_extents_t *x, tagg_extents_t *rest);
/* Writes everything held to the store (independently, in file order) and
 * empties the cache, also when the write fails; forgets the last read. Returns 0 or -1 with an error
 * pushed. */
int tagg_wb_flush(tagg_file_t *f);

#endif
