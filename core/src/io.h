/* The raw-data entry point of the aggregation layer, and the per-file object.
 *
 * Every byte the tagg VFD moves passes through tagg_io_write / tagg_io_read, as
 * a described request (extents.h). Below this point a backend (one ops table
 * per aggregation method, registry in file.c) decides who moves which bytes, and
 * a store (store.h, one ops table per layout) puts them in files. */
#ifndef TAGG_IO_H
#define TAGG_IO_H

#include "config.h"
#include "extents.h"
#include "store.h"

#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>

typedef enum { TAGG_META = 0, TAGG_RAW = 1 } tagg_kind_t;
typedef enum { TAGG_WRITE = 0, TAGG_READ = 1 } tagg_dir_t;

typedef struct tagg_stats {
    uint64_t bytes[2][2];   /* [dir][kind] */
    uint64_t calls[2][2];   /* [dir][kind]: driver calls that reached the layer */
    uint64_t coll_calls[2]; /* [dir]: of which collective */
    uint64_t extents[2];    /* [dir]: extents after merging */
    uint64_t aggr_calls[2]; /* [dir]: collective calls moved through aggregators (counted once, on rank 0) */
    /* asynchronous mode (async.h) */
    uint64_t staged_bytes;  /* copied into the staging pool */
    uint64_t staged_calls;
    uint64_t stalls;        /* writes that waited for space in the pool */
    uint64_t oversize;      /* writes larger than the pool, written synchronously */
    uint64_t drains;        /* operations that waited for the file's staged writes */
    uint64_t bg_failures;   /* staged writes that failed in the background */
    uint64_t nvr_opens;     /* destination=nvr: node-local subfiles this rank opened (all on its node) */
    uint64_t nvr_refused;   /* destination=nvr: accesses refused (another node's subfile) */
    uint64_t comp_logical;  /* compression: logical bytes of the whole stripes given to the codec */
    uint64_t comp_stored;   /* compression: the bytes stored for them (raw when they did not shrink) */
    uint64_t comp_stripes;  /* compression: of those stripes, how many are stored compressed */
    uint64_t comp_raw;      /* compression: ... and how many raw */
    /* write-behind (wbehind.h); its write-outs count above as raw write calls */
    uint64_t wb_calls;      /* raw rewrites kept in memory (independent, or collective: then counted per rank) */
    uint64_t wb_bytes;      /* ... their bytes */
    uint64_t wb_read_bytes; /* bytes of reads served from what was kept */
    uint64_t wb_flushes;    /* write-outs of what was kept */
    uint64_t wb_coll_kept;  /* collective raw writes kept on every rank (no I/O) */
    uint64_t wb_coll_read;  /* collective raw reads served from what every rank kept */
    /* layout=subfiles, the close of a writer (rank 0, which merges the notes) */
    uint64_t sf_composed;   /* stripe checksums composed from the writers' changes */
    uint64_t sf_reread;     /* stripes read back for their checksum */
    uint64_t sf_pre_read;   /* bytes of a new file read back before a rewrite of them (their checksum) */
    /* layout=subfiles, reads of a read-only open (verify=1) */
    uint64_t sf_verified;   /* stripes read whole and checked, the first time a rank read them */
    uint64_t sf_from_copy;  /* reads served from the rank's verified copy of the stripe they lie in */
    uint64_t sf_blocks;     /* format 4: blocks read and checked for reads of part of a stripe */
    uint64_t sf_shared;     /* read-only opens: stripe 0 received checked from rank 0 (tagg_sub_share_first) */
    /* direct_io (dio.h): bytes moved with O_DIRECT, [0] read, [1] written; of them, through
     * the bounce buffer (the memory not aligned as the file offset) [2] read, [3] written */
    uint64_t dio_bytes[4];
    /* layout=shared, read-only opens with direct_io (rcache.h): [0] reads served from a kept
     * cover, [1] covers read */
    uint64_t rc_reads[2];
    /* independent metadata writes left out: the same bytes this rank had written there (md_echo.h) */
    uint64_t md_echoes;
    /* layout=shared, backend=tapioca: the ranks' own handles of the file (file_io),
     * [0] POSIX descriptors, [1] MPI-IO handles, [2] the POSIX descriptors opened
     * early (tagg_store_shared_early_fd: while rank 0 looks at the path) */
    uint64_t handles[3];
    /* backend=tapioca, overlap=1: aggregator rounds whose file access ran on the
     * helper thread while the rank made the next round's transfers (engine_move.c) */
    uint64_t overlapped;
} tagg_stats_t;

typedef struct tagg_file  tagg_file_t;
typedef struct tagg_async tagg_async_t; /* async.c */

/* One aggregation method. Functions return 0 or -1 with an error pushed. open
 * and close are collective (after the store opened, before it closes); write
 * and read are collective when `collective` is true. Independent calls may go
 * straight to the store. */
typedef struct tagg_backend_ops {
    const char *name;
    int (*open)(tagg_file_t *f);
    /* Optional, collective: once every rank's open is known and the
     * configuration agreed, before the store opens (ok: this rank's open
     * succeeded; what one rank reads for all, the tuning model). 0, or -1 on
     * every rank with an error pushed; the caller then closes what opened. */
    int (*open_shared)(tagg_file_t *f, int ok);
    int (*close)(tagg_file_t *f);
    int (*write)(tagg_file_t *f, const tagg_extents_t *x, bool collective);
    int (*read)(tagg_file_t *f, const tagg_extents_t *x, bool collective);
    /* Optional: extra "key=value ..." fields for the per-file summary. */
    void (*describe)(const tagg_file_t *f, char *buf, size_t len);
    /* Optional, local: after a collective call's error agreement (rc, the same
     * on every rank), when every rank has finished its part of the call. */
    void (*done)(tagg_file_t *f, tagg_dir_t dir, int rc);
    /* Optional, local: after a sync of the file (tagg_file_sync), or the
     * storage part of its close (write-behind flush, sync, the store's close,
     * before the backend's close), agreed (rc, the same on every rank); seconds
     * from its start to its agreement. */
    void (*synced)(tagg_file_t *f, double seconds, int rc);
} tagg_backend_ops_t;

struct tagg_file {
    char                     *path;
    MPI_Comm                  comm; /* duplicate, errors return */
    MPI_Info                  info;
    int                       rank, size;
    tagg_config_t             cfg;
    const tagg_backend_ops_t *ops;
    void                     *backend; /* the backend's own state */
    const tagg_store_ops_t   *store_ops;
    void                     *store; /* the layout's own state */
    uint64_t                  eof;     /* file size all ranks agree on (open, set_size) */
    uint64_t                  written_end; /* end of the highest byte this rank handed to tagg_io_write */
    unsigned                  flags;   /* TAGG_OPEN_* the file was opened with */
    tagg_stats_t              stats;
    tagg_async_t             *async;          /* asynchronous mode, NULL when synchronous */
    struct tagg_wb           *wb;             /* write-behind (wbehind.h), NULL when off */
    struct tagg_md_echo      *echo;           /* metadata echoes (md_echo.h), NULL until the first write */
    int                       wb_coll;         /* the last collective call, for collective rewrites
                                                * (file.c; the same on every rank) */
    int                       async_fallback;  /* async=1 asked for, MPI lacks MPI_THREAD_MULTIPLE */
    int                       io_meta;         /* the request being moved is file metadata (set by tagg_io_*) */
    int                       io_failed;       /* this rank failed the collective request before the backend
                                                  (set by tagg_io_exec): its row says so */
    int                       io_agreed;       /* set by a backend whose collective call already agreed on its
                                                  outcome with every rank: tagg_io_exec then skips its agreement */
    int                       size_everywhere; /* the store's get_size is local knowledge: every rank asks, max */
    int                       seen; /* rank 0: what it found at the path just before the store's open (one stat and
                                     * the index probe): 0 not known, 1 nothing, 2 a plain file, 3 a subfile index */
    char                     *seen_text; /* with seen 3: the index's text as rank 0 read it then (NULL: not read) */
    size_t                    seen_len;
    int                       seen_fd; /* rank 0, read-only opens with seen 2: the probe's read-only descriptor of
                                        * the file (a store may keep it: set -1; else closed after its open) */
    int                       atomic;          /* MPI atomic mode (H5Fset_mpi_atomicity): no write is staged */
    unsigned                  comp_codec;      /* layout=subfiles: the codec of this open's whole-stripe writes
                                                * (sf_stripe_codec.h id, 0 none; compression=auto: rank 0's choice) */
    unsigned                  fs_view;         /* tagg_file_fs_view: this rank's view, read once */
    int                       fs_view_read;
};

/* HDF5-style open flags, translated by the caller (vfd) into these. */
#define TAGG_OPEN_RDWR 0x1u
#define TAGG_OPEN_CREAT 0x2u
#define TAGG_OPEN_EXCL 0x4u
#define TAGG_OPEN_TRUNC 0x8u
#define TAGG_OPEN_SWMR_READ 0x10u /* a reader of a file another process writes (HDF5's SWMR): every read from storage */

/* Collective. Takes copies of comm/info/cfg. On failure every rank returns NULL
 * with an error pushed. */
tagg_file_t *tagg_file_open(const char *path, unsigned flags, MPI_Comm comm, MPI_Info info,
                            const tagg_config_t *cfg);
/* Collective: the plugins' open. Takes comm over (the file frees it, or the
 * open on failure); copies info. The configuration comes from env (the TAGG_*
 * environment, tagg_config_env_string) and str (the driver's configuration
 * string), rank 0's counting; local_rc < 0: this rank failed before (an error
 * pushed), every rank fails. Two reductions and the store's open when every
 * rank holds the same strings (file.c). NULL on every rank on failure. */
tagg_file_t *tagg_file_open_config(const char *path, unsigned flags, MPI_Comm comm, MPI_Info info, const char *env,
                                   const char *str, int local_rc);
/* Collective: the configuration from rank 0's env and str on every rank
 * (broadcast, agreed); 0, or -1 on every rank with cfg cleared. */
int tagg_config_from_rank0(MPI_Comm comm, const char *env, const char *str, tagg_config_t *cfg);
/* Collective: prints/appends the summary (rank 0), closes, frees. */
int tagg_file_close(tagg_file_t *f);
/* Collective: makes the file exactly size bytes if it is not; updates eof. */
int tagg_file_set_size(tagg_file_t *f, uint64_t size);
/* Collective: rank 0 asks the storage, every rank gets the same answer. */
int tagg_file_get_size(tagg_file_t *f, uint64_t *size);
/* Collective: flush to storage. */
int tagg_file_sync(tagg_file_t *f);
/* MPI atomic mode (H5Fset_mpi_atomicity, h5py File.atomic). Local: the caller
 * calls it on every rank (the HDF5 call is collective). In atomic mode a write
 * has reached the file on every rank it touched before the call returns: writes
 * staged by async=1 land first and no new write is staged; collective writes
 * complete on their aggregators inside the call, as always. tagg keeps no
 * client-side cache, so a read ordered after that write (by the application's
 * own synchronisation) sees it, in both layouts. */
void tagg_file_set_atomic(tagg_file_t *f, int flag);

/* Collective: removes a file in the layout cfg names (H5Fdelete). */
int tagg_file_delete(const char *path, MPI_Comm comm, MPI_Info info, const tagg_config_t *cfg);

/* Independent: each extent straight to the store, in order. */
int tagg_io_direct(tagg_file_t *f, const tagg_extents_t *x, tagg_dir_t dir);

/* The entry point. x may be reordered (sorted). When collective, every rank calls
 * and every rank gets the same result (an error on one rank fails all). */
int tagg_io_write(tagg_file_t *f, tagg_extents_t *x, tagg_kind_t kind, bool collective);
int tagg_io_read(tagg_file_t *f, tagg_extents_t *x, tagg_kind_t kind, bool collective);

/* The synchronous path of tagg_io_write/tagg_io_read, also run by the worker
 * threads of the asynchronous mode: local_rc < 0 makes this rank take part in a
 * collective call with nothing and fail it (an error already pushed). */
int tagg_io_exec(tagg_file_t *f, tagg_extents_t *x, tagg_kind_t kind, bool collective, tagg_dir_t dir,
                 int local_rc);

/* Agreement: every rank passes its local rc (0 or -1); returns 0 when all
 * succeeded, else -1 on every rank, with an error naming the first failing rank
 * pushed on the ranks that did not fail themselves. */
int tagg_agree(MPI_Comm comm, int local_rc, const char *what);

/* Has fn run in MPI_Finalize (a delete callback on MPI_COMM_SELF, every rank
 * being there), registered once per *keyval (MPI_KEYVAL_INVALID before the
 * first call), and keeps the library holding tagg mapped until then (HDF5
 * unloads plugins at H5close). 0 when fn will run, -1 when it will not. */
int tagg_at_finalize(MPI_Comm_delete_attr_function *fn, int *keyval);

/* The file system under the file's directory as this rank sees it
 * (fs_kind.h tagg_fs_view: kind | TAGG_FS_SERIAL | TAGG_FS_ROTATIONAL), from the mount table
 * the first time it is asked for (the engine's describe rows, the layouts'
 * direct_io), then kept. Subfiles beside the index share its directory. */
unsigned tagg_file_fs_view(tagg_file_t *f);

/* Formats the one-line per-file summary (already reduced over ranks). */
int tagg_summary_format(const tagg_file_t *f, const tagg_stats_t *total, char *buf, size_t len);

extern const tagg_backend_ops_t tagg_backend_mpiio;
extern const tagg_backend_ops_t tagg_backend_tapioca;

#endif
