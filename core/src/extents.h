/* Describing a request: a list of extents (file offset, length, memory address).
 * Every raw-data path (driver vector, selection or typed call, and later the
 * VOL's whole H5Dwrite) is turned into this one form before it reaches the
 * aggregation layer (io.h). */
#ifndef TAGG_EXTENTS_H
#define TAGG_EXTENTS_H

#include <hdf5.h>
#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

typedef struct tagg_extent {
    uint64_t off; /* file offset in bytes */
    uint64_t len; /* length in bytes, > 0 */
    char    *mem; /* memory address of the first byte */
} tagg_extent_t;

typedef struct tagg_extents {
    tagg_extent_t *v;
    size_t         n, cap;
    uint64_t       bytes; /* sum of len */
    int            meta;  /* file metadata, not raw data (set by tagg_io_*) */
} tagg_extents_t;

void tagg_extents_init(tagg_extents_t *x);
void tagg_extents_free(tagg_extents_t *x);
void tagg_extents_reset(tagg_extents_t *x);
/* Appends, merging with the last extent when both file and memory continue it.
 * Zero lengths are skipped. Returns 0 or -1 (out of memory). */
int tagg_extents_push(tagg_extents_t *x, uint64_t off, uint64_t len, const void *mem);
/* Sorts by file offset, stable (of two writes to one offset the later stays later).
 * Returns 0 or -1 (out of memory). */
int tagg_extents_sort(tagg_extents_t *x);
/* True when no two extents overlap in the file (x must be sorted). */
int tagg_extents_disjoint(const tagg_extents_t *x);

/* From a pair of dataspace selections (HDF5 selection I/O): file_space's
 * selection, relative to file address base, with elements of elem_size bytes,
 * paired in order with mem_space's selection over buf. Returns 0 or -1 with an
 * error pushed. */
int tagg_extents_from_selection(tagg_extents_t *x, hid_t mem_space, hid_t file_space, uint64_t base,
                                size_t elem_size, const void *buf);

/* From an MPI-IO style transfer: count items of buf_type at buf, written through
 * the file view (disp, file_type), as HDF5 hands them to MPI-IO drivers when
 * selection I/O is off. Returns 0 or -1 with an error pushed. */
int tagg_extents_from_mpi_types(tagg_extents_t *x, uint64_t disp, MPI_Datatype file_type, const void *buf,
                                int count, MPI_Datatype buf_type);

#endif
