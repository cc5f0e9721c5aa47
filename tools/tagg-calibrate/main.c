/* tagg-calibrate: measures this machine's memory tiers and MPI, and writes a
 * tier file (model/README.md format) that the cost model and the engine read
 * (`tiers=<file>` / TAGG_TIERS), so the model runs on measured figures rather
 * than vendor sheets (MA-TAPIOCA memLatency / memBandwidth, seed 002 section 3.1).
 *
 *   mpiexec -n 2 tagg-calibrate [-o FILE] [--quick] [--nvr-dir DIR] [--target-dir DIR]
 *
 * Rank 0 measures, through the tier layer of core/ (tier.h), each available
 * tier: DRAM and HBM (memcpy bandwidth into the tier's memory, latency by a
 * dependent pointer chase over a buffer larger than the caches), NVR (the tier
 * as tagg uses it: a file in the NVR directory mapped into memory, bandwidth =
 * copy + msync, latency = one store + msync of one page), and the target file
 * system (write + fsync bandwidth, latency of a 4 KiB write + fdatasync).
 * The target's cost of one write and one read by request size (4 KiB..4 MiB)
 * is measured by every rank of rank 0's node at once, interleaved in one file,
 * as direct access by the ranks of a node is. With two ranks or more, a ping-pong between rank 0 and a rank of the same node
 * (intra-node) and of another node (inter-node) gives the MPI figures. Capacities
 * are what the node has left (tier ops). Unavailable tiers are left out, with
 * the reason. Progress goes to stderr; the default run takes well under a minute. */
#include "codec.h"
#include "config.h"
#include "data.h"
#include "drop_caches.h"
#include "tier.h"

#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/statvfs.h>
#include <tagg/model.h>
#include <tagg/tiers.h>
#include <time.h>
#include <unistd.h>

typedef struct {
    const char *out, *nvr_dir, *target_dir;
    int         quick;
    size_t      mem_size, file_size; /* bytes moved per bandwidth sample */
    int         reps;
} opts_t;

static int    rank_, size_;
static double t_start;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void progress(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void progress(const char *fmt, ...)
{
    if (rank_ != 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "tagg-calibrate [%5.1f s] ", now() - t_start);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
}

/* Best-of-reps copy bandwidth into dst (size bytes). */
static double copy_bandwidth(char *dst, const char *src, size_t size, int reps, int (*after)(void *), void *arg)
{
    double best = 1e30;
    for (int r = 0; r < reps; r++) {
        double t0 = now();
        memcpy(dst, src, size);
        if (after && after(arg) < 0)
            return -1;
        double t = now() - t0;
        if (t < best)
            best = t;
    }
    return (double)size / best;
}

/* Dependent loads over a random cycle of cache lines: seconds per access. */
static double chase_latency(char *mem, size_t size, long steps)
{
    size_t  line = 64, n = size / line;
    size_t *perm = malloc(n * sizeof *perm);
    if (!perm || n < 2) {
        free(perm);
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        perm[i] = i;
    uint64_t s = 88172645463325252ULL;
    for (size_t i = n - 1; i > 0; i--) { /* Fisher-Yates with xorshift */
        s ^= s << 13, s ^= s >> 7, s ^= s << 17;
        size_t j = (size_t)(s % (i + 1)), t = perm[i];
        perm[i] = perm[j], perm[j] = t;
    }
    for (size_t i = 0; i < n; i++)
        *(void **)(mem + perm[i] * line) = mem + perm[(i + 1) % n] * line;
    free(perm);
    void  **p  = (void **)(mem + 0);
    double  t0 = now();
    for (long i = 0; i < steps; i++)
        p = (void **)*p;
    double t = now() - t0;
    if (p == NULL) /* keeps the chase */
        fprintf(stderr, " ");
    return t / (double)steps;
}

static int msync_all(void *arg)
{
    tagg_tier_buf_t *b = arg;
    return b->ops->persist(b);
}

/* One memory tier through its ops. Returns 0 (measured), 1 (unavailable), -1 error. */
static int measure_memory(const tagg_tier_ops_t *ops, const tagg_config_t *cfg, const opts_t *o, tagg_tier_t *t,
                          char *why, size_t wlen)
{
    tagg_tier_buf_t b;
    int             enospc = 0;
    memset(&b, 0, sizeof b);
    b.ops  = ops;
    b.size = o->mem_size;
    if (!ops->available(cfg, why, wlen))
        return 1;
    if (ops->mem_alloc(&b, cfg, o->mem_size, &enospc) < 0) {
        snprintf(why, wlen, "cannot allocate %zu bytes in the tier", o->mem_size);
        return 1;
    }
    int   own = b.base == NULL; /* DRAM: MPI would allocate; here plain memory */
    char *mem = own ? malloc(o->mem_size) : b.base, *src = malloc(o->mem_size);
    if (!mem || !src) {
        free(src);
        if (own)
            free(mem);
        else
            ops->mem_free(&b);
        snprintf(why, wlen, "out of memory");
        return -1;
    }
    memset(src, 1, o->mem_size);
    memset(mem, 0, o->mem_size);
    b.base = mem;
    int persistent = ops->kind == TAGG_TIER_NVR;
    t->bandwidth   = copy_bandwidth(mem, src, o->mem_size, o->reps, persistent ? msync_all : NULL, &b);
    if (persistent) { /* one store + msync of its page */
        long   n = o->quick ? 32 : 128, page = sysconf(_SC_PAGESIZE);
        double t0 = now();
        for (long i = 0; i < n; i++) {
            char *p = mem + ((size_t)i * (size_t)page) % o->mem_size;
            *p      = (char)i;
            msync(p, (size_t)page, MS_SYNC);
        }
        t->latency = (now() - t0) / (double)n;
    }
    else
        t->latency = chase_latency(mem, o->mem_size, o->quick ? 1L << 19 : 1L << 21);
    t->capacity = ops->capacity(cfg);
    free(src);
    if (own)
        free(mem);
    else
        ops->mem_free(&b);
    snprintf(t->name, sizeof t->name, "%s", ops->name);
    t->kind        = ops->kind;
    t->persistency = ops->persistency();
    return t->bandwidth > 0 && t->latency >= 0 ? 0 : -1;
}

/* The target file system: write + fsync, and small write + fdatasync. */
static int measure_target(const opts_t *o, tagg_tier_t *t, char *why, size_t wlen)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/tagg-calibrate-%ld.tmp", o->target_dir, (long)getpid());
    int   fd  = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0600);
    char *buf = malloc(4 << 20);
    if (fd < 0 || !buf) {
        snprintf(why, wlen, "cannot write in %s: %s", o->target_dir, strerror(errno));
        free(buf);
        if (fd >= 0)
            close(fd);
        return -1;
    }
    memset(buf, 7, 4 << 20);
    double best = 1e30;
    for (int r = 0; r < (o->quick ? 1 : 2); r++) {
        double t0 = now();
        for (size_t done = 0; done < o->file_size; done += 4 << 20)
            if (pwrite(fd, buf, 4 << 20, (off_t)done) != 4 << 20)
                best = -1;
        fsync(fd);
        double dt = now() - t0;
        if (best > 0 && dt < best)
            best = dt;
    }
    long   n  = o->quick ? 16 : 64;
    double t0 = now();
    for (long i = 0; i < n; i++) {
        if (pwrite(fd, buf, 4096, (off_t)(i * 4096)) != 4096)
            best = -1;
        fdatasync(fd);
    }
    t->latency = (now() - t0) / (double)n;
    close(fd);
    unlink(path);
    free(buf);
    if (best <= 0) {
        snprintf(why, wlen, "writing in %s failed", o->target_dir);
        return -1;
    }
    struct statvfs s;
    t->bandwidth   = (double)o->file_size / best;
    t->capacity    = statvfs(o->target_dir, &s) == 0 ? (uint64_t)s.f_bavail * s.f_frsize : 0;
    t->kind        = TAGG_TIER_PFS;
    t->persistency = TAGG_PERSIST_PERMANENT;
    snprintf(t->name, sizeof t->name, "FS");
    return 0;
}

/* The target's cost of one request by size (the 'request' and 'read_request'
 * lines of the tier file, tagg/callplan.h), what the engine's choice between
 * direct access and aggregation needs. Every rank of rank 0's node takes part:
 * rank i of n issues requests i, i + n, i + 2n, ... of one shared file, as
 * direct access by every rank of a node does. For each size, as many requests
 * as make `total` bytes, then (writes) one fsync per rank; t(s) = the slowest
 * rank's time / its requests. Written as latency = t(s) - s / B and
 * bandwidth = B, with B the bandwidth of the largest size. One process alone
 * would measure a file system without the contention the ranks of a node
 * cause each other: on the GlusterFS testbed its costs sent column blocks
 * direct, at half MPI-IO's speed (session 12). */
#define NSIZES 4
static const size_t req_sizes[NSIZES] = {4096, 65536, 1 << 20, 4 << 20};

typedef struct {
    MPI_Comm comm; /* rank 0's node; MPI_COMM_NULL elsewhere */
    int      me, n;
    size_t   total; /* bytes of each size's requests together */
    int      fd;
    char     path[4096];
    char    *buf;
} reqrun_t;

/* Every rank of `node` (rank 0's node) calls: rank 0 creates the file (no
 * symlink followed), the others open it. 0, or -1 on every rank with why. */
static int requests_begin(const opts_t *o, MPI_Comm node, const char *tag, reqrun_t *q, char *why, size_t wlen)
{
    memset(q, 0, sizeof *q);
    q->comm = node, q->fd = -1, q->total = o->quick ? (8u << 20) : (32u << 20);
    MPI_Comm_rank(node, &q->me);
    MPI_Comm_size(node, &q->n);
    long pid = (long)getpid();
    MPI_Bcast(&pid, 1, MPI_LONG, 0, node);
    snprintf(q->path, sizeof q->path, "%s/tagg-calibrate-%s-%ld.tmp", o->target_dir, tag, pid);
    q->buf = malloc(4 << 20);
    int ok = 1;
    if (q->me == 0)
        q->fd = open(q->path, O_CREAT | O_EXCL | O_RDWR | O_NOFOLLOW, 0600), ok = q->fd >= 0;
    int err = ok ? 0 : errno;
    MPI_Bcast(&err, 1, MPI_INT, 0, node);
    if (!err && q->me != 0)
        q->fd = open(q->path, O_RDWR | O_NOFOLLOW), ok = q->fd >= 0;
    ok = ok && q->buf && !err;
    int all = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, node);
    if (!all) {
        snprintf(why, wlen, "cannot write in %s: %s", o->target_dir, err ? strerror(err) : "a rank could not open the file");
        if (q->fd >= 0)
            close(q->fd);
        MPI_Barrier(node);
        if (q->me == 0 && !err)
            unlink(q->path);
        free(q->buf);
        q->buf = NULL;
        return -1;
    }
    return 0;
}

/* The slowest rank's time per request of size s over q->total bytes, the
 * ranks interleaved; rc < 0 on every rank when one failed. */
static double requests_time(reqrun_t *q, size_t s, int writing, int *rc)
{
    size_t n = q->total / s;
    int    ok = 1;
    MPI_Barrier(q->comm);
    double t0 = now();
    for (size_t i = (size_t)q->me; i < n && ok; i += (size_t)q->n)
        ok = (writing ? pwrite(q->fd, q->buf, s, (off_t)(i * s)) : pread(q->fd, q->buf, s, (off_t)(i * s))) ==
             (ssize_t)s;
    if (writing && ok && fsync(q->fd) < 0)
        ok = 0;
    double t = now() - t0, tmax = 0;
    int    all = 0;
    MPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, q->comm);
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, q->comm);
    if (!all)
        *rc = -1;
    size_t per = (n + (size_t)q->n - 1) / (size_t)q->n; /* the busiest rank's requests */
    return tmax / (double)(per ? per : 1);
}

/* End of a request measurement: removes the file; on success, times per
 * request t[] become latency = t(s) - s / B and bandwidth = B, with B the
 * bandwidth of the largest size. */
static int requests_done(reqrun_t *q, int rc, const double *t, double *lat, double *bw, const char *doing,
                         const char *dir, char *why, size_t wlen)
{
    if (q->fd >= 0)
        close(q->fd);
    MPI_Barrier(q->comm);
    if (q->me == 0)
        unlink(q->path);
    free(q->buf);
    q->buf = NULL;
    if (rc < 0) {
        if (!why[0])
            snprintf(why, wlen, "%s in %s failed", doing, dir);
        return -1;
    }
    double B = (double)req_sizes[NSIZES - 1] / t[NSIZES - 1];
    for (int k = 0; k < NSIZES; k++) {
        bw[k]  = B;
        lat[k] = t[k] - (double)req_sizes[k] / B;
        if (lat[k] < 1e-9)
            lat[k] = 1e-9;
    }
    return 0;
}

static int measure_requests(const opts_t *o, MPI_Comm node, double *lat, double *bw, char *why, size_t wlen)
{
    reqrun_t q;
    double   t[NSIZES];
    if (requests_begin(o, node, "req", &q, why, wlen) < 0)
        return -1;
    int rc = 0;
    for (int k = 0; k < NSIZES && rc == 0; k++) {
        memset(q.buf, k + 1, 4 << 20);
        t[k] = requests_time(&q, req_sizes[k], 1, &rc);
        MPI_Barrier(node);
        if (q.me == 0 && ftruncate(q.fd, 0) < 0)
            rc = -1;
        MPI_Bcast(&rc, 1, MPI_INT, 0, node);
    }
    return requests_done(&q, rc, t, lat, bw, "writing", o->target_dir, why, wlen);
}

/* The same for reads (the 'read_request' lines): a file of `total` bytes
 * written once by rank 0 (and fsync'ed), then for each size the page cache is
 * emptied (as root: sync and drop_caches; otherwise posix_fadvise(DONTNEED) on
 * the file, which a file server's own cache does not obey: *how says which)
 * and the ranks read it interleaved. Last, with the cache emptied again, rank
 * 0 alone reads the whole file in requests of the largest size: *alone, its
 * bytes per second (the 'read_alone' line), which the call plan compares
 * with the ranks' together to choose one reader per node (local disk of this
 * machine: one reader 14-27 % faster than two for files up to 16 MiB). */
static int evict(int fd, const char **how)
{
    char err[256];
    if (tagg_drop_caches("/proc/sys/vm/drop_caches", err, sizeof err) == 0) {
        *how = "page cache dropped";
        return 0;
    }
    *how = "posix_fadvise(DONTNEED): a server's cache may still serve reads";
    return posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) == 0 ? 0 : -1;
}

/* Every rank of the node: rank 0 empties the caches (evict), the others drop
 * their own cached pages of the file; 0, or -1 on every rank. */
static int empty_caches(reqrun_t *q, const char **how)
{
    int rc = 0;
    if (q->me == 0 && evict(q->fd, how) < 0)
        rc = -1;
    if (q->me != 0) /* this rank's own cached pages of the file */
        posix_fadvise(q->fd, 0, 0, POSIX_FADV_DONTNEED);
    MPI_Bcast(&rc, 1, MPI_INT, 0, q->comm);
    return rc;
}

static int measure_read_requests(const opts_t *o, MPI_Comm node, double *lat, double *bw, double *alone,
                                 const char **how, char *why, size_t wlen)
{
    reqrun_t q;
    double   t[NSIZES];
    if (requests_begin(o, node, "rreq", &q, why, wlen) < 0)
        return -1;
    int rc = 0;
    if (q.me == 0) {
        memset(q.buf, 0x5a, 4 << 20);
        for (size_t off = 0; off < q.total && rc == 0; off += 4u << 20)
            if (pwrite(q.fd, q.buf, 4u << 20, (off_t)off) != (ssize_t)(4u << 20))
                rc = -1;
        if (rc == 0 && fsync(q.fd) < 0)
            rc = -1;
    }
    MPI_Bcast(&rc, 1, MPI_INT, 0, node);
    for (int k = 0; k < NSIZES && rc == 0; k++)
        if ((rc = empty_caches(&q, how)) == 0)
            t[k] = requests_time(&q, req_sizes[k], 0, &rc);
    *alone = 0;
    if (rc == 0 && (rc = empty_caches(&q, how)) == 0) { /* one reader alone */
        if (q.me == 0) {
            size_t s  = req_sizes[NSIZES - 1];
            double t0 = now();
            for (size_t off = 0; off + s <= q.total && rc == 0; off += s)
                if (pread(q.fd, q.buf, s, (off_t)off) != (ssize_t)s)
                    rc = -1;
            double dt = now() - t0;
            *alone    = rc == 0 && dt > 0 ? (double)(q.total / s * s) / dt : 0;
        }
        MPI_Bcast(&rc, 1, MPI_INT, 0, node);
        MPI_Bcast(alone, 1, MPI_DOUBLE, 0, node);
    }
    return requests_done(&q, rc, t, lat, bw, "reading", o->target_dir, why, wlen);
}

/* Ping-pong between rank 0 and `peer` (all ranks call). */
/* The stripe codecs (codec.h) on this node, one core: compression and
 * decompression rate (logical bytes per second) and the stored/logical ratio
 * on HACC-like data (tools/tagg-codec/data.h) in 4 MiB stripes, with the
 * defaults of the configuration (level 1, byte shuffle of 4-byte elements). */
#define NCODECS 8
static int measure_codecs(int quick, const char **name, double *comp, double *decomp, double *ratio)
{
    size_t         S = 4u << 20;
    int            reps = quick ? 2 : 6, n = 0;
    unsigned char *in = malloc(S), *out = NULL, *back = malloc(S);
    if (!in || !back || tagg_data_fill("hacc", in, S, 42) < 0) {
        free(in), free(back);
        return 0;
    }
    for (int i = 0; tagg_codec_at(i) && n < NCODECS; i++) {
        const tagg_codec_t *c = tagg_codec_at(i);
        tagg_codec_opts_t   o;
        char                err[256];
        size_t              cap = c->bound(S), stored = 0;
        tagg_codec_opts_default(&o);
        free(out);
        if (!(out = malloc(cap)))
            break;
        double tc = 0, td = 0;
        int    ok = 1;
        for (int r = 0; r < reps && ok; r++) {
            double t0 = now();
            ok = c->encode(&o, in, S, out, cap, &stored, err, sizeof err) == 0;
            double t1 = now();
            ok = ok && c->decode(out, stored, back, S, err, sizeof err) == 0 && !memcmp(in, back, S);
            double t2 = now();
            if (r > 0 || reps == 1) /* the first run warms up */
                tc += t1 - t0, td += t2 - t1;
        }
        if (!ok || tc <= 0 || td <= 0)
            continue;
        name[n] = c->name, comp[n] = (double)S * (reps - 1) / tc, decomp[n] = (double)S * (reps - 1) / td;
        ratio[n++] = (double)stored / (double)S;
    }
    free(in), free(out), free(back);
    return n;
}

static void pingpong(int peer, int quick, double *lat, double *bw)
{
    int    big = 4 << 20, nlat = quick ? 200 : 2000, nbw = quick ? 5 : 20;
    char  *buf = calloc(1, (size_t)big);
    double t0;
    *lat = *bw = 0;
    if (rank_ == 0 || rank_ == peer) {
        int other = rank_ == 0 ? peer : 0;
        for (int pass = 0; pass < 2; pass++) {
            int n = pass ? nbw : nlat, len = pass ? big : 8;
            MPI_Barrier(MPI_COMM_SELF);
            t0 = MPI_Wtime();
            for (int i = 0; i < n; i++) {
                if (rank_ == 0) {
                    MPI_Send(buf, len, MPI_BYTE, other, 1, MPI_COMM_WORLD);
                    MPI_Recv(buf, len, MPI_BYTE, other, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                }
                else {
                    MPI_Recv(buf, len, MPI_BYTE, other, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                    MPI_Send(buf, len, MPI_BYTE, other, 1, MPI_COMM_WORLD);
                }
            }
            double dt = MPI_Wtime() - t0;
            if (pass)
                *bw = 2.0 * n * (double)big / dt;
            else
                *lat = dt / (2.0 * n);
        }
    }
    free(buf);
    MPI_Barrier(MPI_COMM_WORLD);
}

static void usage(void)
{
    printf("usage: mpiexec -n N tagg-calibrate [options]\n"
           "  -o FILE            tier file to write (default tagg.tiers); use it with tiers=FILE or TAGG_TIERS\n"
           "  --quick            small samples (a few seconds), for tests\n"
           "  --nvr-dir DIR      NVR directory (default: TAGG_NVR_DIR, else $TMPDIR, else /tmp)\n"
           "  --target-dir DIR   a directory on the destination file system (default .)\n"
           "  --hbm-emulate      measure ordinary memory as emulated HBM (tests only)\n"
           "With 2+ ranks, MPI intra-node (and inter-node, when the ranks span nodes) latency and\n"
           "bandwidth are measured by ping-pong and written as comments. Exit: 0 ok, 1 failure, 2 usage.\n");
}

int main(int argc, char **argv)
{
    opts_t        o = {"tagg.tiers", NULL, ".", 0, 64u << 20, 256u << 20, 3};
    tagg_config_t cfg;
    int           bad = 0, emulate = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
    t_start = now();
    for (int i = 1; i < argc && !bad; i++) {
        if (!strcmp(argv[i], "--quick"))
            o.quick = 1;
        else if (!strcmp(argv[i], "--hbm-emulate"))
            emulate = 1;
        else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))
            bad = 3;
        else if (i + 1 < argc && !strcmp(argv[i], "-o"))
            o.out = argv[++i];
        else if (i + 1 < argc && !strcmp(argv[i], "--nvr-dir"))
            o.nvr_dir = argv[++i];
        else if (i + 1 < argc && !strcmp(argv[i], "--target-dir"))
            o.target_dir = argv[++i];
        else {
            if (rank_ == 0)
                fprintf(stderr, "tagg-calibrate: unknown or incomplete option '%s' (see --help)\n", argv[i]);
            bad = 2;
        }
    }
    if (bad) {
        if (bad == 3 && rank_ == 0)
            usage();
        MPI_Finalize();
        return bad == 3 ? 0 : 2;
    }
    if (o.quick)
        o.mem_size = 16u << 20, o.file_size = 32u << 20, o.reps = 2;
    char *env = tagg_config_env_string(), err[TAGG_CONFIG_ERRLEN];
    if (tagg_config_build(&cfg, env, NULL, err, sizeof err) < 0) {
        if (rank_ == 0)
            fprintf(stderr, "tagg-calibrate: %s\n", err);
        free(env);
        MPI_Finalize();
        return 2;
    }
    free(env);
    if (o.nvr_dir) {
        free(cfg.nvr_dir);
        cfg.nvr_dir = strdup(o.nvr_dir);
    }
    cfg.hbm_emulate = emulate;

    tagg_tiers_t tiers;
    memset(&tiers, 0, sizeof tiers);
    int    rc = 0, have_req = 0, have_rreq = 0, ncodec = 0, req_ranks = 1;
    const char *cname[NCODECS];
    double      ccomp[NCODECS], cdecomp[NCODECS], cratio[NCODECS];
    double req_lat[NSIZES], req_bw[NSIZES], rreq_lat[NSIZES], rreq_bw[NSIZES], rreq_alone = 0;
    const char *rreq_how = "";
    if (rank_ == 0) {
        const tagg_tier_ops_t *mem[] = {&tagg_tier_hbm, &tagg_tier_dram, &tagg_tier_nvr};
        for (int i = 0; i < 3 && rc == 0; i++) {
            char        why[256] = "";
            tagg_tier_t t;
            memset(&t, 0, sizeof t);
            progress("tier %s: measuring%s", mem[i]->name,
                     mem[i]->kind == TAGG_TIER_NVR ? " (mapped file in the NVR directory)" : "");
            int r = measure_memory(mem[i], &cfg, &o, &t, why, sizeof why);
            if (r == 1)
                progress("tier %s: unavailable: %s", mem[i]->name, why);
            else if (r < 0) {
                progress("tier %s: FAILED: %s", mem[i]->name, why);
                rc = -1;
            }
            else {
                progress("tier %s: latency %.3g s, bandwidth %.3g GB/s, capacity %.3g GB", t.name, t.latency,
                         t.bandwidth / 1e9, (double)t.capacity / 1e9);
                if (t.kind == TAGG_TIER_DRAM)
                    tiers.source = tiers.ntiers;
                tiers.tier[tiers.ntiers++] = t;
            }
        }
        if (rc == 0) {
            char        why[256] = "";
            tagg_tier_t t;
            memset(&t, 0, sizeof t);
            progress("target file system (%s): measuring write + fsync", o.target_dir);
            if (measure_target(&o, &t, why, sizeof why) < 0) {
                progress("target: FAILED: %s", why);
                rc = -1;
            }
            else {
                progress("target FS: latency %.3g s, bandwidth %.3g GB/s", t.latency, t.bandwidth / 1e9);
                tiers.target               = tiers.ntiers;
                tiers.tier[tiers.ntiers++] = t;
            }
        }
    }
    /* the ranks on rank 0's node (same processor name): mynode == node_of0 */
    int node_of0 = 0, mynode;
    {
        char host[MPI_MAX_PROCESSOR_NAME] = "", host0[MPI_MAX_PROCESSOR_NAME] = "";
        int  len;
        MPI_Get_processor_name(host, &len);
        memcpy(host0, host, sizeof host);
        MPI_Bcast(host0, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, 0, MPI_COMM_WORLD);
        mynode = strcmp(host, host0) != 0;
    }
    /* the target's cost by request size: every rank of rank 0's node takes part */
    {
        int measured = rank_ == 0 && rc == 0 && tiers.target >= 0 && tiers.ntiers > 0 &&
                       tiers.tier[tiers.target].kind == TAGG_TIER_PFS;
        MPI_Bcast(&measured, 1, MPI_INT, 0, MPI_COMM_WORLD);
        MPI_Comm node = MPI_COMM_NULL;
        MPI_Comm_split(MPI_COMM_WORLD, mynode == node_of0 ? 0 : MPI_UNDEFINED, rank_, &node);
        if (measured && node != MPI_COMM_NULL) {
            char why[256] = "";
            int  n;
            MPI_Comm_size(node, &n);
            progress("target file system: writes and reads of 4 KiB, 64 KiB, 1 MiB, 4 MiB, %d rank(s) of this node "
                     "interleaved in one file",
                     n);
            if (measure_requests(&o, node, req_lat, req_bw, why, sizeof why) < 0)
                progress("target requests: FAILED: %s", why);
            else {
                have_req = 1;
                for (int k = 0; k < NSIZES; k++)
                    progress("target request of %zu bytes: %.3g s (latency %.3g s + size / %.3g GB/s)", req_sizes[k],
                             req_lat[k] + (double)req_sizes[k] / req_bw[k], req_lat[k], req_bw[k] / 1e9);
            }
            why[0] = '\0';
            if (measure_read_requests(&o, node, rreq_lat, rreq_bw, &rreq_alone, &rreq_how, why, sizeof why) < 0)
                progress("target read requests: FAILED: %s", why);
            else {
                have_rreq = 1;
                for (int k = 0; k < NSIZES; k++)
                    progress("target read of %zu bytes: %.3g s (latency %.3g s + size / %.3g GB/s; %s)",
                             req_sizes[k], rreq_lat[k] + (double)req_sizes[k] / rreq_bw[k], rreq_lat[k],
                             rreq_bw[k] / 1e9, rreq_how);
                if (rreq_alone > 0)
                    progress("target read alone (one rank, %zu-byte requests): %.3g GB/s; the %d rank(s) together: "
                             "%.3g GB/s",
                             req_sizes[NSIZES - 1], rreq_alone / 1e9, n, n * rreq_bw[NSIZES - 1] / 1e9);
            }
            MPI_Comm_size(node, &req_ranks);
        }
        if (node != MPI_COMM_NULL)
            MPI_Comm_free(&node);
    }
    if (rank_ == 0) {
        progress("stripe codecs on HACC-like data, 4 MiB stripes, one core");
        ncodec = measure_codecs(o.quick, cname, ccomp, cdecomp, cratio);
        for (int i = 0; i < ncodec; i++)
            progress("codec %s: compress %.3g GB/s, decompress %.3g GB/s, ratio %.3f", cname[i], ccomp[i] / 1e9,
                     cdecomp[i] / 1e9, cratio[i]);
    }
    /* MPI: a rank on rank 0's node, a rank on another node */
    int intra = -1, inter = -1;
    {
        int *all = malloc((size_t)size_ * sizeof *all);
        MPI_Allgather(&mynode, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD);
        for (int r = 1; r < size_; r++) {
            if (all[r] == node_of0 && intra < 0)
                intra = r;
            if (all[r] != node_of0 && inter < 0)
                inter = r;
        }
        free(all);
    }
    double lat[2] = {0, 0}, bw[2] = {0, 0};
    if (intra > 0) {
        progress("MPI intra-node ping-pong, ranks 0 and %d", intra);
        pingpong(intra, o.quick, &lat[0], &bw[0]);
        progress("MPI intra-node: latency %.3g s, bandwidth %.3g GB/s", lat[0], bw[0] / 1e9);
    }
    if (inter > 0) {
        progress("MPI inter-node ping-pong, ranks 0 and %d", inter);
        pingpong(inter, o.quick, &lat[1], &bw[1]);
        progress("MPI inter-node: latency %.3g s, bandwidth %.3g GB/s", lat[1], bw[1] / 1e9);
    }
    if (size_ < 2)
        progress("one rank: no MPI figures (run with mpiexec -n 2 or more)");

    if (rank_ == 0 && rc == 0) {
        tagg_err_t e;
        FILE      *out = fopen(o.out, "w");
        if (!out || tagg_tiers_validate(&tiers, &e) < 0) {
            fprintf(stderr, "tagg-calibrate: cannot write %s: %s\n", o.out, out ? e.msg : strerror(errno));
            rc = -1;
        }
        else {
            char host[MPI_MAX_PROCESSOR_NAME];
            int  len;
            MPI_Get_processor_name(host, &len);
            tagg_tiers_print(&tiers, out);
            fprintf(out, "# measured by tagg-calibrate%s on %s, %d rank(s); NVR directory %s, target %s\n",
                    o.quick ? " --quick" : "", host, size_, tagg_nvr_dir(&cfg), o.target_dir);
            if (have_req) {
                fprintf(out, "# the target's cost of one request by size (write + fsync amortised; %d rank(s) of one node "
                            "interleaved): direct access or aggregation\n",
                        req_ranks);
                for (int k = 0; k < NSIZES; k++)
                    fprintf(out, "request %zu latency=%gs bandwidth=%gB/s ranks=%d\n", req_sizes[k], req_lat[k],
                            req_bw[k], req_ranks);
            }
            if (have_rreq) {
                fprintf(out, "# the target's cost of one read by size (%s; %d rank(s) of one node interleaved)\n", rreq_how,
                        req_ranks);
                for (int k = 0; k < NSIZES; k++)
                    fprintf(out, "read_request %zu latency=%gs bandwidth=%gB/s ranks=%d\n", req_sizes[k], rreq_lat[k],
                            rreq_bw[k], req_ranks);
                if (rreq_alone > 0) {
                    fprintf(out, "# one rank of the node reading the same file alone (%zu-byte requests, cache emptied)\n",
                            req_sizes[NSIZES - 1]);
                    fprintf(out, "read_alone bandwidth=%gB/s\n", rreq_alone);
                }
            }
            if (ncodec)
                fprintf(out, "# stripe codecs (compression=auto): rates of one core on HACC-like data, 4 MiB stripes\n");
            for (int i = 0; i < ncodec; i++)
                fprintf(out, "codec %s compress=%gB/s decompress=%gB/s ratio=%.4f\n", cname[i], ccomp[i], cdecomp[i],
                        cratio[i]);
            if (intra > 0)
                fprintf(out, "# mpi intra-node latency=%gs bandwidth=%gGB/s\n", lat[0], bw[0] / 1e9);
            if (inter > 0)
                fprintf(out, "# mpi inter-node latency=%gs bandwidth=%gGB/s\n", lat[1], bw[1] / 1e9);
            fclose(out);
            /* the file must parse with the model */
            tagg_tiers_t back;
            if (tagg_tiers_load(o.out, &back, &e) < 0) {
                fprintf(stderr, "tagg-calibrate: the model cannot read %s: %s\n", o.out, e.msg);
                rc = -1;
            }
            else
                progress("wrote %s (%d tiers); use it with tiers=%s or TAGG_TIERS=%s", o.out, back.ntiers, o.out,
                         o.out);
            /* the model's choice on these figures, for the default buffers */
            tagg_topology_t  *topo = NULL;
            int              *rn   = calloc((size_t)size_, sizeof *rn);
            tagg_model_opts_t mo;
            tagg_model_opts_default(&mo);
            mo.n_buff = 2, mo.s_buff = 4u << 20;
            if (rc == 0 && rn &&
                tagg_topology_generic_from_ranks(size_, rn, 0, NULL, lat[0] > 0 ? lat[0] : 1e-6,
                                                 bw[0] > 0 ? bw[0] : 10e9, &topo, &e) == 0) {
                tagg_node_tiers_t nt;
                tagg_tier_choice_t ch;
                memset(&nt, 0, sizeof nt);
                nt.ranks = size_;
                for (int i = 0; i < back.ntiers; i++)
                    nt.usable[i] = i != back.target, nt.capacity[i] = back.tier[i].capacity;
                if (tagg_tier_choose(topo, &back, &mo, &nt, 0, 0, &ch, &e) == 0 && ch.tier >= 0)
                    progress("model's choice for %d rank(s) x 2 buffers x 4 MiB on this node: %s (Cost_A %.3g s + "
                             "Cost_T %.3g s)%s%s",
                             size_, back.tier[ch.tier].name, ch.cost.cost_a, ch.cost.cost_t,
                             ch.why[0] ? "; left out: " : "", ch.why);
                tagg_topology_free(topo);
            }
            free(rn);
        }
    }
    int all = 0;
    MPI_Allreduce(&rc, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    tagg_config_clear(&cfg);
    MPI_Finalize();
    return all < 0 ? 1 : 0;
}
