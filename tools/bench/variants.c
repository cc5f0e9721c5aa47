/* tagg-bench variants: the file drivers compared, one table.
 *
 * A variant is a kind (how the file-access list is made: MPI-IO driver, HDF5's
 * subfiling driver, the tagg VFD by name) plus a transfer mode and, for tagg, a
 * configuration string. Adding a driver is one make_fapl function and one row. */
#include "bench.h"

#include <H5FDsubfiling.h>
#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------------ kinds */

static int fapl_mpio(const bench_variant_t *v, const bench_opts_t *o, MPI_Comm comm, int fsync, hid_t fapl,
                     char *err,
                     size_t len)
{
    (void)v, (void)o, (void)fsync;
    if (H5Pset_fapl_mpio(fapl, comm, MPI_INFO_NULL) < 0) {
        bench_h5_reason(err, len);
        return -1;
    }
    return 0;
}

static int fapl_subfiling(const bench_variant_t *v, const bench_opts_t *o, MPI_Comm comm, int fsync, hid_t fapl,
                     char *err,
                          size_t len)
{
    (void)v, (void)fsync;
#ifdef H5_HAVE_SUBFILING_VFD
    int provided = 0;
    MPI_Query_thread(&provided);
    if (provided != MPI_THREAD_MULTIPLE) {
        snprintf(err, len, "the subfiling driver needs MPI_THREAD_MULTIPLE (MPI provides level %d)", provided);
        return -1;
    }
    if (H5Pset_mpi_params(fapl, comm, MPI_INFO_NULL) < 0)
        goto fail;
    if (o->subfiling_stripe <= 0)
        return H5Pset_fapl_subfiling(fapl, NULL) < 0 ? (bench_h5_reason(err, len), -1) : 0;
    /* Start from the driver's defaults (it returns them for a list without it). */
    H5FD_subfiling_config_t cfg;
    if (H5Pget_fapl_subfiling(fapl, &cfg) < 0)
        goto fail;
    cfg.shared_cfg.stripe_size = o->subfiling_stripe;
    herr_t rc                  = H5Pset_fapl_subfiling(fapl, &cfg);
    H5Pclose(cfg.ioc_fapl_id);
    if (rc < 0)
        goto fail;
    return 0;
fail:
    bench_h5_reason(err, len);
    return -1;
#else
    (void)o, (void)comm, (void)fapl;
    snprintf(err, len, "this HDF5 was built without the subfiling driver");
    return -1;
#endif
}

static int fapl_tagg(const bench_variant_t *v, const bench_opts_t *o, MPI_Comm comm, int fsync, hid_t fapl,
                     char *err,
                     size_t len)
{
    /* --fsync: the H5Fflush before close syncs through tagg's flush, as it does
     * through the MPI-IO driver's (MPI_File_sync); adding fsync=1 would sync a
     * second time at close and charge tagg one fsync more than the others. */
    (void)o, (void)fsync;
    if (H5Pset_mpi_params(fapl, comm, MPI_INFO_NULL) < 0 || H5Pset_driver_by_name(fapl, "tagg", v->config) < 0) {
        bench_h5_reason(err, len);
        return -1;
    }
    return 0;
}

static const bench_variant_kind_t kind_mpio      = {"mpiio", fapl_mpio};
static const bench_variant_kind_t kind_subfiling = {"subfiling", fapl_subfiling};
static const bench_variant_kind_t kind_tagg      = {"tagg", fapl_tagg};

/* ------------------------------------------------------------------ the default variants */

enum { CFG_NONE, CFG_TAGG, CFG_TAGG_SUBFILES };

static const struct {
    const char                 *name;
    const bench_variant_kind_t *kind;
    H5FD_mpio_xfer_t            xfer;
    int                         cfg;
    const char                 *meaning;
} defaults[] = {
    {"mpiio-indep", &kind_mpio, H5FD_MPIO_INDEPENDENT, CFG_NONE,
     "H5Pset_fapl_mpio, independent transfers (each rank its own MPI_File_write_at)"},
    {"mpiio-coll", &kind_mpio, H5FD_MPIO_COLLECTIVE, CFG_NONE,
     "H5Pset_fapl_mpio, collective transfers (ROMIO two-phase I/O)"},
    {"subfiling", &kind_subfiling, H5FD_MPIO_COLLECTIVE, CFG_NONE,
     "H5Pset_fapl_subfiling (HDF5's subfiling driver: I/O concentrators, <file>.subfile_*), collective"},
    {"tagg-shared", &kind_tagg, H5FD_MPIO_COLLECTIVE, CFG_TAGG,
     "tagg VFD by name with --tagg-config (default layout=shared), collective"},
    {"tagg-subfiles", &kind_tagg, H5FD_MPIO_COLLECTIVE, CFG_TAGG_SUBFILES,
     "tagg VFD with --tagg-config plus layout=subfiles, collective"},
};
#define N_DEFAULTS ((int)(sizeof defaults / sizeof defaults[0]))

static void set_default(const bench_opts_t *o, int i, bench_variant_t *v)
{
    memset(v, 0, sizeof *v);
    snprintf(v->name, sizeof v->name, "%s", defaults[i].name);
    v->kind    = defaults[i].kind;
    v->xfer    = defaults[i].xfer;
    v->meaning = defaults[i].meaning;
    if (defaults[i].cfg == CFG_TAGG)
        snprintf(v->config, sizeof v->config, "%s", o->tagg_config);
    else if (defaults[i].cfg == CFG_TAGG_SUBFILES)
        snprintf(v->config, sizeof v->config, "%s%slayout=subfiles", o->tagg_config,
                 o->tagg_config[0] ? ";" : "");
}

/* "NAME=CONFIG" -> a collective tagg variant. */
static int set_extra(const char *spec, bench_variant_t *v, char *err, size_t len)
{
    const char *eq = strchr(spec, '=');
    if (!eq || eq == spec || (size_t)(eq - spec) >= sizeof v->name) {
        snprintf(err, len, "--extra-tagg '%s': expected NAME=CONFIG (e.g. tagg-mpiio=backend=mpiio)", spec);
        return -1;
    }
    memset(v, 0, sizeof *v);
    memcpy(v->name, spec, (size_t)(eq - spec));
    snprintf(v->config, sizeof v->config, "%s", eq + 1);
    v->kind    = &kind_tagg;
    v->xfer    = H5FD_MPIO_COLLECTIVE;
    v->meaning = "tagg VFD with the given configuration, collective";
    return 0;
}

static int find(const bench_variant_t *list, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(list[i].name, name))
            return i;
    return -1;
}

int bench_variants_select(const bench_opts_t *o, bench_variant_t *out, int max, char *err, size_t len)
{
    bench_variant_t extra[BENCH_MAX_VARIANTS];
    int             n = 0;
    for (int i = 0; i < o->n_extra; i++) {
        if (set_extra(o->extra[i], &extra[i], err, len) < 0)
            return -1;
        for (int j = 0; j < N_DEFAULTS; j++)
            if (!strcmp(defaults[j].name, extra[i].name)) {
                snprintf(err, len, "--extra-tagg: '%s' is the name of a built-in variant", extra[i].name);
                return -1;
            }
    }
    int all = !o->variants[0] || !strcmp(o->variants, "all");
    if (all) {
        for (int i = 0; i < N_DEFAULTS && n < max; i++)
            set_default(o, i, &out[n++]);
    } else {
        char list[sizeof o->variants], *save = NULL;
        snprintf(list, sizeof list, "%s", o->variants);
        for (char *tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
            int i, e = find(extra, o->n_extra, tok);
            for (i = 0; i < N_DEFAULTS && strcmp(defaults[i].name, tok); i++)
                ;
            if (find(out, n, tok) >= 0)
                continue;
            if (n >= max) {
                snprintf(err, len, "--variants: at most %d variants", max);
                return -1;
            }
            if (i < N_DEFAULTS)
                set_default(o, i, &out[n++]);
            else if (e >= 0)
                out[n++] = extra[e];
            else {
                snprintf(err, len, "--variants: unknown variant '%s' (valid: all", tok);
                for (i = 0; i < N_DEFAULTS; i++)
                    snprintf(err + strlen(err), len - strlen(err), ", %s", defaults[i].name);
                snprintf(err + strlen(err), len - strlen(err), ", or a name given with --extra-tagg)");
                return -1;
            }
        }
    }
    for (int i = 0; i < o->n_extra; i++) /* --extra-tagg variants always run */
        if (find(out, n, extra[i].name) < 0) {
            if (n >= max) {
                snprintf(err, len, "at most %d variants", max);
                return -1;
            }
            out[n++] = extra[i];
        }
    if (n == 0) {
        snprintf(err, len, "--variants: no variant selected");
        return -1;
    }
    return n;
}

void bench_variants_help(void)
{
    printf("Variants (--variants a,b,...; default all):\n");
    for (int i = 0; i < N_DEFAULTS; i++)
        printf("  %-14s %s\n", defaults[i].name, defaults[i].meaning);
    printf("  NAME           added with --extra-tagg NAME=CONFIG: tagg VFD with CONFIG, collective\n");
    printf("The table's ratio columns divide by the better MPI-IO mode's median (mpiio-indep or mpiio-coll,\n"
           "for writes and reads separately).\n");
}
