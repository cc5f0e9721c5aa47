/* Table-driven tests of the configuration parser: each case is an environment
 * string and a config string, and either the expected effective configuration
 * or the text the rejection must contain. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"

typedef struct {
    const char *env, *str;
    const char *want;   /* canonical effective configuration, or NULL when rejected */
    const char *reject; /* substring of the error message */
} config_case_t;

#define ENGINE "aggregators=0;aggregate=auto;fs_client=auto;direct_io=auto;direct_io_min=1048576;file_io=auto;buffer_size=4194304;buffers=2;overlap=1;speculate=1;block=1048576;strategy=memory-aware;throttle=-1;" \
               "aggr_per_node=-1;topology=;" TIERS_DEF
#define TIERS_DEF "aggr_tier=auto;persistency=none;tiers=;nvr_dir=;hbm_capacity=0;dram_capacity=0;nvr_capacity=0;" \
                  "hbm_emulate=0;"
#define SF_DEF "stripe_size=4194304;subfiles=0"
#define ASYNC_DEF ";async=0;workers=0;staging_bytes=268435456;write_behind=33554432;record=;tuning=;tuning_check=3;tuning_check_writes=1;tuning_check_close=10"
#define DEF_TAIL ENGINE "layout=shared;" SF_DEF ";destination=pfs;drain=none;verify=1;compression=none;compression_level=1;compression_shuffle=byte;compression_typesize=4;salvage=0;fsync=0" ASYNC_DEF
static const config_case_t cases[] = {
    {NULL, NULL, "verbose=0;summary=;backend=tapioca;" DEF_TAIL, NULL},
    {NULL, "", "verbose=0;summary=;backend=tapioca;" DEF_TAIL, NULL},
    {NULL, "verbose=1", "verbose=1;summary=;backend=tapioca;" DEF_TAIL, NULL},
    {NULL, " verbose = 2 ; fsync=yes ;", "verbose=2;summary=;backend=tapioca;" ENGINE "layout=shared;" SF_DEF ";destination=pfs;drain=none;verify=1;compression=none;compression_level=1;compression_shuffle=byte;compression_typesize=4;salvage=0;fsync=1" ASYNC_DEF, NULL},
    {"verbose=1;", "verbose=0", "verbose=0;summary=;backend=tapioca;" DEF_TAIL, NULL}, /* string beats env */
    {"verbose=2;", NULL, "verbose=2;summary=;backend=tapioca;" DEF_TAIL, NULL},
    {NULL, "summary=/tmp/x.log", "verbose=0;summary=/tmp/x.log;backend=tapioca;" DEF_TAIL, NULL},
    {NULL, "fsync=off;fsync=on", "verbose=0;summary=;backend=tapioca;" ENGINE "layout=shared;" SF_DEF ";destination=pfs;drain=none;verify=1;compression=none;compression_level=1;compression_shuffle=byte;compression_typesize=4;salvage=0;fsync=1" ASYNC_DEF, NULL},
    {NULL, "bogus=1", NULL, "unknown key 'bogus' (valid keys: verbose, summary, backend, aggregators, aggregate, fs_client, direct_io, direct_io_min, file_io, buffer_size, buffers, overlap, speculate, block, "
                          "strategy, throttle, aggr_per_node, topology, aggr_tier, persistency, tiers, nvr_dir, hbm_capacity, "
                          "dram_capacity, nvr_capacity, hbm_emulate, layout, stripe_size, subfiles, destination, drain, verify, compression, compression_level, compression_shuffle, compression_typesize, salvage, fsync, async, workers, staging_bytes, write_behind, record, tuning, tuning_check, tuning_check_writes, tuning_check_close)"},
    {NULL, "verbose=9", NULL, "key 'verbose': 9 is out of range [0, 2]"},
    {NULL, "verbose=-1", NULL, "out of range"},
    {NULL, "verbose=two", NULL, "key 'verbose': 'two' is not a whole number"},
    {NULL, "verbose=1x", NULL, "'1x' is not a whole number"},
    {NULL, "verbose=99999999999999999999999", NULL, "is not a whole number"},
    {NULL, "fsync=maybe", NULL, "not a boolean (valid: 1, 0, true, false, yes, no, on, off)"},
    {NULL, "async=on;workers=3;staging_bytes=64M", "verbose=0;summary=;backend=tapioca;" ENGINE "layout=shared;" SF_DEF ";destination=pfs;drain=none;verify=1;compression=none;compression_level=1;compression_shuffle=byte;compression_typesize=4;salvage=0;fsync=0;async=1;workers=3;staging_bytes=67108864;write_behind=33554432;record=;tuning=;tuning_check=3;tuning_check_writes=1;tuning_check_close=10", NULL},
    {NULL, "staging_bytes=1K", NULL, "key 'staging_bytes'"},
    {NULL, "workers=65", NULL, "key 'workers': 65 is out of range [0, 64]"},
    {NULL, "backend=posix", NULL, "key 'backend': unknown value 'posix' (valid: tapioca, mpiio)"},
    {NULL, "layout=striped", NULL, "unknown value 'striped' (valid: shared, subfiles)"},
    {NULL, "layout=subfiles", "verbose=0;summary=;backend=tapioca;" ENGINE "layout=subfiles;" SF_DEF ";destination=pfs;drain=none;verify=1;compression=none;compression_level=1;compression_shuffle=byte;compression_typesize=4;salvage=0;fsync=0" ASYNC_DEF, NULL},
    {NULL, "layout=subfiles;stripe_size=4K;subfiles=3",
     "verbose=0;summary=;backend=tapioca;" ENGINE "layout=subfiles;stripe_size=4096;subfiles=3;destination=pfs;drain=none;verify=1;compression=none;compression_level=1;compression_shuffle=byte;compression_typesize=4;salvage=0;fsync=0" ASYNC_DEF, NULL},
    {NULL, "stripe_size=1GiB;subfiles=65536", "verbose=0;summary=;backend=tapioca;" ENGINE "layout=shared;stripe_size=1073741824;subfiles=65536;destination=pfs;drain=none;verify=1;compression=none;compression_level=1;compression_shuffle=byte;compression_typesize=4;salvage=0;fsync=0" ASYNC_DEF, NULL},
    {"subfiles=2;", "subfiles=5", "verbose=0;summary=;backend=tapioca;" ENGINE "layout=shared;stripe_size=4194304;subfiles=5;destination=pfs;drain=none;verify=1;compression=none;compression_level=1;compression_shuffle=byte;compression_typesize=4;salvage=0;fsync=0" ASYNC_DEF, NULL},
    {"subfiles=2;", NULL, "verbose=0;summary=;backend=tapioca;" ENGINE "layout=shared;stripe_size=4194304;subfiles=2;destination=pfs;drain=none;verify=1;compression=none;compression_level=1;compression_shuffle=byte;compression_typesize=4;salvage=0;fsync=0" ASYNC_DEF, NULL},
    {NULL, "stripe_size=4095", NULL, "key 'stripe_size': 4095 is out of range [4096, 1073741824]"},
    {NULL, "stripe_size=2G", NULL, "out of range"},
    {NULL, "stripe_size=4Q", NULL, "'4Q' is not a size"},
    {NULL, "subfiles=-1", NULL, "key 'subfiles': -1 is out of range [0, 65536]"},
    {NULL, "subfiles=65537", NULL, "out of range"},
    {NULL, "subfiles=3K", NULL, "'3K' is not a whole number"},
    /* node-local subfiles (destination=nvr) and the keys it needs */
    {NULL, "layout=subfiles;destination=nvr;drain=close",
     "verbose=0;summary=;backend=tapioca;" ENGINE "layout=subfiles;" SF_DEF ";destination=nvr;drain=close;verify=1;compression=none;compression_level=1;compression_shuffle=byte;compression_typesize=4;salvage=0;fsync=0" ASYNC_DEF, NULL},
    {NULL, "drain=close", "verbose=0;summary=;backend=tapioca;" ENGINE "layout=shared;" SF_DEF ";destination=pfs;drain=close;verify=1;compression=none;compression_level=1;compression_shuffle=byte;compression_typesize=4;salvage=0;fsync=0" ASYNC_DEF, NULL},
    {NULL, "destination=nvr", NULL, "destination=nvr needs layout=subfiles"},
    {NULL, "layout=subfiles;destination=nvr;subfiles=2", NULL, "one subfile per node: subfiles must be 0"},
    {NULL, "layout=subfiles;destination=nvr;backend=mpiio", NULL, "destination=nvr needs backend=tapioca"},
    {NULL, "destination=ssd", NULL, "unknown value 'ssd' (valid: pfs, nvr)"},
    /* stripe compression (issue 15) */
    {NULL, "layout=subfiles;compression=blosc-zstd;compression_level=5;compression_shuffle=bit;compression_typesize=8",
     "verbose=0;summary=;backend=tapioca;" ENGINE "layout=subfiles;" SF_DEF ";destination=pfs;drain=none;verify=1;compression=blosc-zstd;compression_level=5;compression_shuffle=bit;compression_typesize=8;salvage=0;fsync=0" ASYNC_DEF, NULL},
    {NULL, "compression=lz4", NULL, "compression needs layout=subfiles"},
    {NULL, "layout=subfiles;compression=lz4;async=1;workers=3",
     "verbose=0;summary=;backend=tapioca;" ENGINE "layout=subfiles;" SF_DEF ";destination=pfs;drain=none;verify=1;compression=lz4;compression_level=1;compression_shuffle=byte;compression_typesize=4;salvage=0;fsync=0;async=1;workers=3;staging_bytes=268435456;write_behind=33554432;record=;tuning=;tuning_check=3;tuning_check_writes=1;tuning_check_close=10", NULL},
    {NULL, "layout=subfiles;destination=nvr;compression=zstd", NULL, "not supported with destination=nvr"},
    {NULL, "layout=subfiles;compression=gzip", NULL, "unknown value 'gzip' (valid: none, lz4, zstd, blosc-lz4, blosc-zstd, auto)"},
    {NULL, "layout=subfiles;compression_level=0", NULL, "compression_level"},
    {NULL, "layout=subfiles;compression_shuffle=word", NULL, "(valid: none, byte, bit)"},
    {NULL, "layout=subfiles;compression_typesize=256", NULL, "compression_typesize"},
    {NULL, "drain=open", NULL, "unknown value 'open' (valid: none, close)"},
    {NULL, "fs_client=fuse", NULL, "unknown value 'fuse' (valid: auto, serial, parallel)"},
    {NULL, "verbose", NULL, "'verbose' is not of the form key=value"},
    {"verbose=7;", NULL, NULL, "[from the TAGG_* environment]"},
    {NULL, "backend=mpiio;aggregators=3;buffer_size=64K;buffers=3;overlap=off;block=4K;strategy=longest;throttle=1;aggr_per_node=2",
     "verbose=0;summary=;backend=mpiio;aggregators=3;aggregate=auto;fs_client=auto;direct_io=auto;direct_io_min=1048576;file_io=auto;buffer_size=65536;buffers=3;overlap=0;speculate=1;block=4096;strategy=longest;"
     "throttle=1;aggr_per_node=2;topology=;" TIERS_DEF "layout=shared;" SF_DEF ";destination=pfs;drain=none;verify=1;compression=none;compression_level=1;compression_shuffle=byte;compression_typesize=4;salvage=0;fsync=0" ASYNC_DEF,
     NULL},
    {NULL, "buffer_size=1K", NULL, "key 'buffer_size': 1024 is out of range [4096, 1073741824]"},
    {NULL, "buffer_size=2G", NULL, "out of range"},
    {NULL, "buffer_size=4Q", NULL, "is not a size (a whole number with an optional K, M, G or T suffix)"},
    {NULL, "buffers=1", NULL, "key 'buffers': 1 is out of range [2, 16]"},
    {NULL, "throttle=0;aggr_per_node=0", "verbose=0;summary=;backend=tapioca;aggregators=0;aggregate=auto;fs_client=auto;direct_io=auto;direct_io_min=1048576;file_io=auto;buffer_size=4194304;buffers=2;"
     "overlap=1;speculate=1;block=1048576;strategy=memory-aware;throttle=0;aggr_per_node=0;topology=;" TIERS_DEF "layout=shared;" SF_DEF ";destination=pfs;drain=none;verify=1;compression=none;compression_level=1;compression_shuffle=byte;compression_typesize=4;salvage=0;fsync=0"
     ASYNC_DEF,
     NULL},
    /* aggregate or not (issue 13): the model's choice, or forced */
    {"aggregate=never;", NULL, "verbose=0;summary=;backend=tapioca;aggregators=0;aggregate=never;fs_client=auto;direct_io=auto;direct_io_min=1048576;file_io=auto;buffer_size=4194304;buffers=2;"
     "overlap=1;speculate=1;block=1048576;strategy=memory-aware;throttle=-1;aggr_per_node=-1;topology=;" TIERS_DEF "layout=shared;" SF_DEF
     ";destination=pfs;drain=none;verify=1;compression=none;compression_level=1;compression_shuffle=byte;compression_typesize=4;salvage=0;fsync=0" ASYNC_DEF, NULL},
    {NULL, "aggregate=sometimes", NULL, "key 'aggregate': unknown value 'sometimes' (valid: auto, always, never)"},
    {NULL, "throttle=-2", NULL, "key 'throttle': -2 is out of range [-1, 1048576]"},
    {NULL, "aggr_per_node=-5", NULL, "key 'aggr_per_node': -5 is out of range [-1, 1024]"},
    /* tiers (issue 5) */
    {NULL, "aggr_tier=nvr;persistency=job;nvr_dir=/scratch/x;hbm_capacity=32M;dram_capacity=1G;nvr_capacity=2T;hbm_emulate=1",
     "verbose=0;summary=;backend=tapioca;aggregators=0;aggregate=auto;fs_client=auto;direct_io=auto;direct_io_min=1048576;file_io=auto;buffer_size=4194304;buffers=2;overlap=1;speculate=1;block=1048576;strategy=memory-aware;"
     "throttle=-1;aggr_per_node=-1;topology=;aggr_tier=nvr;persistency=job;tiers=;nvr_dir=/scratch/x;hbm_capacity=33554432;"
     "dram_capacity=1073741824;nvr_capacity=2199023255552;hbm_emulate=1;layout=shared;" SF_DEF ";destination=pfs;drain=none;verify=1;compression=none;compression_level=1;compression_shuffle=byte;compression_typesize=4;salvage=0;fsync=0" ASYNC_DEF,
     NULL},
    {"aggr_tier=hbm;", "aggr_tier=auto", "verbose=0;summary=;backend=tapioca;" DEF_TAIL, NULL},
    {NULL, "aggr_tier=ssd", NULL, "key 'aggr_tier': unknown value 'ssd' (valid: auto, dram, hbm, nvr, test)"},
    {NULL, "persistency=forever", NULL, "key 'persistency': unknown value 'forever' (valid: none, job)"},
    {NULL, "hbm_capacity=-1", NULL, "key 'hbm_capacity': -1 is out of range"},
    {NULL, "dram_capacity=lots", NULL, "key 'dram_capacity': 'lots' is not a whole number"},
    {NULL, "nvr_capacity=2000P", NULL, "'2000P' is not a size"},
    {NULL, "hbm_emulate=perhaps", NULL, "not a boolean"},
    /* the measured check of a tuning model's choices */
    {NULL, "tuning_check=17", NULL, "key 'tuning_check': 17 is out of range [0, 16]"},
    {NULL, "tuning_check=-1", NULL, "out of range"},
    {NULL, "tuning_check_close=100001", NULL, "out of range"},
    {NULL, "tuning_check_close=x", NULL, "tuning_check_close"},
    {NULL, "tuning_check_writes=2", NULL, "tuning_check_writes"},
    {NULL, "tuning_check_writes=0", "verbose=0;summary=;backend=tapioca;" ENGINE "layout=shared;" SF_DEF
     ";destination=pfs;drain=none;verify=1;compression=none;compression_level=1;compression_shuffle=byte;compression_typesize=4;salvage=0;fsync=0"
     ";async=0;workers=0;staging_bytes=268435456;write_behind=33554432;record=;tuning=;tuning_check=3;tuning_check_writes=0;tuning_check_close=10", NULL},
    {NULL, "tuning_check_close=0", "verbose=0;summary=;backend=tapioca;" ENGINE "layout=shared;" SF_DEF
     ";destination=pfs;drain=none;verify=1;compression=none;compression_level=1;compression_shuffle=byte;compression_typesize=4;salvage=0;fsync=0"
     ";async=0;workers=0;staging_bytes=268435456;write_behind=33554432;record=;tuning=;tuning_check=3;tuning_check_writes=1;tuning_check_close=0", NULL},
    {NULL, "tuning_check=0;tuning_check=5", "verbose=0;summary=;backend=tapioca;" ENGINE "layout=shared;" SF_DEF
     ";destination=pfs;drain=none;verify=1;compression=none;compression_level=1;compression_shuffle=byte;compression_typesize=4;salvage=0;fsync=0"
     ";async=0;workers=0;staging_bytes=268435456;write_behind=33554432;record=;tuning=;tuning_check=5;tuning_check_writes=1;tuning_check_close=10", NULL},
    {NULL, "strategy=greedy", NULL,
     "unknown value 'greedy' (valid: memory-aware, topo-aware, shortest, longest, first-per-node, random)"},
};

static void test_cases(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const config_case_t *c = &cases[i];
        tagg_config_t        cfg;
        char                 err[TAGG_CONFIG_ERRLEN] = "", out[1024];
        int                  rc       = tagg_config_build(&cfg, c->env, c->str, err, sizeof err);
        if (c->want) {
            if (rc != 0)
                fail_msg("case %zu (%s): rejected: %s", i, c->str ? c->str : "(null)", err);
            tagg_config_format(&cfg, out, sizeof out);
            if (strcmp(out, c->want))
                fail_msg("case %zu: got '%s', want '%s'", i, out, c->want);
        }
        else {
            if (rc == 0)
                fail_msg("case %zu (%s): accepted, should be rejected", i, c->str);
            if (!strstr(err, c->reject))
                fail_msg("case %zu: message '%s' lacks '%s'", i, err, c->reject);
        }
        tagg_config_clear(&cfg);
    }
}

static void test_copy_is_deep(void **state)
{
    (void)state;
    tagg_config_t a, b;
    char          err[256];
    assert_int_equal(tagg_config_build(&a, NULL, "summary=/tmp/one", err, sizeof err), 0);
    assert_int_equal(tagg_config_copy(&b, &a), 0);
    assert_ptr_not_equal(a.summary, b.summary);
    assert_string_equal(b.summary, "/tmp/one");
    tagg_config_clear(&a);
    assert_string_equal(b.summary, "/tmp/one");
    tagg_config_clear(&b);
}

static void test_env_string(void **state)
{
    (void)state;
    setenv("TAGG_VERBOSE", "2", 1);
    setenv("TAGG_CONFIG", "fsync=1", 1);
    setenv("TAGG_SUBFILES", "4", 1);
    unsetenv("TAGG_SUMMARY");
    setenv("TAGG_AGGR_TIER", "nvr", 1);
    setenv("TAGG_NVR_DIR", "/local", 1);
    char *s = tagg_config_env_string();
    assert_non_null(s);
    assert_string_equal(s, "verbose=2;aggr_tier=nvr;nvr_dir=/local;subfiles=4;fsync=1;");
    tagg_config_t cfg;
    char          err[256];
    assert_int_equal(tagg_config_build(&cfg, s, NULL, err, sizeof err), 0);
    assert_int_equal(cfg.verbose, 2);
    assert_int_equal(cfg.fsync, 1);
    assert_int_equal(cfg.subfiles, 4);
    assert_int_equal(cfg.aggr_tier, TAGG_AGGR_TIER_NVR);
    assert_string_equal(cfg.nvr_dir, "/local");
    tagg_config_clear(&cfg);
    unsetenv("TAGG_AGGR_TIER");
    unsetenv("TAGG_NVR_DIR");
    free(s);
    unsetenv("TAGG_SUBFILES");
    unsetenv("TAGG_VERBOSE");
    unsetenv("TAGG_CONFIG");
}

static void test_format_length(void **state)
{
    (void)state;
    tagg_config_t cfg;
    char          small[8];
    tagg_config_init(&cfg);
    int n = tagg_config_format(&cfg, small, sizeof small);
    assert_int_equal(n, (int)strlen("verbose=0;summary=;backend=tapioca;" DEF_TAIL));
    assert_int_equal(strlen(small), sizeof small - 1);
    tagg_config_clear(&cfg);
}

/* The README's configuration table holds every row the code's table documents. */
static const char *readme_path;
static void test_readme_table(void **state)
{
    (void)state;
    FILE *doc = tmpfile(), *rd = fopen(readme_path, "r");
    assert_non_null(doc);
    if (!rd)
        fail_msg("cannot open %s", readme_path);
    tagg_config_doc(doc);
    rewind(doc);
    static char readme[1 << 17];
    size_t      n = fread(readme, 1, sizeof readme - 1, rd);
    readme[n]     = '\0';
    char line[1024];
    int  rows = 0;
    while (fgets(line, sizeof line, doc)) {
        if (!strstr(readme, line))
            fail_msg("README.md lacks the configuration row: %s(regenerate it from tagg_config_doc)", line);
        rows++;
    }
    assert_true(rows >= 7);
    fclose(doc), fclose(rd);
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "--doc")) { /* regenerates the README table: test_config --doc */
        tagg_config_doc(stdout);
        return 0;
    }
    readme_path = argc > 1 ? argv[1] : "README.md";
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cases),
        cmocka_unit_test(test_copy_is_deep),
        cmocka_unit_test(test_env_string),
        cmocka_unit_test(test_format_length),
        cmocka_unit_test(test_readme_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
