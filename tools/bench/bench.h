/* tagg-bench: I/O kernels (1D array, HACC-IO, S3D-IO, after the MA-TAPIOCA paper,
 * ../shared/seeds/002_*) written and read through HDF5's public API, run on several
 * file drivers ("variants") side by side.
 *
 * Two tables hold everything that varies:
 *   - kernels (kernels.c: bench_kernels[]): what is written, how it is laid out,
 *     how it is checked;
 *   - variants (variants.c: bench_variant_kinds[]): which driver the file-access
 *     list names and which transfer mode the dataset transfers use.
 * The driver loop (bench.c) combines them; it knows neither kernels nor drivers. */
#ifndef TAGG_BENCH_H
#define TAGG_BENCH_H

#include <hdf5.h>
#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#define BENCH_MSG 512 /* length of error messages, also the "unavailable: <reason>" text */
#define BENCH_MAX_VARIANTS 16

/* ------------------------------------------------------------------ options */

typedef enum { DIST_UNIFORM = 0, DIST_RANDOM, DIST_NORMAL } bench_dist_t;
typedef enum { LAYOUT_AOS = 0, LAYOUT_SOA } bench_layout_t;
/* How reads are kept away from the page cache (--read-cache). */
typedef enum { CACHE_DROP = 0, CACHE_FADVISE, CACHE_NONE } bench_cache_t;

typedef struct bench_opts {
    const char *kernel;      /* --kernel */
    char        variants[1024]; /* --variants, comma-separated (default: all) */
    int         reps;        /* --reps */
    int         rotate;      /* --rotate: each repetition starts this many variants later (default 1) */
    const char *dir;         /* --dir */
    int         keep;        /* --keep */
    const char *csv;         /* --csv */
    int         verify;      /* 0 with --no-verify */
    int         fsync;       /* --fsync */
    const char *tagg_config; /* --tagg-config (for tagg-shared) */
    const char *extra[BENCH_MAX_VARIANTS]; /* --extra-tagg NAME=CONFIG, as given */
    int         n_extra;
    int         per_node;    /* --files per-node */
    uint64_t    seed;        /* --seed */
    int64_t     subfiling_stripe; /* --subfiling-stripe (bytes, 0: HDF5's default) */
    int         timesteps;   /* --timesteps: writes per file, one group "step<t>" each when > 1 */
    double      compute;     /* --compute: seconds of emulated computation before each timestep */
    bench_cache_t read_cache; /* --read-cache: what happens between the write and the read phase */
    const char   *drop_file;  /* --drop-caches-file (default /proc/sys/vm/drop_caches; tests name another) */
    /* array1d */
    bench_dist_t dist;       /* --dist */
    uint64_t     size;       /* --size: uniform size, or upper bound of random */
    double       mean, sd;   /* --mean, --sd (normal), bytes */
    /* hacc */
    uint64_t       particles; /* --particles per rank */
    bench_layout_t layout;    /* --layout */
    /* s3d */
    uint64_t grid[3]; /* --grid NX NY NZ per rank */
    int      vars;    /* --vars */
    /* columns */
    uint64_t rows;    /* --rows per rank */
    uint64_t cols;    /* --cols in all */
} bench_opts_t;

/* ------------------------------------------------------------------ kernels */

/* What a kernel sees. comm is the communicator of the file this rank writes (the
 * world, or the ranks of its node with --files per-node). */
typedef struct bench_ctx {
    const bench_opts_t *opts;
    MPI_Comm            comm;
    int                 rank, size;     /* in comm */
    int                 wrank, wsize;   /* in MPI_COMM_WORLD */
    uint64_t            bytes;          /* raw bytes this rank writes (set by setup) */
    unsigned char      *wbuf, *rbuf;    /* bytes each: what is written, what is read back */
    void               *state;          /* the kernel's own (freed by the driver) */
} bench_ctx_t;

/* Every function returns 0, or -1 with a message in err. They are called on every
 * rank of ctx->comm; write and read are collective (they create/open datasets).
 * setup allocates ctx->wbuf and ctx->rbuf (ctx->bytes each; the driver frees them)
 * and fills wbuf with the kernel's pattern, in the memory layout the kernel
 * writes from and reads into: verification compares rbuf with wbuf, byte by byte. */
typedef struct bench_kernel {
    const char *name;
    const char *help;
    int (*setup)(bench_ctx_t *ctx, char *err, size_t len);
    int (*write)(bench_ctx_t *ctx, hid_t file, hid_t dxpl, char *err, size_t len);
    int (*read)(bench_ctx_t *ctx, hid_t file, hid_t dxpl, char *err, size_t len);
    void (*describe)(const bench_ctx_t *ctx, char *buf, size_t len); /* one line for the report */
} bench_kernel_t;

extern const bench_kernel_t *const bench_kernels[]; /* NULL-terminated (kernels.c) */
extern const bench_kernel_t bench_kernel_array1d, bench_kernel_hacc, bench_kernel_s3d, bench_kernel_columns,
    bench_kernel_vpic;

/* Kernel helpers (kernels.c). A 1D dataset `name` of `total` elements of `type`,
 * this rank's part [off, off + count) from/to buf; collective when dxpl says so. */
int bench_write_1d(hid_t file, const char *name, hid_t type, uint64_t total, uint64_t off, uint64_t count,
                   hid_t dxpl, const void *buf, char *err, size_t len);
int bench_read_1d(hid_t file, const char *name, hid_t type, uint64_t off, uint64_t count, hid_t dxpl, void *buf,
                  char *err, size_t len);
/* Allocates ctx->wbuf and ctx->rbuf of ctx->bytes (at least 1) each. */
int bench_alloc_buffers(bench_ctx_t *ctx, char *err, size_t len);
/* Offset of this rank's part (sum over lower ranks of comm) and the total. */
void bench_offsets(MPI_Comm comm, uint64_t mine, uint64_t *off, uint64_t *total);

/* ------------------------------------------------------------------ variants */

typedef struct bench_variant bench_variant_t;

/* One kind of driver. make_fapl fills a file-access list for comm; fsync asks for
 * a driver-level sync at close (only the write side asks: a sync on a file opened
 * read-only fails in ROMIO). Returns 0, or -1 with the reason in err (the variant
 * is then unavailable). */
typedef struct bench_variant_kind {
    const char *kind;
    int (*make_fapl)(const bench_variant_t *v, const bench_opts_t *o, MPI_Comm comm, int fsync, hid_t fapl,
                     char *err, size_t len);
} bench_variant_kind_t;

struct bench_variant {
    char                        name[64];
    const bench_variant_kind_t *kind;
    H5FD_mpio_xfer_t            xfer;        /* independent or collective transfers */
    char                        config[512]; /* tagg configuration string */
    const char                 *meaning;     /* one line for --help */
};

/* Builds the list of variants the options ask for (defaults, then --extra-tagg),
 * in order. Returns the count, or -1 with a message. */
int bench_variants_select(const bench_opts_t *o, bench_variant_t *out, int max, char *err, size_t len);
/* Prints the variant table for --help. */
void bench_variants_help(void);

/* ------------------------------------------------------------------ helpers (util.c) */

/* Parses "123", "4K", "16M", "2G" (binary units). Returns 0, or -1. */
int      bench_parse_size(const char *s, uint64_t *out);
/* splitmix64: the pattern generator; stateless so any element can be recomputed. */
uint64_t bench_mix(uint64_t x);
/* Message from the HDF5 error stack (innermost description first), for "unavailable". */
void     bench_h5_reason(char *buf, size_t len);
/* The end of a dataset access: the reason of a failure (rc < 0), closes the
 * dataset (its failure fails rc) and the two dataspaces (any may be < 0). */
int      bench_h5_finish(int rc, hid_t d, hid_t ms, hid_t fs, char *err, size_t len);
/* Removes every entry of dir whose name starts with prefix (files, and one level of
 * directories). Returns how many it removed. */
int      bench_remove_prefix(const char *dir, const char *prefix);
double   bench_median(double *v, int n); /* sorts v */
/* Evicts every file of dir whose name starts with prefix (one level of
 * directories too) from this node's page cache: fsync, then
 * posix_fadvise(POSIX_FADV_DONTNEED). Returns how many files it evicted, or -1
 * with a message when one could not be. */
int      bench_evict_prefix(const char *dir, const char *prefix, char *err, size_t len);

#endif
