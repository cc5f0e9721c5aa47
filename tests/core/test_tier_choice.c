/* The tier choice (tier_choice.c) as a pure function: Table 7 of MA-TAPIOCA
 * with the model's KNL table (HBM, DRAM capped, NVR), unavailable and excluded
 * tiers, persistency, and the footprint of several ranks per node. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "tier.h"

#define MB (1024ull * 1024)
static tagg_topology_t *topo;
static tagg_tiers_t     tiers;
static tagg_model_opts_t opts;

static int setup(void **s)
{
    (void)s;
    int        rn[4] = {0, 0, 0, 0};
    tagg_err_t err;
    tagg_tiers_default(&tiers); /* HBM, DRAM, NVR, PFS */
    tagg_model_opts_default(&opts);
    opts.n_buff = 3, opts.s_buff = 16 * MB;
    return tagg_topology_generic_from_ranks(4, rn, 0, NULL, 1e-6, 10e9, &topo, &err);
}

static int teardown(void **s)
{
    (void)s;
    tagg_topology_free(topo);
    return 0;
}

static tagg_node_tiers_t node(uint64_t hbm, uint64_t dram, uint64_t nvr, int ranks)
{
    tagg_node_tiers_t n;
    memset(&n, 0, sizeof n);
    n.usable[0] = n.usable[1] = n.usable[2] = 1;
    n.capacity[0] = hbm, n.capacity[1] = dram, n.capacity[2] = nvr;
    n.ranks = ranks;
    return n;
}

static int choose(const tagg_node_tiers_t *n, unsigned excluded, tagg_tier_choice_t *c)
{
    tagg_err_t err;
    assert_int_equal(tagg_tier_choose(topo, &tiers, &opts, n, 0, excluded, c, &err), 0);
    return c->tier;
}

static void test_table7(void **s)
{
    (void)s;
    tagg_tier_choice_t c;
    tagg_node_tiers_t  n = node(16000 * MB, 192000 * MB, 128000 * MB, 1);
    assert_int_equal(choose(&n, 0, &c), 0); /* run 1: HBM */
    n.capacity[0] = 32 * MB;                /* 3 x 16 MiB do not fit */
    assert_int_equal(choose(&n, 0, &c), 1); /* run 2: DRAM */
    assert_non_null(strstr(c.why, "HBM: capacity"));
    n.capacity[1] = 32 * MB;
    assert_int_equal(choose(&n, 0, &c), 2); /* run 3: NVR */
    n.capacity[2] = 32 * MB;
    assert_int_equal(choose(&n, 0, &c), -1); /* nothing fits */
    assert_non_null(strstr(c.why, "NVR: capacity"));
}

static void test_unavailable_excluded(void **s)
{
    (void)s;
    tagg_tier_choice_t c;
    tagg_node_tiers_t  n = node(16000 * MB, 192000 * MB, 128000 * MB, 1);
    n.usable[0]          = 0;
    assert_int_equal(choose(&n, 0, &c), 1);
    assert_non_null(strstr(c.why, "HBM: unavailable"));
    assert_int_equal(choose(&n, 1u << 1, &c), 2); /* DRAM failed to allocate: NVR */
    assert_non_null(strstr(c.why, "DRAM: failed to allocate"));
}

static void test_persistency_and_footprint(void **s)
{
    (void)s;
    tagg_tier_choice_t c;
    tagg_node_tiers_t  n = node(16000 * MB, 192000 * MB, 128000 * MB, 1);
    opts.persistency     = TAGG_PERSIST_JOB;
    assert_int_equal(choose(&n, 0, &c), 2); /* only NVR keeps data for the job */
    opts.persistency = TAGG_PERSIST_NONE;
    /* 4 ranks x 48 MiB = 192 MiB on the node: 100 MiB of HBM is not enough */
    n = node(100 * MB, 192000 * MB, 128000 * MB, 4);
    assert_int_equal(choose(&n, 0, &c), 1);
    n = node(100 * MB, 192000 * MB, 128000 * MB, 2);
    assert_int_equal(choose(&n, 0, &c), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table7),
        cmocka_unit_test(test_unavailable_excluded),
        cmocka_unit_test(test_persistency_and_footprint),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
