/* tagg-bench command line. Every rank parses the same argv, so every rank reaches
 * the same verdict; no MPI here. */
#include "opts.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void bench_usage(void)
{
    printf("Usage: mpiexec -n N tagg-bench --kernel K [options]\n\n"
           "Writes a kernel's data through HDF5, reads it back and checks it, once per variant (file\n"
           "driver) and repetition, variants alternating; prints one table of median bandwidths.\n\n"
           "Kernels (--kernel):\n");
    for (int i = 0; bench_kernels[i]; i++)
        printf("  %-9s %s\n", bench_kernels[i]->name, bench_kernels[i]->help);
    printf("\n");
    bench_variants_help();
    printf("\nGeneral options:\n"
           "  --reps N               repetitions per variant (default 5)\n"
           "  --rotate N             each repetition starts N variants later than the one before, so that\n"
           "                         no variant always runs first or after the same one (default 1; 0: the\n"
           "                         order of --variants every time; tagg-tune heldout gives 2 to keep each\n"
           "                         warm-up just before its variant). The CSV says each run's position\n"
           "  --dir DIR              where files go (default /tmp)\n"
           "  --keep                 keep the files of the last repetition of each variant\n"
           "  --csv FILE             every repetition and the medians, as CSV (rank 0 writes it)\n"
           "  --no-verify            do not compare what is read with what was written\n"
           "  --fsync                H5Fflush before close: MPI_File_sync in the MPI-IO and subfiling\n"
           "                         drivers, fsync of every file in tagg; write times include the storage\n"
           "  --tagg-config STR      tagg configuration of tagg-shared and tagg-subfiles (default layout=shared)\n"
           "  --extra-tagg NAME=CFG  one more tagg variant (repeatable), e.g. tagg-mpiio=backend=mpiio\n"
           "  --files shared|per-node one file for all ranks (default), or one per node (ranks of a node\n"
           "                         share it: MPI_Comm_split_type(MPI_COMM_TYPE_SHARED))\n"
           "  --seed N               data and size distribution seed (default 1)\n"
           "  --subfiling-stripe SZ  stripe size of the subfiling variant (default: HDF5's, 32 MiB)\n"
           "  --timesteps N          the kernel writes N times into one file (group step<t> each; the read\n"
           "                         phase reads the last one back); default 1\n"
           "  --compute SECONDS      emulated computation (sleep) before each timestep's write; the report\n"
           "                         then adds time inside the writes vs total (asynchronous mode: async=1)\n"
           "  --read-cache drop|fadvise|none  between the write and the read phase (untimed), so that reads\n"
           "                         come from storage, not from the page cache: drop = sync, then rank 0 of\n"
           "                         each node writes 3 to /proc/sys/vm/drop_caches (needs root; falls back to\n"
           "                         fadvise, and says so, when not permitted); fadvise = rank 0 of each node\n"
           "                         fsyncs the run's files and evicts them (POSIX_FADV_DONTNEED; a file\n"
           "                         server's own cache may still serve them); none = reads may be cached.\n"
           "                         Default drop. The table's header says which method was used\n"
           "  --drop-caches-file F   what drop writes to (default /proc/sys/vm/drop_caches; tests name an\n"
           "                         unwritable path to see the fallback)\n"
           "Kernel options:\n"
           "  --dist uniform|random|normal  array1d block sizes (default uniform)\n"
           "  --size SZ              array1d: uniform size, or the upper bound of random (default 100K)\n"
           "  --mean SZ --sd SZ      array1d normal distribution (default size/2 and size/6)\n"
           "  --particles N          hacc, vpic: particles per rank (default 100000)\n"
           "  --layout aos|soa       hacc: one compound dataset, or nine datasets (default aos); vpic: one\n"
           "                         compound written member by member (INTERLEAVED), or 8 datasets (CONTIG)\n"
           "  --grid NX NY NZ        s3d: points per rank (default 32 32 32)\n"
           "  --vars N               s3d: values per point (default 11)\n"
           "  --rows N --cols N      columns: rows per rank (default 256), columns in all (default 1024)\n"
           "Sizes (SZ) accept K, M, G suffixes (binary). Exit status: 0 when every available\n"
           "variant read back what it wrote; 1 when a check or a read failed; 2 on bad options.\n");
}

static int pick(const char *v, const char *const *names, int n, int *out)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(v, names[i])) {
            *out = i;
            return 0;
        }
    return -1;
}

static int number(const char *opt, const char *v, uint64_t lo, uint64_t *out, char *err, size_t len)
{
    if (bench_parse_size(v, out) < 0 || *out < lo) {
        snprintf(err, len, "%s: '%s' is not a number >= %llu (suffixes K, M, G allowed)", opt, v,
                 (unsigned long long)lo);
        return -1;
    }
    return 0;
}

/* A count in lo..hi. */
static int small_number(const char *opt, const char *v, uint64_t lo, uint64_t hi, int *out, char *err, size_t len)
{
    uint64_t u;
    if (number(opt, v, lo, &u, err, len) < 0)
        return -1;
    if (u > hi) {
        snprintf(err, len, "%s: at most %llu", opt, (unsigned long long)hi);
        return -1;
    }
    *out = (int)u;
    return 0;
}

int bench_parse(int argc, char **argv, bench_opts_t *o, char *err, size_t len)
{
    static const char *const dists[] = {"uniform", "random", "normal"}, *const layouts[] = {"aos", "soa"},
                             *const files[] = {"shared", "per-node"}, *const caches[] = {"drop", "fadvise", "none"};
    memset(o, 0, sizeof *o);
    o->reps = 5, o->rotate = 1, o->dir = "/tmp", o->verify = 1, o->tagg_config = "layout=shared", o->seed = 1;
    o->size = 100 * 1024, o->mean = -1, o->sd = -1, o->particles = 100000, o->vars = 11;
    o->grid[0] = o->grid[1] = o->grid[2] = 32;
    o->timesteps = 1;
    o->rows = 256, o->cols = 1024, o->read_cache = CACHE_DROP, o->drop_file = "/proc/sys/vm/drop_caches";
    uint64_t u;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        /* Options without a value. */
        if (!strcmp(a, "--help") || !strcmp(a, "-h"))
            return 1;
        if (!strcmp(a, "--keep")) {
            o->keep = 1;
            continue;
        }
        if (!strcmp(a, "--no-verify")) {
            o->verify = 0;
            continue;
        }
        if (!strcmp(a, "--fsync")) {
            o->fsync = 1;
            continue;
        }
        int nval = !strcmp(a, "--grid") ? 3 : 1;
        if (strncmp(a, "--", 2)) {
            snprintf(err, len, "unexpected argument '%s' (see --help)", a);
            return -1;
        }
        if (i + nval >= argc) {
            snprintf(err, len, "%s needs %s", a, nval == 3 ? "three values" : "a value");
            return -1;
        }
        const char *v = argv[++i];
        int         k = 0;
        if (!strcmp(a, "--kernel")) {
            o->kernel = v;
        } else if (!strcmp(a, "--variants")) {
            snprintf(o->variants, sizeof o->variants, "%s", v);
        } else if (!strcmp(a, "--reps")) {
            if (small_number(a, v, 1, 100000, &o->reps, err, len) < 0)
                return -1;
        } else if (!strcmp(a, "--rotate")) {
            if (small_number(a, v, 0, 1000, &o->rotate, err, len) < 0)
                return -1;
        } else if (!strcmp(a, "--dir")) {
            o->dir = v;
        } else if (!strcmp(a, "--csv")) {
            o->csv = v;
        } else if (!strcmp(a, "--tagg-config")) {
            o->tagg_config = v;
        } else if (!strcmp(a, "--extra-tagg")) {
            if (o->n_extra >= BENCH_MAX_VARIANTS) {
                snprintf(err, len, "--extra-tagg: at most %d", BENCH_MAX_VARIANTS);
                return -1;
            }
            o->extra[o->n_extra++] = v;
        } else if (!strcmp(a, "--files")) {
            if (pick(v, files, 2, &k) < 0) {
                snprintf(err, len, "--files: '%s' (valid: shared, per-node)", v);
                return -1;
            }
            o->per_node = k;
        } else if (!strcmp(a, "--seed")) {
            if (number(a, v, 0, &o->seed, err, len) < 0)
                return -1;
        } else if (!strcmp(a, "--subfiling-stripe")) {
            if (number(a, v, 1, &u, err, len) < 0)
                return -1;
            o->subfiling_stripe = (int64_t)u;
        } else if (!strcmp(a, "--timesteps")) {
            if (small_number(a, v, 1, 100000, &o->timesteps, err, len) < 0)
                return -1;
        } else if (!strcmp(a, "--compute")) {
            char *end;
            o->compute = strtod(v, &end);
            if (end == v || *end || !(o->compute >= 0) || o->compute > 3600) {
                snprintf(err, len, "--compute: '%s' is not a number of seconds in [0, 3600]", v);
                return -1;
            }
        } else if (!strcmp(a, "--read-cache")) {
            if (pick(v, caches, 3, &k) < 0) {
                snprintf(err, len, "--read-cache: '%s' (valid: drop, fadvise, none)", v);
                return -1;
            }
            o->read_cache = (bench_cache_t)k;
        } else if (!strcmp(a, "--drop-caches-file")) {
            o->drop_file = v;
        } else if (!strcmp(a, "--rows") || !strcmp(a, "--cols")) {
            if (number(a, v, 1, &u, err, len) < 0)
                return -1;
            if (u > (1ULL << 32)) {
                snprintf(err, len, "%s: at most %llu", a, 1ULL << 32);
                return -1;
            }
            *(a[2] == 'r' ? &o->rows : &o->cols) = u;
        } else if (!strcmp(a, "--dist")) {
            if (pick(v, dists, 3, &k) < 0) {
                snprintf(err, len, "--dist: '%s' (valid: uniform, random, normal)", v);
                return -1;
            }
            o->dist = (bench_dist_t)k;
        } else if (!strcmp(a, "--size")) {
            if (number(a, v, 0, &o->size, err, len) < 0)
                return -1;
        } else if (!strcmp(a, "--mean") || !strcmp(a, "--sd")) {
            if (number(a, v, 0, &u, err, len) < 0)
                return -1;
            *(a[2] == 'm' ? &o->mean : &o->sd) = (double)u;
        } else if (!strcmp(a, "--particles")) {
            if (number(a, v, 0, &o->particles, err, len) < 0)
                return -1;
        } else if (!strcmp(a, "--layout")) {
            if (pick(v, layouts, 2, &k) < 0) {
                snprintf(err, len, "--layout: '%s' (valid: aos, soa)", v);
                return -1;
            }
            o->layout = (bench_layout_t)k;
        } else if (!strcmp(a, "--grid")) {
            for (int d = 0; d < 3; d++)
                if (number(a, argv[i + d], 1, &o->grid[d], err, len) < 0)
                    return -1;
            i += 2;
        } else if (!strcmp(a, "--vars")) {
            if (small_number(a, v, 1, 1000000, &o->vars, err, len) < 0)
                return -1;
        } else {
            snprintf(err, len, "unknown option '%s' (see --help)", a);
            return -1;
        }
    }
    if (!o->kernel) {
        snprintf(err, len, "--kernel is required (see --help)");
        return -1;
    }
    if (!bench_find_kernel(o->kernel)) {
        snprintf(err, len, "--kernel: unknown kernel '%s' (valid:", o->kernel);
        for (int i = 0; bench_kernels[i]; i++)
            snprintf(err + strlen(err), len - strlen(err), " %s", bench_kernels[i]->name);
        snprintf(err + strlen(err), len - strlen(err), ")");
        return -1;
    }
    if (o->mean < 0)
        o->mean = (double)o->size / 2;
    if (o->sd < 0)
        o->sd = (double)o->size / 6;
    return 0;
}

const bench_kernel_t *bench_find_kernel(const char *name)
{
    for (int i = 0; bench_kernels[i]; i++)
        if (!strcmp(bench_kernels[i]->name, name))
            return bench_kernels[i];
    return NULL;
}
