/* Tier HBM: high-bandwidth memory from memkind (MEMKIND_HBW), as MA-TAPIOCA
 * does (seed 002, section 3.1). Where the node has none, the tier says so
 * (memkind's own message) and the model leaves it out.
 *
 * hbm_emulate=1 (tests only) makes a node without HBM hand out ordinary memory
 * (MEMKIND_DEFAULT) under the HBM name, so that the tier choice can be shown on
 * any machine; the tier then reports itself as "emulated". */
#include "tier.h"
#include "error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef TAGG_HAVE_MEMKIND
#include <memkind.h>

/* Nodes with memory, from /sys ("0", "0-1", "0,2-3"): more than one? */
static int several_memory_nodes(void)
{
    char  line[256] = "";
    FILE *fp        = fopen("/sys/devices/system/node/has_memory", "r");
    if (!fp)
        return 1; /* unknown: ask memkind */
    int got = fgets(line, sizeof line, fp) != NULL;
    fclose(fp);
    return !got || strpbrk(line, ",-") != NULL;
}

/* memkind's answer, asked once per process (its first call takes 10-20 ms).
 * High-bandwidth memory is always a NUMA node of its own: with one memory
 * node (and no MEMKIND_HBW_NODES naming one) there is none, without asking. */
static int hbw_status(void)
{
    static _Atomic int known = 0, status = 0;
    if (!known) {
        status = !getenv("MEMKIND_HBW_NODES") && !several_memory_nodes() ? MEMKIND_ERROR_UNAVAILABLE
                                                                         : memkind_check_available(MEMKIND_HBW);
        known  = 1;
    }
    return status;
}

static int real_hbm(char *reason, size_t len)
{
    int rc = hbw_status();
    if (rc == 0)
        return 1;
    if (reason && len) {
        char msg[MEMKIND_ERROR_MESSAGE_SIZE];
        memkind_error_message(rc, msg, sizeof msg);
        snprintf(reason, len, "no high-bandwidth memory on this node (memkind: %s)", msg);
    }
    return 0;
}

static int available(const tagg_config_t *cfg, char *reason, size_t len)
{
    if (real_hbm(reason, len))
        return 1;
    if (!cfg->hbm_emulate)
        return 0;
    char why[200];
    snprintf(why, sizeof why, "%s", reason);
    snprintf(reason, len, "emulated with ordinary memory (hbm_emulate=1): %s", why);
    return 1;
}

static uint64_t capacity(const tagg_config_t *cfg)
{
    if (real_hbm(NULL, 0)) {
        ssize_t c = memkind_get_capacity(MEMKIND_HBW);
        return c > 0 ? (uint64_t)c : 0;
    }
    return cfg->hbm_emulate ? tagg_tier_free_memory() : 0;
}

static int mem_alloc(tagg_tier_buf_t *b, const tagg_config_t *cfg, size_t size, int *enospc)
{
    int       hbw  = real_hbm(NULL, 0);
    memkind_t kind = hbw ? MEMKIND_HBW : MEMKIND_DEFAULT;
    void     *p    = NULL;
    if (!hbw && !cfg->hbm_emulate) {
        char why[256];
        real_hbm(why, sizeof why);
        TAGG_ERR(TAGG_E_CONFIG, "tier HBM: %s", why);
        return -1;
    }
    int rc = memkind_posix_memalign(kind, &p, 4096, size);
    if (rc != 0 || !p) {
        *enospc = 1;
        TAGG_ERR(TAGG_E_NOMEM, "tier HBM: memkind could not allocate %zu bytes%s", size,
                 hbw ? "" : " (emulated HBM)");
        return -1;
    }
    b->base = p;
    b->priv = kind;
    return 0;
}

static void mem_free(tagg_tier_buf_t *b)
{
    if (b->base)
        memkind_free((memkind_t)b->priv, b->base);
    b->base = NULL;
}
#else
static int available(const tagg_config_t *cfg, char *reason, size_t len)
{
    (void)cfg;
    snprintf(reason, len, "tagg was built without memkind");
    return 0;
}
static uint64_t capacity(const tagg_config_t *cfg)
{
    (void)cfg;
    return 0;
}
static int mem_alloc(tagg_tier_buf_t *b, const tagg_config_t *cfg, size_t size, int *enospc)
{
    (void)b, (void)cfg, (void)size, (void)enospc;
    TAGG_ERR(TAGG_E_CONFIG, "tier HBM: tagg was built without memkind");
    return -1;
}
static void mem_free(tagg_tier_buf_t *b) { (void)b; }
#endif

static double latency(void) { return 80e-9; }
static double bandwidth(void) { return 180e9; }
static tagg_persist_t persistency(void) { return TAGG_PERSIST_NONE; }

const tagg_tier_ops_t tagg_tier_hbm = {
    .name        = "HBM",
    .kind        = TAGG_TIER_HBM,
    .available   = available,
    .capacity    = capacity,
    .mem_alloc   = mem_alloc,
    .mem_free    = mem_free,
    .write       = tagg_tier_rma_write,
    .read        = tagg_tier_rma_read,
    .flush       = tagg_tier_rma_flush,
    .persist     = tagg_tier_no_persist,
    .latency     = latency,
    .bandwidth   = bandwidth,
    .persistency = persistency,
};
