/* Storage layouts: where the bytes of the HDF5 address space end up.
 *
 * One ops table per layout, registry in file.c, chosen by the config key
 * `layout`. The aggregation layer (backends) only ever calls pwrite/pread with
 * HDF5 addresses; a layout maps them to its files. Functions return 0 or -1
 * with an error pushed on the HDF5 stack; those marked collective are called by
 * every rank of the file's communicator, in the same order. */
#ifndef TAGG_STORE_H
#define TAGG_STORE_H

#include "config.h"

#include <mpi.h>
#include <stdint.h>

typedef struct tagg_file tagg_file_t;

typedef struct tagg_store_ops {
    const char *name;
    /* Collective. flags: TAGG_OPEN_* (io.h). Sets f->store. */
    int (*open)(tagg_file_t *f, unsigned flags);
    /* Collective. Writes whatever the layout keeps beside the data (an index),
     * closes, frees f->store. */
    int (*close)(tagg_file_t *f);
    /* Independent, any rank, any offset: the whole range or an error. */
    int (*pwrite)(tagg_file_t *f, uint64_t off, uint64_t len, const void *buf);
    /* Independent; bytes past the end of the data read as zeros. */
    int (*pread)(tagg_file_t *f, uint64_t off, uint64_t len, void *buf);
    /* Optional (NULL: pread): a read of the application's own extent (an
     * independent call, a direct access of a collective one; not an
     * aggregator's round), which the layout may serve from what it keeps of
     * the open's earlier reads (the shared layout's rcache.h). */
    int (*pread_extent)(tagg_file_t *f, uint64_t off, uint64_t len, void *buf);
    /* Optional (NULL: pwrite, pread): an aggregator's access in one round of
     * a collective call that holds all of the round's data, which the layout
     * judges as `as` bytes (the call's round, as >= len) where it chooses
     * between buffered and direct access by size (direct_io_min: dio.h
     * tagg_dio_access_as), so that every aggregator of the call moves its
     * rounds the same way: a domain a little shorter than the others is not
     * buffered while theirs go direct. */
    int (*round_access)(tagg_file_t *f, int write, uint64_t off, uint64_t len, void *buf, uint64_t as);
    /* Local (the file layer calls it on rank 0 and broadcasts): logical size. */
    int (*get_size)(tagg_file_t *f, uint64_t *size);
    /* Collective: makes the logical size exactly size. */
    int (*set_size)(tagg_file_t *f, uint64_t size);
    /* Collective: data written so far reaches storage. */
    int (*sync)(tagg_file_t *f);
    /* Collective: removes a file of this layout (H5Fdelete). */
    int (*del)(const char *path, MPI_Comm comm, MPI_Info info, const tagg_config_t *cfg);
    /* The unit (bytes) the layout stores contiguously and that file domains
     * should be aligned to; 0 when any alignment will do. */
    uint64_t (*stripe)(const tagg_file_t *f);
    /* Optional (NULL: 0): the unit (bytes) of which this layout reads a
     * rank's first read of it whole, whatever part the read asks (the subfile
     * layout checks a stripe against its recorded checksum), 0 when reads read
     * what they ask. The same on every rank: the call plan prices a direct
     * read by it (tagg_call_in.read_unit). */
    uint64_t (*read_unit)(const tagg_file_t *f);
    /* Optional (NULL: none): the block size in which this rank moves large
     * writes (write 1) or reads (0) with O_DIRECT (direct_io, dio.h), 0 when
     * it does not. From the configuration and the mount table, at open: the
     * engine agrees on it over the ranks before the call plan aligns rounds
     * to it. */
    uint64_t (*dio_block)(const tagg_file_t *f, int write);
    /* Optional (NULL: nothing): this rank is about to write [off, off + len)
     * of the address space in several requests (an aggregator's domain of a
     * write call, round by round): the layout may allocate its storage now,
     * in one piece (dio.h tagg_dio_reserve). An advice: no error, no MPI
     * call, no change of the file's size or bytes. */
    void (*reserve)(tagg_file_t *f, uint64_t off, uint64_t len);
    /* Optional (NULL: one): how many files the raw data is spread over; one
     * means every aggregator writes the same file (a client that serialises
     * a file's writes then serialises them all: tagg_call_in.one_file). */
    uint32_t (*files)(const tagg_file_t *f);
    /* Optional (NULL, or returns -1 for i = 0: any rank may access any byte).
     * For layouts whose stripes only some ranks can reach (node-local
     * subfiles): the i-th rank (ascending) allowed to access the stripe holding
     * address off, or -1 past the last. Collective requests then get one file
     * domain per stripe, aggregated by an allowed rank (engine_plan.c). */
    int (*owner)(const tagg_file_t *f, uint64_t off, int i);
    /* Optional, with owner: how many consecutive stripes one collective pass
     * may cover so that every stripe gets its own allowed aggregator. */
    int (*owner_window)(const tagg_file_t *f);
    /* Optional (NULL: no): this rank's pwrite and pread make POSIX calls
     * only, never an MPI call, so that the round loop may run them on its
     * helper thread while the calling thread makes MPI calls (overlap=1,
     * iothread.h; MPI may run at MPI_THREAD_SERIALIZED). */
    int (*posix_only)(const tagg_file_t *f);
    /* Optional (NULL: cannot tell): bytes of [off, off + len) the node's page
     * cache holds, asked through this rank's handle (pagecache.h), for records
     * and tuning (tagg/tune.h resident), and *flight: bytes it holds that
     * readahead is still reading (tune.h in_flight; 0 when it cannot tell).
     * 0 and both, or -1 when it cannot tell (no handle open on this rank, no
     * way to ask); never an MPI call. */
    int (*resident)(tagg_file_t *f, uint64_t off, uint64_t len, uint64_t *bytes, uint64_t *flight);
} tagg_store_ops_t;

extern const tagg_store_ops_t tagg_store_shared;
extern const tagg_store_ops_t tagg_store_subfiles;

/* The shared layout's MPI file handle (for the mpiio backend's collective
 * views). Only valid when f's layout is "shared". */
MPI_File tagg_store_shared_fh(const tagg_file_t *f);
/* A rank other than 0, before the open's first reduction (file.c): its
 * POSIX descriptor of an existing shared-layout file, opened early (see
 * store_shared.c), or -1. */
int tagg_store_shared_early_fd(tagg_file_t *f, unsigned flags);

#endif
