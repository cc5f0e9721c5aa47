/* tagg-bench helpers: sizes, the data pattern, HDF5 error text, file removal. */
#include "bench.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int bench_parse_size(const char *s, uint64_t *out)
{
    char              *end;
    errno              = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s || *s == '-')
        return -1;
    unsigned shift = 0;
    switch (*end) {
    case 'k': case 'K': shift = 10; end++; break;
    case 'm': case 'M': shift = 20; end++; break;
    case 'g': case 'G': shift = 30; end++; break;
    default: break;
    }
    if (*end == 'i' || *end == 'B') /* accept KiB, KB, MiB */
        end += (*end == 'i' && end[1] == 'B') ? 2 : 1;
    if (*end || (shift && v > (UINT64_MAX >> shift)))
        return -1;
    *out = (uint64_t)v << shift;
    return 0;
}

uint64_t bench_mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

struct reason {
    char  *buf;
    size_t len;
};

/* Walking upward, the first entry is the innermost: where the error arose. Keep
 * it, and append later ones only when they say something about plugins (HDF5's
 * "can't find plugin" advice comes two levels above the innermost). */
static herr_t reason_cb(unsigned n, const H5E_error2_t *e, void *data)
{
    struct reason *r = data;
    if (!e->desc || !*e->desc)
        return 0;
    size_t used = strlen(r->buf);
    if (used == 0)
        snprintf(r->buf, r->len, "%s", e->desc);
    else if (n < 4 && strstr(e->desc, "plugin") && !strstr(r->buf, e->desc) && used + 3 < r->len)
        snprintf(r->buf + used, r->len - used, " <- %s", e->desc);
    return 0;
}

void bench_h5_reason(char *buf, size_t len)
{
    struct reason r = {buf, len};
    buf[0]          = '\0';
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, reason_cb, &r);
    H5Eclear2(H5E_DEFAULT);
    if (!buf[0])
        snprintf(buf, len, "HDF5 call failed (no message on the error stack)");
    for (char *p = buf; *p; p++) /* one line, no commas (CSV) */
        if (*p == '\n' || *p == ',')
            *p = ' ';
}

static int remove_tree(const char *path, int depth)
{
    struct stat st;
    if (lstat(path, &st) < 0)
        return 0;
    if (S_ISDIR(st.st_mode) && depth < 2) {
        DIR *d = opendir(path);
        if (d) {
            struct dirent *e;
            while ((e = readdir(d))) {
                if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
                    continue;
                char sub[4096];
                snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
                remove_tree(sub, depth + 1);
            }
            closedir(d);
        }
        return rmdir(path) == 0;
    }
    return unlink(path) == 0;
}

int bench_remove_prefix(const char *dir, const char *prefix)
{
    DIR *d = opendir(dir);
    int  n = 0;
    if (!d)
        return 0;
    size_t         plen = strlen(prefix);
    struct dirent *e;
    while ((e = readdir(d))) {
        if (strncmp(e->d_name, prefix, plen))
            continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        n += remove_tree(path, 0);
    }
    closedir(d);
    return n;
}

/* fsync + POSIX_FADV_DONTNEED of one file, or of the files of one directory. */
static int evict_tree(const char *path, int depth, char *err, size_t len)
{
    struct stat st;
    if (lstat(path, &st) < 0)
        return 0;
    if (S_ISDIR(st.st_mode)) {
        DIR *d = depth < 1 ? opendir(path) : NULL;
        int  n = 0;
        if (!d)
            return 0;
        struct dirent *e;
        while ((e = readdir(d))) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
                continue;
            char sub[4096];
            snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
            int k = evict_tree(sub, depth + 1, err, len);
            if (k < 0) {
                n = -1;
                break;
            }
            n += k;
        }
        closedir(d);
        return n;
    }
    if (!S_ISREG(st.st_mode))
        return 0;
    int fd = open(path, O_RDONLY);
    if (fd < 0) {
        snprintf(err, len, "open %s: %s", path, strerror(errno));
        return -1;
    }
    int rc = fsync(fd) < 0 ? errno : 0;
    if (rc == 0)
        rc = posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    close(fd);
    if (rc) {
        snprintf(err, len, "evicting %s from the page cache: %s", path, strerror(rc));
        return -1;
    }
    return 1;
}

int bench_evict_prefix(const char *dir, const char *prefix, char *err, size_t len)
{
    DIR *d = opendir(dir);
    if (!d) {
        snprintf(err, len, "opendir %s: %s", dir, strerror(errno));
        return -1;
    }
    size_t         plen = strlen(prefix);
    int            n    = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (strncmp(e->d_name, prefix, plen))
            continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        int k = evict_tree(path, 0, err, len);
        if (k < 0) {
            n = -1;
            break;
        }
        n += k;
    }
    closedir(d);
    return n;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double bench_median(double *v, int n)
{
    if (n <= 0)
        return 0;
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

int bench_h5_finish(int rc, hid_t d, hid_t ms, hid_t fs, char *err, size_t len)
{
    if (rc < 0)
        bench_h5_reason(err, len);
    if (d >= 0 && H5Dclose(d) < 0 && rc == 0)
        rc = -1, bench_h5_reason(err, len);
    if (ms >= 0)
        H5Sclose(ms);
    if (fs >= 0)
        H5Sclose(fs);
    return rc;
}
