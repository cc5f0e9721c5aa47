/* Private to the subfile layout (store_subfiles*.c): the state of one open
 * and the functions its files share. The layout's design is described at the
 * top of store_subfiles.c; the public interface is tagg_store_subfiles
 * (store.h). Nothing else includes this header.
 *
 *   store_subfiles.c        open and create, sizes, sync, close, delete
 *   store_subfiles_io.c     the I/O path: reads verified (read-only opens),
 *                           read-write (r+) checks, compression hooks
 *   store_subfiles_close.c  the close: notes merged, dirty stripes read
 *                           back, the final index written
 *   store_subfiles_nvr.c    destination=nvr: node names, node-local set-up,
 *                           ownership, drain */
#ifndef TAGG_STORE_SUBFILES_INT_H
#define TAGG_STORE_SUBFILES_INT_H

#include "io.h"
#include "sf_stripe_codec.h"
#include "stripe_notes.h"
#include "subfile_index.h"

#include "dio.h"

#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>

#define ERRLEN 1024
#define TAGG_SUB_COPIES 16                        /* verified stripes kept per rank and open, at most */
#define TAGG_SUB_COPY_BYTES ((uint64_t)32 << 20) /* ... and their bytes, at most (one stripe at least) */
#define TAGG_SUB_RECENT 128                       /* partial writes remembered per rank and open (fresh files) */
#define NODELEN 256 /* node names */
#define DIRLEN 1024 /* node-local directories */

typedef struct {
    tagg_sf_index_t ix;    /* stripe, count, names (sizes, checksums: as of the last close) */
    char          **paths; /* full path of each subfile */
    int            *fd;    /* -1 until this rank touches the subfile */
    int             writable;
    /* destination=nvr */
    int   *mine;      /* [count] this rank is on subfile k's node */
    int  **own;       /* [count] the ranks on subfile k's node, ascending */
    int   *nown;      /* [count] how many */
    int    window;    /* count x min nown: stripes one collective pass can give an owner each */
    char  *meta_path; /* the metadata file beside the index */
    int    meta_fd;   /* -1 until this rank touches metadata */
    /* checksums */
    int             verify;  /* read-only open, verify=1, closed file: check stripes on first read */
    int             base_on; /* read-write open of a closed file, verify=1: its records are the base (below) */
    uint64_t        base_L;  /* the logical size the records describe */
    int             fresh;   /* this open created (or truncated) the file: every stripe began as zeros, so a
                              * stripe's checksum follows from the ranks' changes (notes) when they do not overlap */
    int             limit;   /* read-only: never read past the sizes the index records */
    uint64_t        bunit;   /* format 4: the block size when every stripe has block checksums (none compressed), else 0 */
    uint64_t       *wend;    /* fresh files, not node-local: [count] the size this rank knows subfile k has (the
                              * end of its own writes, the last size set); close takes the maximum over the ranks
                              * instead of asking the file system, unless a stripe may be compressed (zmay) */
    notes_t         written; /* writers: stripes this rank wrote (FULL with crc, or DIRTY) */
    notes_t         checked; /* readers: stripes (legacy formats: subfiles) this rank verified; a note's crc
                              * holds the stripe's blocks not checked yet (format 4; 0: the whole stripe was) */
    /* fresh files: this rank's last partial writes that no later write of its
     * own overlapped, as stripe key, offset in the stripe, length and CRC-64
     * of the bytes, oldest first. A rewrite of exactly one of them (HDF5
     * rewrites its superblock and metadata in place) knows the bytes it
     * replaces by their checksum (and its blocks' share of them by theirs)
     * instead of reading them back. */
    struct sub_recent {
        uint64_t key, at, n, crc;
        uint64_t pc[TAGG_SF_BLOCKS]; /* format 4: the CRC-64 of its bytes in each block it touches, in order */
    } recent[TAGG_SUB_RECENT];
    int nrecent;
    char           *vbuf;    /* one stripe, for verification */
    char           *runbuf;  /* format 4, one subfile: two stripes, for reads across stripes (read_run) */
    uint64_t        run_lo, run_hi; /* the checked bytes [run_lo, run_hi) runbuf holds (run_hi 0: none) */
    /* verify: the last stripes this rank checked, kept to serve its further
     * reads of them (store_subfiles_io.c); at most TAGG_SUB_COPIES and
     * TAGG_SUB_COPY_BYTES in all, allocated as used */
    struct sub_copy {
        uint64_t key;  /* stripe key + 1; 0: empty */
        uint64_t used; /* clock of the last read it served */
        uint64_t mask; /* format 4: the blocks of buf that hold checked bytes (every bit: the whole stripe) */
        char    *buf;  /* one stripe, block-aligned */
    } copy[TAGG_SUB_COPIES];
    int             ncopy;  /* slots this open may use */
    uint64_t        vclock;
    uint64_t        cut;     /* smallest size set in this open (UINT64_MAX: none) */
    pthread_mutex_t mu;      /* the notes (async workers write too) */
    int             held;    /* rank 0 of a writer: the index is in held[] */
    /* compression (sf_stripe_codec.h): z.enc codec of whole-stripe writes; zmay:
     * a stripe may be stored compressed (z.enc, or the index has some) */
    tagg_sfz_t      z;
    int             zmay;
    char           *zbuf; /* 2 stripes: a decoded stripe (zj: its number + 1) and scratch */
    uint64_t        zj;
    dev_t           hdev;
    ino_t           hino;
    tagg_sf_ixfd_t  ixfd; /* rank 0 of a writer: its index, open since the "state open" write */
    /* direct_io (dio.h): one per data subfile, NULL when off */
    tagg_dio_t     *dio;
    struct sub_dctx *dctx;
} sub_t;

/* The context of subfile k's direct path. */
struct sub_dctx {
    sub_t   *s;
    uint32_t k;
};

static inline sub_t *sub_of(const tagg_file_t *f) { return f->store; }

/* ---- store_subfiles.c */

/* Collective agreement that carries the first failing rank's message (msg on
 * that rank) to every rank, as "what: ...". 0, or -1 on every rank. */
int tagg_sub_agree_msg(tagg_file_t *f, int rc, const char *msg, const char *what);
/* The rank that sizes, checksums and drains subfile k. */
int tagg_sub_keeper(const tagg_file_t *f, const sub_t *s, uint32_t k);
/* Current sizes, from storage: subfile k, the metadata file. 0 or -1 (pushed). */
int tagg_sub_subfile_size(tagg_file_t *f, uint32_t k, uint64_t *size);
int tagg_sub_meta_size(tagg_file_t *f, uint64_t *size);
/* Opens path (a derived one) and checks its size against the index's (when
 * closed). 0, or -1 with the message in err (ERRLEN bytes). With keep, a
 * checked file stays open: its descriptor in *keep. */
int tagg_sub_check_file(const char *index, const char *path, int closed, uint64_t want, const char *what, char *err,
                        int *keep);

/* ---- store_subfiles_io.c */

int tagg_sub_pwrite(tagg_file_t *f, uint64_t off, uint64_t len, const void *buf);
int tagg_sub_pread(tagg_file_t *f, uint64_t off, uint64_t len, void *buf);
/* The descriptor of subfile k (opened on first use; off: the address, for the
 * message of a refused node-local access). -1 with an error pushed. */
int tagg_sub_fd_of(tagg_file_t *f, uint32_t k, uint64_t off);
/* Read-only opens that verify (collective, at open): rank 0 reads stripe 0
 * whole (format 4: its first block), checks it, and broadcasts it; every rank
 * keeps it as a checked copy,
 * so that HDF5's superblock read on every rank costs one read of the stripe
 * in all, not one per rank. Nothing shared (an error stays for the read
 * that meets it) when rank 0's read or check fails or a rank has no memory.
 * 0, or -1 on every rank when the broadcast itself failed. */
int tagg_sub_share_first(tagg_file_t *f);
/* One stripe of memory for checks and read-backs (s->vbuf), allocated on first use. */
char *tagg_sub_vbuf(sub_t *s);
/* direct_io: the data subfiles' direct paths (dio.h), when the configuration
 * and the mount table want them; freed by tagg_sub_dio_free. */
int  tagg_sub_dio_setup(tagg_file_t *f, sub_t *s);
void tagg_sub_dio_free(sub_t *s);
/* The padded CRC form stripe j of space sp had when this read-write open began. */
uint64_t tagg_sub_base_form(const sub_t *s, int sp, uint64_t j);
/* Whether data stripe j may be stored compressed now, so that its slot's
 * header is probed (reads, partial writes, cuts, the close's read-back of a
 * writer): when this open compresses whole-stripe writes (any rank may
 * have), or when the index it began with records the stripe compressed
 * (another rank may have expanded it since). Otherwise the slot is raw,
 * whatever its first bytes look like. */
int tagg_sub_zmay(const sub_t *s, uint64_t j);

/* ---- store_subfiles_close.c */

/* Collective, writers only: the final index (want_final: every rank ends with
 * it in s->ix). 0, or -1 on every rank. */
int tagg_sub_write_index(tagg_file_t *f, int want_final);

/* ---- store_subfiles_nvr.c */

/* This process's node name. 0 or -1 (pushed). */
int tagg_sub_node_name(const tagg_config_t *cfg, int rank, char *name, size_t len);
/* Collective: every rank's node name and node-local directory (NODELEN +
 * DIRLEN bytes per rank, rank order) in *all (malloc'd). Agreed. */
int tagg_sub_gather_nodes(tagg_file_t *f, char **all);
/* Rank 0: the index (and metadata file) of a new node-local file. 0, or -1
 * with the message in err. */
int tagg_sub_create_nvr(tagg_file_t *f, tagg_sf_index_t *ix, const char *nodes, char *err, unsigned long long made[2],
                        tagg_sf_ixfd_t *ixfd);
/* Collective: ownership of the node-local subfiles, created or checked by
 * their nodes. Agreed. */
int tagg_sub_nvr_setup(tagg_file_t *f, sub_t *s, const char *nodes, int created);
/* Collective (drain=close): node-local subfiles turned into an ordinary
 * subfiled file. Agreed. */
int tagg_sub_drain(tagg_file_t *f);
/* Collective part of delete for a node-local file (rank 0 read its index into
 * *ix): each node removes its subfiles. Returns rc, or -1 with err set. */
int tagg_sub_del_nvr(MPI_Comm comm, int rank, const tagg_config_t *cfg, tagg_sf_index_t *ix, int rc, char *err);
int tagg_sub_owner(const tagg_file_t *f, uint64_t off, int i);
int tagg_sub_owner_window(const tagg_file_t *f);

#endif
