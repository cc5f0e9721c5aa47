/* tagg-bench: the driver loop. For each repetition, each variant in turn
 * (round-robin, so slow drifts of the machine hit every variant alike):
 *
 *   write  barrier; t0; H5Fcreate; the kernel creates and writes its datasets;
 *          [--fsync: H5Fflush(GLOBAL)]; H5Fclose; t = max over ranks of (now - t0)
 *   cold   (untimed, --read-cache) sync and drop the page cache of every node, or
 *          evict the run's files from it, so that the read comes from storage
 *   read   barrier; t0; H5Fopen(RDONLY); the kernel reads; H5Fclose; max over ranks
 *   check  (untimed) compare what was read with what was written, byte by byte
 *   clean  (untimed) H5Fdelete, then remove every file named after the variant
 *
 * Bandwidth = bytes of raw data of all ranks / t (MiB/s; metadata not counted).
 * A variant whose fapl, create or write fails is "unavailable: <reason>" from
 * then on, with the same reason on every rank (agreed with MPI); the run goes on.
 * A variant that fails to read or to read back its data fails the run (exit 1). */
#define _DEFAULT_SOURCE /* sync() */
#include "bench.h"
#include "drop_caches.h"
#include "opts.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef struct {
    bench_variant_t v;
    int             unavailable, failed; /* failed: read or check went wrong */
    char            reason[BENCH_MSG];
    int             done;                /* repetitions measured */
    uint64_t        bad;                 /* bytes read back wrong, all ranks */
    double         *wt, *rt;             /* seconds per repetition */
    double         *it;                  /* seconds inside the kernel's writes (max over ranks) */
} result_t;

typedef struct {
    const bench_opts_t   *o;
    const bench_kernel_t *k;
    bench_ctx_t           ctx;
    int                   node, nodes; /* this rank's file index and the number of files */
    int                   node_leader; /* rank 0 of this rank's node */
    bench_cache_t         cache_used;  /* the weakest --read-cache method any repetition got */
    char                  cache_note[BENCH_MSG]; /* why it fell back, the first time it did */
    uint64_t              total;       /* raw bytes per repetition, all ranks */
    unsigned long         id;          /* rank 0's pid: names files of this run */
} run_t;

/* 1 when any rank failed. Then msg holds, on every rank, the lowest failing rank's text. */
static int agree(int failed, char *msg, size_t len)
{
    int wrank, wsize, first;
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    int mine = failed ? wrank : wsize;
    MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (first == wsize)
        return 0;
    char buf[BENCH_MSG];
    snprintf(buf, sizeof buf, "%s", msg);
    MPI_Bcast(buf, (int)sizeof buf, MPI_CHAR, first, MPI_COMM_WORLD);
    snprintf(msg, len, "%s", buf);
    return 1;
}

static double max_time(double t)
{
    double m;
    MPI_Allreduce(&t, &m, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return m;
}

static void file_names(const run_t *run, const result_t *r, char *path, size_t plen, char *prefix, size_t xlen)
{
    snprintf(prefix, xlen, "tagg-bench-%lu-%s.", run->id, r->v.name);
    if (run->o->per_node)
        snprintf(path, plen, "%s/%snode%d.h5", run->o->dir, prefix, run->node);
    else
        snprintf(path, plen, "%s/%sh5", run->o->dir, prefix);
}

/* H5Fdelete where the driver has it, then whatever is left that carries the name
 * (subfiles, configuration files of the subfiling driver or of tagg's layouts). */
static void clean(const run_t *run, const result_t *r, hid_t fapl)
{
    char path[4096], prefix[256];
    file_names(run, r, path, sizeof path, prefix, sizeof prefix);
    if (fapl >= 0 && access(path, F_OK) == 0) {
        H5E_BEGIN_TRY { H5Fdelete(path, fapl); }
        H5E_END_TRY
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (run->ctx.rank == 0)
        bench_remove_prefix(run->o->dir, prefix);
    MPI_Barrier(MPI_COMM_WORLD);
}

static void unavailable(result_t *r, const char *why)
{
    r->unavailable = 1;
    snprintf(r->reason, sizeof r->reason, "%s", why);
}

/* Emulated computation: the rank sleeps (no CPU taken from background I/O). */
static void compute(double seconds)
{
    struct timespec ts = {(time_t)seconds, (long)((seconds - (double)(time_t)seconds) * 1e9)};
    while (seconds > 0 && nanosleep(&ts, &ts) != 0)
        ;
}

/* Writes the file: returns 0, or -1 with err set (on this rank). With
 * --timesteps/--compute: compute, then write timestep t into group step<t>;
 * *inside is the time spent in the kernel's write calls. */
static int timed_write(run_t *run, const char *path, hid_t fapl, hid_t dxpl, double *inside, char *err, size_t len)
{
    hid_t f;
    *inside = 0;
    H5E_BEGIN_TRY { f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl); }
    H5E_END_TRY
    if (f < 0) {
        bench_h5_reason(err, len);
        return -1;
    }
    int rc = 0;
    for (int t = 0; rc == 0 && t < run->o->timesteps; t++) {
        hid_t loc = f;
        compute(run->o->compute);
        if (run->o->timesteps > 1) {
            char name[32];
            snprintf(name, sizeof name, "step%d", t);
            if ((loc = H5Gcreate2(f, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)) < 0) {
                bench_h5_reason(err, len);
                rc = -1;
                break;
            }
        }
        double t0 = MPI_Wtime();
        rc        = run->k->write(&run->ctx, loc, dxpl, err, len);
        *inside += MPI_Wtime() - t0;
        if (loc != f)
            H5Gclose(loc);
    }
    if (rc == 0 && run->o->fsync && H5Fflush(f, H5F_SCOPE_GLOBAL) < 0)
        rc = -1, bench_h5_reason(err, len);
    if (H5Fclose(f) < 0 && rc == 0)
        rc = -1, bench_h5_reason(err, len);
    return rc;
}

static int timed_read(run_t *run, const char *path, hid_t fapl, hid_t dxpl, char *err, size_t len)
{
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, fapl), loc = f;
    if (f < 0) {
        bench_h5_reason(err, len);
        return -1;
    }
    if (run->o->timesteps > 1) { /* the last timestep */
        char name[32];
        snprintf(name, sizeof name, "step%d", run->o->timesteps - 1);
        loc = H5Gopen2(f, name, H5P_DEFAULT);
    }
    int rc = loc < 0 ? (bench_h5_reason(err, len), -1) : run->k->read(&run->ctx, loc, dxpl, err, len);
    if (loc >= 0 && loc != f)
        H5Gclose(loc);
    if (H5Fclose(f) < 0 && rc == 0)
        rc = -1, bench_h5_reason(err, len);
    return rc;
}

/* Between the write and the read phase, untimed: rank 0 of each node drops the
 * caches (--read-cache drop) or evicts the files of this variant from them
 * (fadvise, also the fallback when dropping is not permitted). Every rank learns
 * the weakest method any node got, and the first node's reason for falling back. */
static void cold_cache(run_t *run, const result_t *r)
{
    const bench_opts_t *o = run->o;
    if (o->read_cache == CACHE_NONE)
        return;
    char err[BENCH_MSG] = "", path[4096], prefix[256];
    int  used = o->read_cache, worst;
    file_names(run, r, path, sizeof path, prefix, sizeof prefix);
    MPI_Barrier(MPI_COMM_WORLD); /* every rank has closed the file */
    if (run->node_leader) {
        if (used == CACHE_DROP && tagg_drop_caches(o->drop_file, err, sizeof err) < 0)
            used = CACHE_FADVISE;
        if (used == CACHE_FADVISE) {
            char ferr[BENCH_MSG] = "";
            if (bench_evict_prefix(o->dir, prefix, ferr, sizeof ferr) < 0) {
                used = CACHE_NONE;
                snprintf(err + strlen(err), sizeof err - strlen(err), "%s%s", err[0] ? "; " : "", ferr);
            }
        }
    }
    MPI_Allreduce(&used, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    int fell = agree(used != (int)o->read_cache, err, sizeof err);
    if (fell && !run->cache_note[0])
        snprintf(run->cache_note, sizeof run->cache_note, "%s", err);
    if (worst > (int)run->cache_used)
        run->cache_used = (bench_cache_t)worst;
}

static uint64_t count_bad(const bench_ctx_t *c)
{
    if (memcmp(c->wbuf, c->rbuf, (size_t)c->bytes) == 0)
        return 0;
    uint64_t bad = 0;
    for (uint64_t i = 0; i < c->bytes; i++)
        bad += c->wbuf[i] != c->rbuf[i];
    return bad;
}

static void one_rep(run_t *run, result_t *r, int rep)
{
    const bench_opts_t *o = run->o;
    char                err[BENCH_MSG] = "", path[4096], prefix[256];
    file_names(run, r, path, sizeof path, prefix, sizeof prefix);
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS), rfapl = H5Pcreate(H5P_FILE_ACCESS), dxpl = H5Pcreate(H5P_DATASET_XFER);
    int   rc   = r->v.kind->make_fapl(&r->v, o, run->ctx.comm, o->fsync, fapl, err, sizeof err);
    if (rc == 0)
        rc = r->v.kind->make_fapl(&r->v, o, run->ctx.comm, 0, rfapl, err, sizeof err);
    if (rc == 0 && H5Pset_dxpl_mpio(dxpl, r->v.xfer) < 0)
        rc = -1, bench_h5_reason(err, sizeof err);
    if (agree(rc < 0, err, sizeof err)) {
        unavailable(r, err);
        goto done;
    }

    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    double inside;
    rc        = timed_write(run, path, fapl, dxpl, &inside, err, sizeof err);
    double tw = max_time(MPI_Wtime() - t0);
    inside    = max_time(inside);
    if (agree(rc < 0, err, sizeof err)) {
        unavailable(r, err);
        goto done;
    }

    for (uint64_t i = 0; i < run->ctx.bytes; i++) /* every byte wrong until read */
        run->ctx.rbuf[i] = (unsigned char)~run->ctx.wbuf[i];
    cold_cache(run, r);
    MPI_Barrier(MPI_COMM_WORLD);
    t0        = MPI_Wtime();
    rc        = timed_read(run, path, rfapl, dxpl, err, sizeof err);
    double tr = max_time(MPI_Wtime() - t0);
    if (agree(rc < 0, err, sizeof err)) {
        r->failed = 1;
        snprintf(r->reason, sizeof r->reason, "read failed: %.480s", err);
        goto done;
    }
    if (o->verify) {
        uint64_t bad = count_bad(&run->ctx), all = 0;
        MPI_Allreduce(&bad, &all, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
        r->bad += all;
        if (all)
            r->failed = 1;
    }
    r->wt[r->done] = tw, r->rt[r->done] = tr, r->it[r->done] = inside, r->done++;
    if (run->ctx.wrank == 0)
        fprintf(stderr,
                "tagg-bench: rep %d/%d %-14s write %8.3f s %10.1f MiB/s (inside writes %.3f s)  read %8.3f s "
                "%10.1f MiB/s%s\n",
                rep + 1, o->reps, r->v.name, tw, (double)run->total * o->timesteps / 1048576.0 / tw, inside, tr,
                (double)run->total / 1048576.0 / tr, r->bad ? "  DATA MISMATCH" : "");
done:
    if (run->ctx.wrank == 0 && (r->unavailable || r->failed) && r->reason[0])
        fprintf(stderr, "tagg-bench: rep %d/%d %-14s %s: %s\n", rep + 1, o->reps, r->v.name,
                r->unavailable ? "unavailable" : "FAILED", r->reason);
    if (!o->keep || r->unavailable)
        clean(run, r, r->unavailable ? H5I_INVALID_HID : fapl);
    H5Pclose(dxpl);
    H5Pclose(rfapl);
    H5Pclose(fapl);
}

/* ------------------------------------------------------------------ report */

typedef struct {
    double med, min, max;
} stat_t;

static stat_t bw_stats(const double *t, int n, uint64_t bytes)
{
    stat_t  s  = {0, 0, 0};
    double *bw = malloc(sizeof *bw * (size_t)(n ? n : 1));
    if (!bw || n == 0) {
        free(bw);
        return s;
    }
    for (int i = 0; i < n; i++)
        bw[i] = (double)bytes / 1048576.0 / t[i];
    s.med = bench_median(bw, n); /* sorts */
    s.min = bw[0], s.max = bw[n - 1];
    free(bw);
    return s;
}

static void human(uint64_t b, char *buf, size_t len)
{
    if (b >= (1ULL << 30))
        snprintf(buf, len, "%.2f GiB", (double)b / (1ULL << 30));
    else if (b >= (1ULL << 20))
        snprintf(buf, len, "%.2f MiB", (double)b / (1ULL << 20));
    else
        snprintf(buf, len, "%.1f KiB", (double)b / 1024.0);
}

static const char *cache_word(bench_cache_t c)
{
    return c == CACHE_DROP ? "drop" : c == CACHE_FADVISE ? "fadvise" : "none";
}

static const char *cache_text(bench_cache_t used, bench_cache_t asked, const char *note)
{
    static char buf[BENCH_MSG + 256];
    const char *what = used == CACHE_DROP      ? "dropped before every read (sync; 3 > /proc/sys/vm/drop_caches, "
                                                 "rank 0 of each node)"
                       : used == CACHE_FADVISE ? "the files evicted before every read (fsync + "
                                                 "POSIX_FADV_DONTNEED, rank 0 of each node; a file server's own "
                                                 "cache may still serve reads)"
                       : asked == CACHE_NONE   ? "not avoided (--read-cache none): reads may come from the page cache"
                                               : "NOT avoided: reads may come from the page cache";
    snprintf(buf, sizeof buf, "%s [%s]%s%s%s", what, cache_word(used), note[0] ? " (fell back: " : "", note,
             note[0] ? ")" : "");
    return buf;
}

/* HDF5 reads these when it initialises: left set (after `eval "$(scripts/tagg.sh
 * env)"`, say) they would send the MPI-IO baselines through tagg or another
 * driver, and the table would compare tagg with itself. Every variant chooses
 * its driver itself, so they go before the first HDF5 call, and the header
 * says which were set. */
static char redirects_dropped[256];

static void drop_redirects(void)
{
    static const char *const names[] = {"HDF5_VOL_CONNECTOR", "HDF5_DRIVER", "HDF5_DRIVER_CONFIG"};
    size_t                   at      = 0;
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        if (!getenv(names[i]))
            continue;
        int w = snprintf(redirects_dropped + at, sizeof redirects_dropped - at, "%s%s", at ? ", " : "", names[i]);
        if (w > 0 && (size_t)w < sizeof redirects_dropped - at)
            at += (size_t)w;
        unsetenv(names[i]);
    }
}

static void report(const run_t *run, const result_t *res, int n)
{
    const bench_opts_t *o = run->o;
    char                desc[512], sz[32];
    run->k->describe(&run->ctx, desc, sizeof desc);
    human(run->total, sz, sizeof sz);
    printf("tagg-bench: %s\n", desc);
    printf("tagg-bench: ranks=%d nodes=%d files=%s reps=%d rotate=%d fsync=%d verify=%d dir=%s raw bytes/rep=%llu "
           "(%s)\n",
           run->ctx.wsize, run->nodes, o->per_node ? "per-node" : "shared", o->reps, o->rotate, o->fsync, o->verify,
           o->dir,
           (unsigned long long)run->total, sz);
    printf("tagg-bench: read cache: %s\n", cache_text(run->cache_used, o->read_cache, run->cache_note));
    if (redirects_dropped[0])
        printf("tagg-bench: ignored from the environment: %s (it would redirect the MPI-IO baselines; every variant "
               "sets its own driver)\n",
               redirects_dropped);
    /* The reference of the ratio columns: the better MPI-IO mode (by median),
     * for writes and reads separately. */
    stat_t      ref_w = {0, 0, 0}, ref_r = {0, 0, 0};
    const char *ref_wn = NULL, *ref_rn = NULL;
    for (int i = 0; i < n; i++)
        if (!strcmp(res[i].v.kind->kind, "mpiio") && res[i].done && !res[i].unavailable && !res[i].failed) {
            stat_t w = bw_stats(res[i].wt, res[i].done, run->total * (uint64_t)o->timesteps);
            stat_t rd = bw_stats(res[i].rt, res[i].done, run->total);
            if (w.med > ref_w.med)
                ref_w = w, ref_wn = res[i].v.name;
            if (rd.med > ref_r.med)
                ref_r = rd, ref_rn = res[i].v.name;
        }
    if (ref_wn)
        printf("tagg-bench: write x, read x: median / the best MPI-IO mode's median (write: %s, read: %s)\n",
               ref_wn, ref_rn);
    printf("%-15s %11s %10s %23s %10s %23s %7s %7s  %s\n", "variant", "bytes/rep", "write MiB/s", "(min .. max)",
           "read MiB/s", "(min .. max)", "write x", "read x", "verify");
    for (int i = 0; i < n; i++) {
        const result_t *r = &res[i];
        if (r->unavailable) {
            printf("%-15s unavailable: %s\n", r->v.name, r->reason);
            continue;
        }
        if (!r->done) {
            printf("%-15s FAILED: %s\n", r->v.name, r->reason);
            continue;
        }
        stat_t w = bw_stats(r->wt, r->done, run->total * (uint64_t)o->timesteps), rd = bw_stats(r->rt, r->done, run->total);
        char   wx[16] = "-", rx[16] = "-", range_w[32], range_r[32], verdict[BENCH_MSG + 32];
        if (ref_w.med > 0 && r->done)
            snprintf(wx, sizeof wx, "%.2f", w.med / ref_w.med), snprintf(rx, sizeof rx, "%.2f", rd.med / ref_r.med);
        snprintf(range_w, sizeof range_w, "(%.1f .. %.1f)", w.min, w.max);
        snprintf(range_r, sizeof range_r, "(%.1f .. %.1f)", rd.min, rd.max);
        if (r->failed && r->bad)
            snprintf(verdict, sizeof verdict, "FAILED (%llu bytes differ)", (unsigned long long)r->bad);
        else if (r->failed)
            snprintf(verdict, sizeof verdict, "FAILED (%s)", r->reason);
        else
            snprintf(verdict, sizeof verdict, o->verify ? "ok" : "not checked");
        printf("%-15s %11s %11.1f %23s %10.1f %23s %7s %7s  %s\n", r->v.name, sz, w.med, range_w, rd.med, range_r,
               wx, rx, verdict);
    }
    if (o->timesteps > 1 || o->compute > 0) {
        double comp = o->compute * o->timesteps;
        printf("\ntimesteps=%d compute=%.3f s each (%.3f s in all); medians over %d repetitions, max over ranks\n",
               o->timesteps, o->compute, comp, o->reps);
        printf("%-15s %14s %14s %14s %16s\n", "variant", "inside writes", "write phase", "minus compute",
               "inside/timestep");
        for (int i = 0; i < n; i++) {
            const result_t *r = &res[i];
            if (r->unavailable || !r->done)
                continue;
            double *a = malloc(sizeof *a * (size_t)r->done), *b = malloc(sizeof *b * (size_t)r->done);
            if (!a || !b) {
                free(a), free(b);
                continue;
            }
            memcpy(a, r->it, sizeof *a * (size_t)r->done);
            memcpy(b, r->wt, sizeof *b * (size_t)r->done);
            double in = bench_median(a, r->done), tot = bench_median(b, r->done);
            printf("%-15s %12.3f s %12.3f s %12.3f s %14.4f s\n", r->v.name, in, tot, tot - comp,
                   in / o->timesteps);
            free(a), free(b);
        }
    }
    fflush(stdout);
}

/* Which variant runs j-th in repetition rep (--rotate), and back: the
 * position (0-based) of variant i in repetition rep. */
static int variant_at(const bench_opts_t *o, int n, int rep, int j)
{
    return (int)((j + (long long)rep * o->rotate) % n);
}

static int position_of(const bench_opts_t *o, int n, int rep, int i)
{
    long long p = ((long long)i - (long long)rep * o->rotate) % n;
    return (int)(p < 0 ? p + n : p);
}

static int write_csv(const run_t *run, const result_t *res, int n)
{
    FILE *f = fopen(run->o->csv, "w");
    if (!f) {
        fprintf(stderr, "tagg-bench: cannot write '%s'\n", run->o->csv);
        return -1;
    }
    fprintf(f, "kernel,ranks,files,variant,rep,status,bytes,write_s,write_MiBs,read_s,read_MiBs,read_cache,"
               "position\n");
    const char *files = run->o->per_node ? "per-node" : "shared", *cw = cache_word(run->cache_used);
    for (int i = 0; i < n; i++) {
        const result_t *r    = &res[i];
        const char     *stat = r->unavailable ? "unavailable" : r->failed ? "failed" : "ok";
        for (int j = 0; j < r->done; j++)
            fprintf(f, "%s,%d,%s,%s,%d,%s,%llu,%.6f,%.3f,%.6f,%.3f,%s,%d\n", run->k->name, run->ctx.wsize, files,
                    r->v.name, j + 1, stat, (unsigned long long)run->total, r->wt[j],
                    (double)run->total * run->o->timesteps / 1048576.0 / r->wt[j], r->rt[j],
                    (double)run->total / 1048576.0 / r->rt[j], cw, position_of(run->o, n, j, i) + 1);
        if (r->unavailable || r->failed)
            fprintf(f, "%s,%d,%s,%s,-,%s: %s,%llu,,,,,%s,\n", run->k->name, run->ctx.wsize, files, r->v.name, stat,
                    r->reason, (unsigned long long)run->total, cw);
        if (!r->done)
            continue;
        stat_t w = bw_stats(r->wt, r->done, run->total * (uint64_t)run->o->timesteps), rd = bw_stats(r->rt, r->done, run->total);
        fprintf(f, "%s,%d,%s,%s,median,%s,%llu,,%.3f,,%.3f,%s,\n", run->k->name, run->ctx.wsize, files, r->v.name,
                stat, (unsigned long long)run->total, w.med, rd.med, cw);
        fprintf(f, "%s,%d,%s,%s,min,%s,%llu,,%.3f,,%.3f,%s,\n", run->k->name, run->ctx.wsize, files, r->v.name,
                stat, (unsigned long long)run->total, w.min, rd.min, cw);
        fprintf(f, "%s,%d,%s,%s,max,%s,%llu,,%.3f,,%.3f,%s,\n", run->k->name, run->ctx.wsize, files, r->v.name,
                stat, (unsigned long long)run->total, w.max, rd.max, cw);
    }
    return fclose(f) == 0 ? 0 : -1;
}

/* ------------------------------------------------------------------ main */

/* The file communicator: the world, or the ranks of this node. */
static void split_files(run_t *run, MPI_Comm *comm)
{
    int      wrank = run->ctx.wrank;
    MPI_Comm leaders, node;
    int      nrank;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, wrank, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &nrank);
    run->node_leader = nrank == 0;
    MPI_Comm_split(MPI_COMM_WORLD, nrank == 0 ? 0 : MPI_UNDEFINED, wrank, &leaders);
    int ids[2] = {0, 0};
    if (leaders != MPI_COMM_NULL) {
        MPI_Comm_rank(leaders, &ids[0]);
        MPI_Comm_size(leaders, &ids[1]);
        MPI_Comm_free(&leaders);
    }
    MPI_Bcast(ids, 2, MPI_INT, 0, node);
    run->node = ids[0], run->nodes = ids[1];
    if (run->o->per_node) {
        *comm = node;
        return;
    }
    MPI_Comm_free(&node);
    MPI_Comm_dup(MPI_COMM_WORLD, comm);
    run->node = 0;
}

int main(int argc, char **argv)
{
    int provided, status = 0;
    drop_redirects(); /* before HDF5 initialises (at its first call, after this) */
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    bench_opts_t o;
    run_t        run;
    memset(&run, 0, sizeof run);
    MPI_Comm_rank(MPI_COMM_WORLD, &run.ctx.wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &run.ctx.wsize);
    char            err[BENCH_MSG] = "";
    bench_variant_t variants[BENCH_MAX_VARIANTS];
    int             n  = 0;
    int             rc = bench_parse(argc, argv, &o, err, sizeof err);
    if (rc == 1) {
        if (run.ctx.wrank == 0)
            bench_usage();
        MPI_Finalize();
        return 0;
    }
    if (rc == 0 && (n = bench_variants_select(&o, variants, BENCH_MAX_VARIANTS, err, sizeof err)) < 0)
        rc = -1;
    if (rc < 0) { /* every rank parsed the same argv: every rank stops here */
        if (run.ctx.wrank == 0)
            fprintf(stderr, "tagg-bench: %s\n", err);
        MPI_Finalize();
        return 2;
    }
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL); /* errors are collected and reported per variant */
    run.o = &o, run.k = bench_find_kernel(o.kernel), run.ctx.opts = &o;
    run.cache_used = o.read_cache; /* cold_cache only ever weakens it */
    unsigned long pid = (unsigned long)getpid();
    MPI_Bcast(&pid, 1, MPI_UNSIGNED_LONG, 0, MPI_COMM_WORLD);
    run.id = pid;
    split_files(&run, &run.ctx.comm);
    MPI_Comm_rank(run.ctx.comm, &run.ctx.rank);
    MPI_Comm_size(run.ctx.comm, &run.ctx.size);

    rc = run.k->setup(&run.ctx, err, sizeof err);
    if (agree(rc < 0, err, sizeof err)) {
        if (run.ctx.wrank == 0)
            fprintf(stderr, "tagg-bench: %s: %s\n", o.kernel, err);
        status = 2;
        goto out;
    }
    MPI_Allreduce(&run.ctx.bytes, &run.total, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);

    result_t *res = calloc((size_t)n, sizeof *res);
    int       oom = !res;
    for (int i = 0; res && i < n; i++) {
        res[i].v  = variants[i];
        res[i].wt = calloc((size_t)o.reps, sizeof(double));
        res[i].rt = calloc((size_t)o.reps, sizeof(double));
        res[i].it = calloc((size_t)o.reps, sizeof(double));
        oom |= !res[i].wt || !res[i].rt || !res[i].it;
    }
    snprintf(err, sizeof err, "out of memory");
    if (agree(oom, err, sizeof err)) {
        if (run.ctx.wrank == 0)
            fprintf(stderr, "tagg-bench: %s\n", err);
        for (int i = 0; res && i < n; i++)
            free(res[i].wt), free(res[i].rt), free(res[i].it);
        free(res);
        status = 2;
        goto out;
    }
    for (int rep = 0; rep < o.reps; rep++)
        for (int j = 0; j < n; j++) {
            int i = variant_at(&o, n, rep, j);
            if (!res[i].unavailable && !res[i].failed)
                one_rep(&run, &res[i], rep);
        }
    if (run.ctx.wrank == 0) {
        report(&run, res, n);
        if (o.csv && write_csv(&run, res, n) < 0)
            status = 1;
    }
    for (int i = 0; i < n; i++) {
        if (res[i].failed)
            status = 1;
        free(res[i].wt), free(res[i].rt), free(res[i].it);
    }
    free(res);
    MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
out:
    free(run.ctx.wbuf), free(run.ctx.rbuf), free(run.ctx.state);
    MPI_Comm_free(&run.ctx.comm);
    MPI_Finalize();
    return status;
}
