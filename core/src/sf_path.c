/* The subfile layout's path rule and safe file access (sf_path.h). */
#define _DEFAULT_SOURCE
#include "errmsg.h"
#include "sf_path.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *base_of(const char *path)
{
    const char *b = strrchr(path, '/');
    return b ? b + 1 : path;
}

static char *aprintf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *s = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (s) {
        va_start(ap, fmt);
        vsnprintf(s, (size_t)n + 1, fmt, ap);
        va_end(ap);
    }
    return s;
}

/* The directory part of path with its slash ("" for a bare name). */
static size_t dir_len(const char *path)
{
    const char *b = strrchr(path, '/');
    return b ? (size_t)(b - path) + 1 : 0;
}

char *tagg_sf_path_beside(const char *index, uint32_t k, uint32_t N)
{
    return aprintf("%.*s%s.tagg.%" PRIu32 "of%" PRIu32, (int)dir_len(index), index, base_of(index), k, N);
}

char *tagg_sf_path_meta(const char *index)
{
    return aprintf("%.*s%s.tagg.meta", (int)dir_len(index), index, base_of(index));
}

/* h: CRC-64 of the index's absolute path as given (cwd prepended) */
static uint64_t path_hash(const char *index)
{
    char cwd[PATH_MAX] = "";
    if (index[0] != '/' && !getcwd(cwd, sizeof cwd))
        cwd[0] = '\0';
    return tagg_crc64(tagg_crc64(tagg_crc64(0, cwd, strlen(cwd)), "/", index[0] != '/'), index, strlen(index));
}

/* ... and of the index's resolved directory + base (another spelling of the
 * same path, e.g. through a symbolic link or "./", still matches) */
static int path_hash_real(const char *index, uint64_t *h)
{
    size_t dl = dir_len(index);
    char  *dir = aprintf("%.*s", dl ? (int)dl : 1, dl ? index : ".");
    char   real[PATH_MAX];
    int    ok = dir && realpath(dir, real);
    free(dir);
    if (!ok)
        return -1;
    const char *b = base_of(index);
    *h = tagg_crc64(tagg_crc64(tagg_crc64(0, real, strlen(real)), "/", strcmp(real, "/") != 0), b, strlen(b));
    return 0;
}

char *tagg_sf_path_nvr(const char *nvr_dir, const char *node, const char *index, uint32_t k, uint32_t N)
{
    return aprintf("%s/tagg-%lu/%s/%s.%016" PRIx64 ".%" PRIu32 "of%" PRIu32, nvr_dir, (unsigned long)geteuid(), node,
                   base_of(index), path_hash(index), k, N);
}

/* ------------------------------------------------------------ the rule */

static int plain_name(const char *s)
{
    if (!*s || !strcmp(s, ".") || !strcmp(s, "..") || strlen(s) > 255)
        return 0;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if (*p == '/' || *p < 0x20 || *p == 0x7f)
            return 0;
    return 1;
}

/* An absolute path without empty, "." or ".." components or control bytes. */
static int clean_abs(const char *s)
{
    if (s[0] != '/')
        return 0;
    for (const char *p = s; *p; p++) {
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            return 0;
        if (*p == '/') {
            const char *c = p + 1;
            size_t      n = strcspn(c, "/");
            if (n == 0 || (n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
                return 0;
        }
    }
    return 1;
}

/* Node-local name of subfile k: the form of the rule (format 2 or 3). */
static int nvr_name_ok(const char *index, const tagg_sf_index_t *ix, uint32_t k, char *why, size_t wl)
{
    const char *name = ix->sub[k].name, *node = ix->sub[k].node;
    if (!node || !plain_name(node))
        return tagg_errmsg(why, wl, "its node name is not a plain name"), 0;
    if (!clean_abs(name))
        return tagg_errmsg(why, wl, "not a clean absolute path"), 0;
    /* the last three components: tagg-<uid> / <node> / leaf (format 3), or
     * tagg-nvr.<node> / leaf (format 2) */
    const char *leaf = strrchr(name, '/') + 1, *d2 = leaf - 1;
    while (d2 > name && d2[-1] != '/')
        d2--;
    if (d2 == name)
        return tagg_errmsg(why, wl, "not inside a node-local directory"), 0;
    size_t d2len = (size_t)(leaf - 1 - d2);
    if (ix->version >= 3) {
        const char *d1 = d2 - 1;
        while (d1 > name && d1[-1] != '/')
            d1--;
        char user[64];
        snprintf(user, sizeof user, "tagg-%lu", (unsigned long)geteuid());
        if (d1 == name || (size_t)(d2 - 1 - d1) != strlen(user) || memcmp(d1, user, strlen(user)))
            return tagg_errmsg(why, wl, "not in this user's private directory '<nvr_dir>/%s'", user), 0;
        if (d2len != strlen(node) || memcmp(d2, node, d2len))
            return tagg_errmsg(why, wl, "not in the directory of its node '%s'", node), 0;
    }
    else if (d2len != strlen(node) + 9 || memcmp(d2, "tagg-nvr.", 9) || memcmp(d2 + 9, node, strlen(node)))
        return tagg_errmsg(why, wl, "not in the directory 'tagg-nvr.%s' of its node", node), 0;
    uint64_t h[2];
    int      nh = 1;
    h[0]        = path_hash(index);
    if (path_hash_real(index, &h[1]) == 0)
        nh = 2;
    for (int i = 0; i < nh; i++) {
        char want[512];
        snprintf(want, sizeof want, "%s.%016" PRIx64 ".%" PRIu32 "of%" PRIu32, base_of(index), h[i], k, ix->count);
        if (!strcmp(leaf, want))
            return 1;
    }
    tagg_errmsg(why, wl, "its file name is not '%s.<hash of this index's path>.%" PRIu32 "of%" PRIu32 "'", base_of(index), k,
            ix->count);
    return 0;
}

int tagg_sf_path_check(const char *index, const tagg_sf_index_t *ix, char *err, size_t errlen)
{
    char why[600];
    if (ix->nvr) {
        char *want = tagg_sf_path_meta(index);
        int   ok   = want && ix->meta.name && !strcmp(ix->meta.name, base_of(want));
        if (!ok) {
            tagg_errmsg(err, errlen,
                    "%s: index line %u: the metadata file is named '%s'; tagg only uses '%s' (an index cannot name "
                    "other files)",
                    index, ix->meta.line, ix->meta.name ? ix->meta.name : "", want ? base_of(want) : "?");
            free(want);
            return -1;
        }
        free(want);
    }
    for (uint32_t k = 0; k < ix->count; k++) {
        const char *name = ix->sub[k].name ? ix->sub[k].name : "";
        if (ix->nvr) {
            if (!nvr_name_ok(index, ix, k, why, sizeof why)) {
                tagg_errmsg(err, errlen,
                        "%s: index line %u: node-local subfile %" PRIu32 " '%s' is not a path tagg derives: %s "
                        "(an index cannot name other files)",
                        index, ix->sub[k].line, k, name, why);
                return -1;
            }
            continue;
        }
        char *want = tagg_sf_path_beside(index, k, ix->count);
        int   ok   = want && !strcmp(name, base_of(want));
        if (!ok)
            tagg_errmsg(err, errlen,
                    "%s: index line %u: subfile %" PRIu32 " is named '%s'; tagg only uses '%s' (an index cannot name "
                    "other files; a renamed file needs its subfiles renamed with it)",
                    index, ix->sub[k].line, k, name, want ? base_of(want) : "?");
        free(want);
        if (!ok)
            return -1;
    }
    return 0;
}

char *tagg_sf_path_of(const char *index, const tagg_sf_index_t *ix, uint32_t k)
{
    return ix->nvr ? strdup(ix->sub[k].name) : tagg_sf_path_beside(index, k, ix->count);
}

/* ------------------------------------------------------------ safe access */

static int regular_only(int fd, const char *path, char *err, size_t errlen)
{
    struct stat st;
    if (fstat(fd, &st) < 0) {
        tagg_errmsg(err, errlen, "cannot stat '%s': %s", path, strerror(errno));
        return -1;
    }
    if (!S_ISREG(st.st_mode)) {
        tagg_errmsg(err, errlen, "'%s' is not a regular file (%s): refused", path,
                S_ISFIFO(st.st_mode) ? "a FIFO" : S_ISCHR(st.st_mode) ? "a character device"
                                                : S_ISBLK(st.st_mode) ? "a block device"
                                                : S_ISDIR(st.st_mode) ? "a directory"
                                                : S_ISSOCK(st.st_mode) ? "a socket" : "special");
        return -1;
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0)
        fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    return 0;
}

int tagg_sf_open(const char *path, int flags, char *err, size_t errlen)
{
    int fd = open(path, flags | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) {
        if (errno == ELOOP)
            tagg_errmsg(err, errlen, "'%s' is a symbolic link: refused (tagg never follows links at its own file names)",
                    path);
        else
            tagg_errmsg(err, errlen, "cannot open '%s': %s", path, strerror(errno));
        return -1;
    }
    if (regular_only(fd, path, err, errlen) < 0) {
        close(fd);
        return -1;
    }
    return fd;
}

int tagg_sf_create(const char *path, char *err, size_t errlen)
{
    /* the create first (nothing there is the usual case, and on a parallel
     * file system each lookup is a round trip); something there: a regular
     * file is stale and goes, anything else is refused, then the create again */
    int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd >= 0)
        return fd;
    struct stat st;
    if (errno == EEXIST && lstat(path, &st) == 0) {
        if (!S_ISREG(st.st_mode)) {
            tagg_errmsg(err, errlen, "cannot create '%s': it exists and is %s: refused (not removed)", path,
                    S_ISLNK(st.st_mode) ? "a symbolic link" : "not a regular file");
            return -1;
        }
        if (unlink(path) < 0 && errno != ENOENT) {
            tagg_errmsg(err, errlen, "cannot remove the stale '%s': %s", path, strerror(errno));
            return -1;
        }
        fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    }
    if (fd < 0) {
        tagg_errmsg(err, errlen, "cannot create '%s': %s", path, strerror(errno));
        return -1;
    }
    return fd;
}

int tagg_sf_remove(const char *path, char *err, size_t errlen)
{
    if (unlink(path) < 0 && errno != ENOENT) { /* unlink never follows a link: it removes the link */
        tagg_errmsg(err, errlen, "cannot remove '%s': %s", path, strerror(errno));
        return -1;
    }
    return 0;
}

/* One private directory: made (0700) when create, then checked. */
static int private_dir(const char *dir, int create, char *err, size_t errlen)
{
    struct stat st;
    if (create && mkdir(dir, 0700) < 0 && errno != EEXIST) {
        tagg_errmsg(err, errlen, "cannot create the node-local directory '%s': %s", dir, strerror(errno));
        return -1;
    }
    if (lstat(dir, &st) < 0) {
        tagg_errmsg(err, errlen, "node-local directory '%s': %s", dir, strerror(errno));
        return -1;
    }
    if (S_ISLNK(st.st_mode) || !S_ISDIR(st.st_mode)) {
        tagg_errmsg(err, errlen, "node-local directory '%s' is %s: refused", dir,
                S_ISLNK(st.st_mode) ? "a symbolic link" : "not a directory");
        return -1;
    }
    if (st.st_uid != geteuid()) {
        tagg_errmsg(err, errlen, "node-local directory '%s' belongs to uid %lu, not to this user (uid %lu): refused", dir,
                (unsigned long)st.st_uid, (unsigned long)geteuid());
        return -1;
    }
    if (st.st_mode & (S_IWGRP | S_IWOTH)) {
        tagg_errmsg(err, errlen,
                "node-local directory '%s' has mode %03o: writable by others, refused (it must be private, 0700)", dir,
                (unsigned)(st.st_mode & 0777));
        return -1;
    }
    return 0;
}

int tagg_sf_nvr_dirs(const char *subfile, unsigned version, int create, char *err, size_t errlen)
{
    char *d = strdup(subfile);
    int   rc = -1;
    if (!d) {
        tagg_errmsg(err, errlen, "out of memory");
        return -1;
    }
    char *leaf = strrchr(d, '/'), *node;
    if (leaf && leaf > d) {
        *leaf = '\0';
        node  = strrchr(d, '/');
        if (version < 3 && node) /* format 2: one directory, tagg-nvr.<node> */
            rc = private_dir(d, 0, err, errlen);
        else if (node && node > d) {
            *node = '\0';
            if (create && mkdir(d, 0700) < 0 && errno == ENOENT) { /* the nvr_dir itself: as the user's umask allows */
                char *p = strrchr(d, '/');
                if (p && p > d) {
                    *p = '\0';
                    mkdir(d, 0777);
                    *p = '/';
                }
            }
            if (private_dir(d, create, err, errlen) == 0) {
                *node = '/';
                rc    = private_dir(d, create, err, errlen);
            }
        }
        else
            tagg_errmsg(err, errlen, "'%s' is not a node-local subfile path", subfile);
    }
    else
        tagg_errmsg(err, errlen, "'%s' is not a node-local subfile path", subfile);
    free(d);
    return rc;
}
