/* The file system under a path from the mount table (fs_kind.h). */
#define _GNU_SOURCE /* realpath */
#include "fs_kind.h"

#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/vfs.h>
#include <unistd.h>

int tagg_fs_kind_of_type(const char *type, int *serial)
{
    static const struct {
        const char *name;
        int         kind;
    } kinds[] = {
        {"ext2", TAGG_FS_LOCAL},     {"ext3", TAGG_FS_LOCAL},   {"ext4", TAGG_FS_LOCAL},     {"xfs", TAGG_FS_LOCAL},
        {"btrfs", TAGG_FS_LOCAL},    {"tmpfs", TAGG_FS_TMPFS},  {"nfs", TAGG_FS_NETWORK},    {"nfs4", TAGG_FS_NETWORK},
        {"cifs", TAGG_FS_NETWORK},   {"smb3", TAGG_FS_NETWORK}, {"lustre", TAGG_FS_PARALLEL}, {"gpfs", TAGG_FS_PARALLEL},
    };
    int fuse = !strcmp(type, "fuse") || !strcmp(type, "fuseblk") || !strncmp(type, "fuse.", 5);
    if (serial)
        *serial = fuse;
    if (fuse)
        return TAGG_FS_NETWORK;
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (!strcmp(type, kinds[i].name))
            return kinds[i].kind;
    return TAGG_FS_OTHER;
}

/* One space-separated field of line [p, e) starting at p: its bounds. */
static const char *field(const char *p, const char *e, const char **end)
{
    while (p < e && *p == ' ')
        p++;
    const char *q = p;
    while (q < e && *q != ' ')
        q++;
    *end = q;
    return p;
}

/* A mountinfo mount point, its octal escapes (\040 space, \011, \012, \134)
 * undone, into out; -1 when it does not fit. */
static int unescape(const char *p, const char *e, char *out, size_t n)
{
    size_t k = 0;
    for (; p < e; p++) {
        char c = *p;
        if (c == '\\' && e - p >= 4 && p[1] >= '0' && p[1] <= '3' && p[2] >= '0' && p[2] <= '7' && p[3] >= '0' &&
            p[3] <= '7') {
            c = (char)((p[1] - '0') * 64 + (p[2] - '0') * 8 + (p[3] - '0'));
            p += 3;
        }
        if (k + 1 >= n)
            return -1;
        out[k++] = c;
    }
    out[k] = '\0';
    return 0;
}

/* Is mount point m a prefix of abs that ends at a '/' boundary? Its length. */
static size_t covers(const char *m, const char *abs)
{
    size_t l = strlen(m);
    if (l == 1 && m[0] == '/')
        return abs[0] == '/' ? 1 : 0;
    return strncmp(m, abs, l) == 0 && (abs[l] == '/' || abs[l] == '\0') ? l : 0;
}

int tagg_mount_type(const char *mountinfo, size_t len, const char *abs, char *type, size_t typelen)
{
    const char *p = mountinfo, *end = mountinfo + len;
    size_t      best = 0;
    int         found = -1;
    char        mnt[PATH_MAX];
    while (p < end) {
        const char *e = memchr(p, '\n', (size_t)(end - p)), *fe, *f;
        if (!e)
            e = end;
        f = p;
        for (int i = 0; i < 4 && f < e; i++) /* id, parent, major:minor, root */
            field(f, e, &f);
        const char *m = field(f, e, &fe);
        const char *sep = NULL;
        for (const char *s = fe; s + 3 <= e; s++) /* the optional fields end at " - " */
            if (s[0] == ' ' && s[1] == '-' && s[2] == ' ') {
                sep = s + 3;
                break;
            }
        size_t l;
        if (m < fe && sep && unescape(m, fe, mnt, sizeof mnt) == 0 && (l = covers(mnt, abs)) > 0 && l >= best) {
            const char *te, *t = field(sep, e, &te);
            size_t      tl = (size_t)(te - t) < typelen ? (size_t)(te - t) : 0; /* too long: no known type */
            memcpy(type, t, tl);
            type[tl] = '\0';
            best = l, found = 0;
        }
        p = e + 1;
    }
    return found;
}

/* The whole mount table, or NULL (procfs files report size 0: read to EOF). */
static char *read_mountinfo(size_t *len)
{
    int fd = open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    size_t cap = 16384, n = 0;
    char  *buf = malloc(cap);
    for (ssize_t got; buf;) {
        if (n == cap) {
            char *t = cap < (64u << 20) ? realloc(buf, 2 * cap) : NULL;
            if (!t) {
                free(buf), buf = NULL;
                break;
            }
            buf = t, cap *= 2;
        }
        got = read(fd, buf + n, cap - n);
        if (got < 0) {
            free(buf), buf = NULL;
        }
        else if (got == 0)
            break;
        else
            n += (size_t)got;
    }
    close(fd);
    *len = n;
    return buf;
}

static unsigned by_statfs(const char *path)
{
    struct statfs s;
    if (statfs(path, &s) != 0)
        return TAGG_FS_OTHER;
    switch ((unsigned long)s.f_type) {
    case 0xEF53:     /* ext2/3/4 */
    case 0x58465342: /* xfs */
    case 0x9123683E: /* btrfs */
        return TAGG_FS_LOCAL;
    case 0x01021994: /* tmpfs */
        return TAGG_FS_TMPFS;
    case 0x65735546: /* fuse */
        return TAGG_FS_NETWORK | TAGG_FS_SERIAL;
    case 0x6969:     /* nfs */
    case 0xFF534D42: /* cifs */
        return TAGG_FS_NETWORK;
    case 0x0BD00BD0: /* lustre */
    case 0x47504653: /* gpfs */
        return TAGG_FS_PARALLEL;
    default:
        return TAGG_FS_OTHER;
    }
}

/* The first byte of a small sysfs attribute under sysroot, or -1. */
static int sys_byte(const char *sysroot, unsigned maj, unsigned min, const char *rel)
{
    char p[PATH_MAX], c = 0;
    int  n = snprintf(p, sizeof p, "%s/dev/block/%u:%u/%s", sysroot, maj, min, rel);
    if (n < 0 || (size_t)n >= sizeof p)
        return -1;
    int fd = open(p, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0)
        return -1;
    ssize_t got = read(fd, &c, 1);
    close(fd);
    return got == 1 ? (unsigned char)c : -1;
}

int tagg_dev_rotational(const char *sysroot, unsigned long long dev)
{
    unsigned maj = major((dev_t)dev), min = minor((dev_t)dev);
    if (maj == 0) /* anonymous devices: tmpfs, FUSE, overlay, btrfs subvolumes */
        return 0;
    int c = sys_byte(sysroot, maj, min, "queue/rotational");
    if (c < 0 && sys_byte(sysroot, maj, min, "partition") >= 0) /* a partition: its disk's queue */
        c = sys_byte(sysroot, maj, min, "../queue/rotational");
    return c == '1';
}

/* A local disk's view with its device's nature (the directory abs). */
static unsigned with_device(unsigned view, const char *abs)
{
    struct stat st;
    if ((view & 0xffu) == TAGG_FS_LOCAL && stat(abs, &st) == 0 && tagg_dev_rotational("/sys", st.st_dev) == 1)
        view |= TAGG_FS_ROTATIONAL;
    return view;
}

unsigned tagg_fs_view_uncached(const char *path)
{
    char   dir[PATH_MAX], abs[PATH_MAX], type[64];
    size_t len = 0;
    /* the directory: its components are looked up already (a look at the
     * file itself, which is often not there yet, would be a round trip to the
     * file server each time: a negative lookup is not cached over FUSE without
     * a client cache). A file that is a link into another mount is seen by
     * its directory's kind. */
    const char *slash = strrchr(path, '/'); /* the directory with its '/', or "." */
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - path + 1) : 1, slash ? path : ".");
    if (!realpath(dir, abs))
        return TAGG_FS_OTHER;
    char *text = read_mountinfo(&len);
    int   rc   = text ? tagg_mount_type(text, len, abs, type, sizeof type) : -1;
    free(text);
    if (rc < 0)
        return with_device(by_statfs(abs), abs);
    int serial = 0, kind = tagg_fs_kind_of_type(type, &serial);
    return with_device((unsigned)kind | (serial ? TAGG_FS_SERIAL : 0u), abs);
}

/* The answers of this process, by directory as named (made absolute against
 * the working directory), while the mount table stays as it was: a
 * descriptor of /proc/self/mountinfo kept open reports any mount or unmount
 * since the last poll (POLLPRI, proc(5)), which empties the cache. One poll
 * instead of a realpath and a read of the table (about 50 us per open). */
#define VIEW_CACHE 16
static struct {
    pthread_mutex_t mu;
    int             fd; /* -1 not opened yet, -2 cannot be: no cache */
    int             n, next;
    struct {
        char    *dir;
        unsigned view;
    } e[VIEW_CACHE];
} views = {PTHREAD_MUTEX_INITIALIZER, -1, 0, 0, {{NULL, 0}}};

static void views_clear(void)
{
    for (int i = 0; i < views.n; i++)
        free(views.e[i].dir), views.e[i].dir = NULL;
    views.n = views.next = 0;
}

__attribute__((destructor)) static void views_free(void) /* exit, or the plugin's dlclose */
{
    views_clear();
    if (views.fd >= 0)
        close(views.fd);
    views.fd = -1;
}

unsigned tagg_fs_view(const char *path)
{
    char        key[PATH_MAX + 2];
    const char *slash = strrchr(path, '/');
    int         dl    = slash ? (int)(slash - path + 1) : 0, n;
    if (path[0] == '/')
        n = snprintf(key, sizeof key, "%.*s", dl, path);
    else {
        char cwd[PATH_MAX];
        if (!getcwd(cwd, sizeof cwd))
            return tagg_fs_view_uncached(path);
        n = snprintf(key, sizeof key, "%s/%.*s", cwd, dl, path);
    }
    if (n < 0 || (size_t)n >= sizeof key)
        return tagg_fs_view_uncached(path);
    pthread_mutex_lock(&views.mu);
    if (views.fd == -1 && (views.fd = open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC)) < 0)
        views.fd = -2;
    struct pollfd p = {.fd = views.fd, .events = POLLPRI};
    if (views.fd >= 0 && poll(&p, 1, 0) != 0) /* changed (or the poll failed): ask again */
        views_clear();
    for (int i = 0; views.fd >= 0 && i < views.n; i++)
        if (!strcmp(views.e[i].dir, key)) {
            unsigned v = views.e[i].view;
            pthread_mutex_unlock(&views.mu);
            return v;
        }
    unsigned v = tagg_fs_view_uncached(path);
    char    *d = views.fd >= 0 ? strdup(key) : NULL;
    if (d) {
        int i = views.n < VIEW_CACHE ? views.n++ : views.next++ % VIEW_CACHE;
        free(views.e[i].dir);
        views.e[i].dir = d, views.e[i].view = v;
    }
    pthread_mutex_unlock(&views.mu);
    return v;
}
