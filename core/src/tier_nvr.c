/* Tier NVR: node-local non-volatile storage (SSD) used as aggregation memory,
 * as MA-TAPIOCA does (seed 002, section 3.1): a file in the node-local
 * directory (nvr_dir / TAGG_NVR_DIR, else $TMPDIR, else /tmp) mapped into
 * memory with mmap(MAP_SHARED) and exposed to the other ranks through the
 * window (MPI_Win_create, tier.c).
 *
 * Space is reserved with posix_fallocate when the buffers are made, so a full
 * directory shows as ENOSPC at file open (and the tier choice can fall back),
 * never as SIGBUS on a later store into the mapping. The file is unlinked as
 * soon as it is mapped: its blocks stay reserved while mapped, and nothing is
 * left in the directory if the job is killed. persist = msync. */
#include "tier.h"
#include "error.h"
#include "fault.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/statvfs.h>
#include <unistd.h>

const char *tagg_nvr_dir(const tagg_config_t *cfg)
{
    if (cfg && cfg->nvr_dir && *cfg->nvr_dir)
        return cfg->nvr_dir;
    const char *t = getenv("TMPDIR");
    return t && *t ? t : "/tmp";
}

static int available(const tagg_config_t *cfg, char *reason, size_t len)
{
    const char *dir = tagg_nvr_dir(cfg);
    if (access(dir, W_OK | X_OK) != 0) {
        snprintf(reason, len, "NVR directory %s is not writable: %s", dir, strerror(errno));
        return 0;
    }
    return 1;
}

static uint64_t capacity(const tagg_config_t *cfg)
{
    struct statvfs s;
    if (statvfs(tagg_nvr_dir(cfg), &s) != 0)
        return 0;
    return (uint64_t)s.f_bavail * (uint64_t)s.f_frsize;
}

static int mem_alloc(tagg_tier_buf_t *b, const tagg_config_t *cfg, size_t size, int *enospc)
{
    const char *dir = tagg_nvr_dir(cfg);
    char        path[4096];
    int         n = snprintf(path, sizeof path, "%s/tagg-nvr-%ld-%d-XXXXXX", dir, (long)getpid(), b->rank);
    if (n < 0 || (size_t)n >= sizeof path) {
        TAGG_ERR(TAGG_E_CONFIG, "tier NVR: directory name too long: %s", dir);
        return -1;
    }
    int fd = mkstemp(path);
    if (fd < 0) {
        TAGG_ERR(TAGG_E_IO, "tier NVR: cannot create a buffer file in %s: %s", dir, strerror(errno));
        *enospc = errno == ENOSPC || errno == EDQUOT;
        return -1;
    }
    int err = posix_fallocate(fd, 0, (off_t)size), injected = 0;
    if (err == 0 && tagg_fault("nvr_alloc", b->rank))
        err = ENOSPC, injected = 1;
    if (err) {
        TAGG_ERR(TAGG_E_IO, "tier NVR: cannot reserve %zu bytes in %s: %s%s", size, dir, strerror(err),
                 injected ? " (injected by TAGG_FAULT)" : "");
        *enospc = err == ENOSPC || err == EDQUOT;
        close(fd);
        unlink(path);
        return -1;
    }
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    int   e = errno;
    close(fd); /* the mapping keeps the file */
    unlink(path);
    if (p == MAP_FAILED) {
        TAGG_ERR(TAGG_E_IO, "tier NVR: mmap of %zu bytes of a file in %s failed: %s", size, dir, strerror(e));
        *enospc = e == ENOMEM;
        return -1;
    }
    b->base = p;
    return 0;
}

static void mem_free(tagg_tier_buf_t *b)
{
    if (b->base)
        munmap(b->base, b->size);
    b->base = NULL;
}

static int persist(tagg_tier_buf_t *b)
{
    if (b->base && msync(b->base, b->size, MS_SYNC) != 0) {
        TAGG_ERR(TAGG_E_IO, "tier NVR: msync failed: %s", strerror(errno));
        return -1;
    }
    return 0;
}

static double latency(void) { return 80e-6; }
static double bandwidth(void) { return 1.5e9; }
static tagg_persist_t persistency(void) { return TAGG_PERSIST_JOB; }

const tagg_tier_ops_t tagg_tier_nvr = {
    .name        = "NVR",
    .kind        = TAGG_TIER_NVR,
    .available   = available,
    .capacity    = capacity,
    .mem_alloc   = mem_alloc,
    .mem_free    = mem_free,
    .write       = tagg_tier_rma_write,
    .read        = tagg_tier_rma_read,
    .flush       = tagg_tier_rma_flush,
    .persist     = persist,
    .latency     = latency,
    .bandwidth   = bandwidth,
    .persistency = persistency,
};
