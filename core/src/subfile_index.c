/* The subfile layout's stripe map and index file (format in subfile_index.h). */
#include "subfile_index.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
    if (!err || !errlen)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

/* ------------------------------------------------------------ stripe map */

void tagg_sf_locate(uint64_t off, uint64_t S, uint32_t N, uint32_t *k, uint64_t *local)
{
    uint64_t stripe = off / S;
    *k              = (uint32_t)(stripe % N);
    *local          = (stripe / N) * S + off % S;
}

uint64_t tagg_sf_subfile_size(uint64_t L, uint64_t S, uint32_t N, uint32_t k)
{
    uint64_t full = L / S, rest = L % S;
    if (rest && full % N == k)
        return (full / N) * S + rest; /* holds the partial last stripe */
    return (full / N + (k < full % N ? 1 : 0)) * S;
}

uint64_t tagg_sf_logical_end(uint64_t size, uint64_t S, uint32_t N, uint32_t k)
{
    if (!size)
        return 0;
    uint64_t last = size - 1;
    return ((last / S) * N + k) * S + last % S + 1;
}

/* ------------------------------------------------------------ CRC-64/XZ */

static uint64_t crc_table[256];
static int      crc_ready;

static void crc_init(void)
{
    for (unsigned i = 0; i < 256; i++) {
        uint64_t c = i;
        for (int b = 0; b < 8; b++)
            c = (c & 1) ? (c >> 1) ^ UINT64_C(0xC96C5795D7870F42) : c >> 1; /* reflected ECMA-182 */
        crc_table[i] = c;
    }
    crc_ready = 1; /* idempotent: concurrent first calls compute the same table */
}

uint64_t tagg_crc64(uint64_t crc, const void *buf, size_t len)
{
    const unsigned char *p = buf;
    if (!crc_ready)
        crc_init();
    crc = ~crc;
    for (size_t i = 0; i < len; i++)
        crc = crc_table[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
    return ~crc;
}

int tagg_sf_file_crc(const char *path, uint64_t *size, uint64_t *crc, char *err, size_t errlen)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0) {
        set_err(err, errlen, "cannot open '%s': %s", path, strerror(errno));
        return -1;
    }
    enum { BUF = 1 << 20 };
    unsigned char *buf = malloc(BUF);
    uint64_t       n = 0, c = 0;
    int            rc = 0;
    if (!buf) {
        set_err(err, errlen, "out of memory");
        close(fd);
        return -1;
    }
    for (;;) {
        ssize_t got = read(fd, buf, BUF);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            set_err(err, errlen, "reading '%s' at offset %" PRIu64 ": %s", path, n, strerror(errno));
            rc = -1;
            break;
        }
        if (got == 0)
            break;
        c = tagg_crc64(c, buf, (size_t)got);
        n += (uint64_t)got;
    }
    free(buf);
    close(fd);
    *size = n;
    *crc  = c;
    return rc;
}

/* ------------------------------------------------------------ names */

int tagg_sf_index_init(tagg_sf_index_t *idx, uint64_t stripe, uint32_t count)
{
    memset(idx, 0, sizeof *idx);
    idx->version = TAGG_SF_VERSION;
    idx->stripe  = stripe;
    idx->count   = count;
    idx->sub     = calloc(count ? count : 1, sizeof *idx->sub);
    return idx->sub ? 0 : -1;
}

void tagg_sf_index_free(tagg_sf_index_t *idx)
{
    if (idx->sub)
        for (uint32_t k = 0; k < idx->count; k++)
            free(idx->sub[k].name), free(idx->sub[k].node);
    free(idx->sub);
    free(idx->meta.name);
    memset(idx, 0, sizeof *idx);
}

char *tagg_sf_default_name(const char *path, uint32_t k, uint32_t N)
{
    const char *base = strrchr(path, '/');
    base             = base ? base + 1 : path;
    size_t len       = strlen(base) + 40;
    char  *s         = malloc(len);
    if (s)
        snprintf(s, len, "%s.tagg.%" PRIu32 "of%" PRIu32, base, k, N);
    return s;
}

char *tagg_sf_subfile_path(const char *path, const char *name)
{
    if (name[0] == '/')
        return strdup(name);
    const char *slash = strrchr(path, '/');
    size_t      dir   = slash ? (size_t)(slash - path) + 1 : 0;
    char       *s     = malloc(dir + strlen(name) + 1);
    if (s) {
        memcpy(s, path, dir);
        strcpy(s + dir, name);
    }
    return s;
}

char *tagg_sf_meta_name(const char *path)
{
    const char *base = strrchr(path, '/');
    base             = base ? base + 1 : path;
    size_t len       = strlen(base) + 16;
    char  *s         = malloc(len);
    if (s)
        snprintf(s, len, "%s.tagg.meta", base);
    return s;
}

char *tagg_sf_nvr_path(const char *dir, const char *node, const char *path, uint32_t k, uint32_t N)
{
    char        cwd[4096] = "";
    const char *base      = strrchr(path, '/');
    base                  = base ? base + 1 : path;
    if (path[0] != '/' && !getcwd(cwd, sizeof cwd))
        cwd[0] = '\0';
    uint64_t h   = tagg_crc64(tagg_crc64(tagg_crc64(0, cwd, strlen(cwd)), "/", path[0] != '/'), path, strlen(path));
    size_t   len = strlen(dir) + strlen(node) + strlen(base) + 80;
    char    *s   = malloc(len);
    if (s)
        snprintf(s, len, "%s/tagg-nvr.%s/%s.%016" PRIx64 ".%" PRIu32 "of%" PRIu32, dir, node, base, h, k, N);
    return s;
}

int tagg_sf_mkdir_for(const char *file)
{
    char *d = strdup(file);
    if (!d)
        return errno = ENOMEM, -1;
    char *slash = strrchr(d, '/');
    if (!slash || slash == d) {
        free(d);
        return 0;
    }
    *slash = '\0';
    for (char *p = d + 1;; p++) { /* each component in turn */
        if (*p == '/' || !*p) {
            char c = *p;
            *p     = '\0';
            if (mkdir(d, 0777) < 0 && errno != EEXIST) {
                int e = errno;
                free(d);
                return errno = e, -1;
            }
            if (!(*p = c))
                break;
        }
    }
    free(d);
    return 0;
}

/* ------------------------------------------------------------ format and parse */

int tagg_sf_index_format(const tagg_sf_index_t *idx, char **text, size_t *len)
{
    size_t cap = 512;
    for (uint32_t k = 0; k < idx->count; k++)
        cap += 80 + strlen(idx->sub[k].name);
    char *s = malloc(cap);
    if (!s)
        return -1;
    if (idx->nvr) {
        cap += 80 + (idx->meta.name ? strlen(idx->meta.name) : 0);
        for (uint32_t k = 0; k < idx->count; k++)
            cap += 40 + (idx->sub[k].node ? strlen(idx->sub[k].node) : 0);
        s = realloc(s, cap);
        if (!s)
            return -1;
    }
    int n = snprintf(s, cap,
                     TAGG_SF_HEADLINE "\nformat %u\nlayout subfiles\n%sstate %s\nstripe_size %" PRIu64
                                      "\nsubfile_count %" PRIu32 "\nlogical_size %" PRIu64 "\nchecksum crc64-xz\n",
                     idx->nvr ? TAGG_SF_VERSION_NVR : TAGG_SF_VERSION, idx->nvr ? "destination nvr\n" : "",
                     idx->closed ? "closed" : "open", idx->stripe, idx->count, idx->logical_size);
    size_t used = (size_t)n;
    if (idx->nvr)
        used += (size_t)snprintf(s + used, cap - used, "metadata %" PRIu64 " %016" PRIx64 " %s\n", idx->meta.size,
                                 idx->meta.crc, idx->meta.name ? idx->meta.name : "");
    for (uint32_t k = 0; k < idx->count; k++) {
        used += (size_t)snprintf(s + used, cap - used, "subfile %" PRIu32 " %" PRIu64 " %016" PRIx64 " %s\n", k,
                                 idx->sub[k].size, idx->sub[k].crc, idx->sub[k].name);
        if (idx->nvr)
            used += (size_t)snprintf(s + used, cap - used, "node %" PRIu32 " %s\n", k,
                                     idx->sub[k].node ? idx->sub[k].node : "");
    }
    uint64_t crc = tagg_crc64(0, s, used);
    used += (size_t)snprintf(s + used, cap - used, "index_crc64 %016" PRIx64 "\n", crc);
    *text = s;
    *len  = used;
    return 0;
}

/* Next line of [*p, end): returns its start, sets *l to its length (without
 * '\n') and moves *p past it; NULL at the end or when the line is unterminated. */
static const char *next_line(const char **p, const char *end, size_t *l)
{
    const char *b = *p;
    if (b >= end)
        return NULL;
    const char *nl = memchr(b, '\n', (size_t)(end - b));
    if (!nl)
        return NULL;
    *l = (size_t)(nl - b);
    *p = nl + 1;
    return b;
}

/* Parses "KEY <u64>" from one line; 0 or -1. */
static int key_u64(const char *line, size_t l, const char *key, uint64_t *v)
{
    size_t kl = strlen(key);
    char   buf[64], *e;
    if (l <= kl + 1 || l - kl - 1 >= sizeof buf || strncmp(line, key, kl) || line[kl] != ' ')
        return -1;
    memcpy(buf, line + kl + 1, l - kl - 1);
    buf[l - kl - 1] = '\0';
    if (buf[0] < '0' || buf[0] > '9')
        return -1;
    errno = 0;
    *v    = strtoull(buf, &e, 10);
    return (*e || errno) ? -1 : 0;
}

#define BAD(...)                                                                                          \
    do {                                                                                                  \
        set_err(err, errlen, __VA_ARGS__);                                                                \
        goto fail;                                                                                        \
    } while (0)

int tagg_sf_index_parse(const char *text, size_t len, tagg_sf_index_t *idx, char *err, size_t errlen)
{
    const char *p = text, *end = text + len, *line;
    size_t      l;
    uint64_t    v, stripe, count, lsize;
    memset(idx, 0, sizeof *idx);
    if (len < strlen(TAGG_SF_MAGIC) || memcmp(text, TAGG_SF_MAGIC, strlen(TAGG_SF_MAGIC)))
        BAD("bad magic: not a tagg subfiled file (it does not start with \"" TAGG_SF_MAGIC "\")");
    next_line(&p, end, &l);
    if (!(line = next_line(&p, end, &l)) || key_u64(line, l, "format", &v) < 0)
        BAD("index: no 'format' line after the magic");
    if (v != TAGG_SF_VERSION && v != TAGG_SF_VERSION_NVR)
        BAD("unsupported index format version %" PRIu64 " (this tagg reads versions %u and %u)", v, TAGG_SF_VERSION,
            TAGG_SF_VERSION_NVR);
    int nvr = v == TAGG_SF_VERSION_NVR;
    /* the index checksum: the last line, over every byte before it */
    {
        const char *last = end;
        if (len < 2 || end[-1] != '\n')
            BAD("index is truncated (no final newline)");
        last = end - 1;
        while (last > text && last[-1] != '\n')
            last--;
        uint64_t want, got = tagg_crc64(0, text, (size_t)(last - text));
        char     hex[17] = {0}, *e;
        if ((size_t)(end - last) != strlen("index_crc64 ") + 17 || strncmp(last, "index_crc64 ", 12))
            BAD("index is truncated (its last line is not 'index_crc64 <16 hex digits>')");
        memcpy(hex, last + 12, 16);
        want = strtoull(hex, &e, 16);
        if (*e)
            BAD("index: bad index_crc64 value '%s'", hex);
        if (want != got)
            BAD("index checksum mismatch: recorded %016" PRIx64 ", computed %016" PRIx64 " (the index was modified)",
                want, got);
        end = last;
    }
    if (!(line = next_line(&p, end, &l)) || l != strlen("layout subfiles") || memcmp(line, "layout subfiles", l))
        BAD("index: expected 'layout subfiles'");
    if (nvr && (!(line = next_line(&p, end, &l)) || l != strlen("destination nvr") || memcmp(line, "destination nvr", l)))
        BAD("index: format 2 expects 'destination nvr'");
    if (!(line = next_line(&p, end, &l)) || l < 7 || strncmp(line, "state ", 6))
        BAD("index: expected 'state open|closed'");
    int closed = l == 12 && !memcmp(line + 6, "closed", 6);
    if (!closed && !(l == 10 && !memcmp(line + 6, "open", 4)))
        BAD("index: bad state '%.*s'", (int)(l - 6), line + 6);
    if (!(line = next_line(&p, end, &l)) || key_u64(line, l, "stripe_size", &stripe) < 0 || !stripe)
        BAD("index: bad or missing 'stripe_size'");
    if (!(line = next_line(&p, end, &l)) || key_u64(line, l, "subfile_count", &count) < 0 || !count ||
        count > (uint64_t)len)
        BAD("index: bad or missing 'subfile_count'");
    if (!(line = next_line(&p, end, &l)) || key_u64(line, l, "logical_size", &lsize) < 0)
        BAD("index: bad or missing 'logical_size'");
    if (!(line = next_line(&p, end, &l)) || l != strlen("checksum crc64-xz") || memcmp(line, "checksum crc64-xz", l))
        BAD("index: unknown checksum algorithm (expected 'checksum crc64-xz')");
    if (tagg_sf_index_init(idx, stripe, (uint32_t)count) < 0)
        BAD("out of memory");
    idx->closed       = closed;
    idx->logical_size = lsize;
    idx->version      = (unsigned)v;
    idx->nvr          = nvr;
    if (nvr) {
        unsigned long long sz, crc;
        int                used = 0;
        char               head[128];
        if (!(line = next_line(&p, end, &l)))
            BAD("index: missing 'metadata' line");
        size_t hl = l < sizeof head - 1 ? l : sizeof head - 1;
        memcpy(head, line, hl);
        head[hl] = '\0';
        if (sscanf(head, "metadata %llu %16llx %n", &sz, &crc, &used) != 2 || used == 0 || (size_t)used >= l)
            BAD("index: bad 'metadata' line: '%.*s'", (int)hl, line);
        idx->meta.size = sz, idx->meta.crc = crc;
        if (!(idx->meta.name = strndup(line + used, l - (size_t)used)))
            BAD("out of memory");
        if (strchr(idx->meta.name, '/'))
            BAD("index: metadata file name '%s' is not a plain name", idx->meta.name);
    }
    for (uint32_t k = 0; k < idx->count; k++) {
        char          head[128];
        unsigned      kk;
        unsigned long long sz, crc;
        int           used = 0;
        if (!(line = next_line(&p, end, &l)) || l >= sizeof head + 4096)
            BAD("index: missing line for subfile %" PRIu32, k);
        size_t hl = l < sizeof head - 1 ? l : sizeof head - 1;
        memcpy(head, line, hl);
        head[hl] = '\0';
        if (sscanf(head, "subfile %u %llu %16llx %n", &kk, &sz, &crc, &used) != 3 || used == 0 || kk != k ||
            (size_t)used >= l)
            BAD("index: bad line for subfile %" PRIu32 ": '%.*s'", k, (int)hl, line);
        idx->sub[k].size = sz;
        idx->sub[k].crc  = crc;
        if (!(idx->sub[k].name = strndup(line + used, l - (size_t)used)))
            BAD("out of memory");
        if (!nvr && strchr(idx->sub[k].name, '/'))
            BAD("index: subfile name '%s' is not a plain name", idx->sub[k].name);
        if (nvr && idx->sub[k].name[0] != '/')
            BAD("index: node-local subfile path '%s' is not absolute", idx->sub[k].name);
        if (nvr) {
            char want[32];
            int  wl = snprintf(want, sizeof want, "node %" PRIu32 " ", k);
            if (!(line = next_line(&p, end, &l)) || l <= (size_t)wl || memcmp(line, want, (size_t)wl))
                BAD("index: missing 'node %" PRIu32 "' line", k);
            if (!(idx->sub[k].node = strndup(line + wl, l - (size_t)wl)))
                BAD("out of memory");
        }
    }
    if (p != end)
        BAD("index: unexpected text after the subfile lines");
    return 0;
fail:
    tagg_sf_index_free(idx);
    return -1;
}

/* ------------------------------------------------------------ files */

int tagg_sf_read_whole(const char *path, char **text, size_t *len, char *err, size_t errlen)
{
    struct stat st;
    int         fd = open(path, O_RDONLY);
    *text          = NULL;
    if (fd < 0) {
        set_err(err, errlen, "cannot open '%s': %s", path, strerror(errno));
        return -1;
    }
    if (fstat(fd, &st) < 0 || (size_t)st.st_size > TAGG_SF_INDEX_MAX) {
        set_err(err, errlen, "'%s' is not a tagg index (%s)", path, errno ? strerror(errno) : "too large");
        close(fd);
        return -1;
    }
    size_t n = (size_t)st.st_size, done = 0;
    char  *s = malloc(n + 1);
    if (!s) {
        set_err(err, errlen, "out of memory");
        close(fd);
        return -1;
    }
    while (done < n) {
        ssize_t got = read(fd, s + done, n - done);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0) {
            set_err(err, errlen, "reading '%s': %s", path, got < 0 ? strerror(errno) : "file shrank");
            free(s);
            close(fd);
            return -1;
        }
        done += (size_t)got;
    }
    close(fd);
    s[n]  = '\0';
    *text = s;
    *len  = n;
    return 0;
}

int tagg_sf_index_read(const char *path, tagg_sf_index_t *idx, char *err, size_t errlen)
{
    char  *text;
    size_t len;
    memset(idx, 0, sizeof *idx);
    if (tagg_sf_read_whole(path, &text, &len, err, errlen) < 0)
        return -1;
    int rc = tagg_sf_index_parse(text, len, idx, err, errlen);
    if (rc < 0 && err && errlen) {
        char tmp[512];
        snprintf(tmp, sizeof tmp, "%s: %s", path, err);
        set_err(err, errlen, "%s", tmp);
    }
    free(text);
    return rc;
}

int tagg_sf_index_write(const char *path, const tagg_sf_index_t *idx, int sync, char *err, size_t errlen)
{
    char  *text = NULL, *tmp = malloc(strlen(path) + 16);
    size_t len  = 0;
    int    fd   = -1;
    if (!tmp || tagg_sf_index_format(idx, &text, &len) < 0) {
        set_err(err, errlen, "out of memory");
        goto fail;
    }
    sprintf(tmp, "%s.tagg-tmp", path);
    if ((fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0666)) < 0) {
        set_err(err, errlen, "cannot create '%s': %s", tmp, strerror(errno));
        goto fail;
    }
    for (size_t done = 0; done < len;) {
        ssize_t put = write(fd, text + done, len - done);
        if (put < 0 && errno == EINTR)
            continue;
        if (put <= 0) {
            set_err(err, errlen, "writing the index '%s': %s", tmp, put < 0 ? strerror(errno) : "short write");
            goto fail;
        }
        done += (size_t)put;
    }
    if ((sync && fsync(fd) < 0) || close(fd) < 0) {
        fd = -1;
        set_err(err, errlen, "writing the index '%s': %s", tmp, strerror(errno));
        goto fail;
    }
    fd = -1;
    if (rename(tmp, path) < 0) {
        set_err(err, errlen, "cannot rename '%s' to '%s': %s", tmp, path, strerror(errno));
        goto fail;
    }
    free(text), free(tmp);
    return 0;
fail:
    if (fd >= 0)
        close(fd);
    if (tmp)
        unlink(tmp);
    free(text), free(tmp);
    return -1;
}

int tagg_sf_probe(const char *path, char *err, size_t errlen)
{
    char    head[sizeof TAGG_SF_MAGIC];
    int     fd = open(path, O_RDONLY);
    ssize_t got;
    if (fd < 0) {
        if (errno == ENOENT)
            return 0;
        set_err(err, errlen, "cannot open '%s': %s", path, strerror(errno));
        return -1;
    }
    got = pread(fd, head, sizeof head - 1, 0);
    close(fd);
    if (got < 0) {
        set_err(err, errlen, "reading '%s': %s", path, strerror(errno));
        return -1;
    }
    return (size_t)got == sizeof head - 1 && !memcmp(head, TAGG_SF_MAGIC, sizeof head - 1);
}

/* ------------------------------------------------------------ format 2: metadata overlay, drain */

int tagg_sf_overlay_meta(int meta_fd, uint64_t off, char *buf, size_t n, char *err, size_t errlen)
{
    enum { STEP = 1 << 16 };
    unsigned char tmp[STEP];
    for (size_t done = 0; done < n;) {
        size_t  want = n - done < STEP ? n - done : STEP;
        ssize_t got  = pread(meta_fd, tmp, want, (off_t)(off + done));
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            set_err(err, errlen, "reading the metadata file at %" PRIu64 ": %s", off + done, strerror(errno));
            return -1;
        }
        if (got == 0)
            break; /* past its end: zeros */
        for (ssize_t i = 0; i < got; i++)
            buf[done + (size_t)i] |= (char)tmp[i];
        done += (size_t)got;
    }
    return 0;
}

int tagg_sf_drain_one(const char *path, const tagg_sf_index_t *ix, uint32_t k, int meta_fd, const char *out,
                      uint64_t *size, uint64_t *crc, char *err, size_t errlen)
{
    enum { CH = 4 << 20 };
    char    *in   = tagg_sf_subfile_path(path, ix->sub[k].name);
    char    *buf  = malloc(CH);
    int      ifd  = -1, ofd = -1, rc = -1, created = 0;
    uint64_t want = tagg_sf_subfile_size(ix->logical_size, ix->stripe, ix->count, k);
    uint64_t rcrc = 0, rgot = 0, ocrc = 0;
    if (!in || !buf) {
        set_err(err, errlen, "out of memory");
        goto done;
    }
    if ((ifd = open(in, O_RDONLY)) < 0) {
        set_err(err, errlen, "node-local subfile %" PRIu32 " '%s' (node %s) is missing: %s", k, in,
                ix->sub[k].node ? ix->sub[k].node : "?", strerror(errno));
        goto done;
    }
    if ((ofd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0666)) < 0) {
        set_err(err, errlen, "cannot create '%s': %s", out, strerror(errno));
        goto done;
    }
    created = 1;
    /* local offset by local offset: the raw subfile is read front to back (its
     * checksum accumulates), each piece lies in one stripe */
    for (uint64_t loc = 0; loc < want;) {
        uint64_t n = ix->stripe - loc % ix->stripe;
        if (n > CH)
            n = CH;
        if (n > want - loc)
            n = want - loc;
        uint64_t logical = ((loc / ix->stripe) * ix->count + k) * ix->stripe + loc % ix->stripe;
        ssize_t  r;
        do
            r = pread(ifd, buf, (size_t)n, (off_t)loc);
        while (r < 0 && errno == EINTR);
        if (r < 0) {
            set_err(err, errlen, "reading '%s' at %" PRIu64 ": %s", in, loc, strerror(errno));
            goto done;
        }
        if (r > 0 && loc == rgot)
            rcrc = tagg_crc64(rcrc, buf, (size_t)r), rgot += (uint64_t)r;
        memset(buf + r, 0, (size_t)(n - (uint64_t)r));
        if (tagg_sf_overlay_meta(meta_fd, logical, buf, (size_t)n, err, errlen) < 0)
            goto done;
        for (size_t w = 0; w < n;) {
            ssize_t put = pwrite(ofd, buf + w, (size_t)n - w, (off_t)(loc + w));
            if (put < 0 && errno == EINTR)
                continue;
            if (put <= 0) {
                set_err(err, errlen, "writing '%s': %s", out, put < 0 ? strerror(errno) : "no space");
                goto done;
            }
            w += (size_t)put;
        }
        ocrc = tagg_crc64(ocrc, buf, (size_t)n);
        loc += n;
    }
    { /* the rest of the raw subfile (nothing, unless it is longer than the index says) */
        struct stat st;
        if (fstat(ifd, &st) == 0 && (uint64_t)st.st_size > rgot) {
            uint64_t s2, c2;
            if (tagg_sf_file_crc(in, &s2, &c2, NULL, 0) == 0)
                rgot = s2, rcrc = c2;
        }
    }
    if (ix->closed && (rgot != ix->sub[k].size || rcrc != ix->sub[k].crc)) {
        set_err(err, errlen, "%s node-local subfile %" PRIu32 " '%s': %" PRIu64 " bytes crc64 %016" PRIx64
                             ", the index records %" PRIu64 " bytes crc64 %016" PRIx64,
                rgot != ix->sub[k].size ? "SIZE MISMATCH" : "CHECKSUM MISMATCH", k, in, rgot, rcrc, ix->sub[k].size,
                ix->sub[k].crc);
        goto done;
    }
    if (fsync(ofd) < 0 || close(ofd) < 0) {
        ofd = -1;
        set_err(err, errlen, "writing '%s': %s", out, strerror(errno));
        goto done;
    }
    ofd   = -1;
    *size = want;
    *crc  = ocrc;
    rc    = 0;
done:
    if (ofd >= 0)
        close(ofd);
    if (rc < 0 && created)
        unlink(out);
    if (ifd >= 0)
        close(ifd);
    free(in), free(buf);
    return rc;
}
