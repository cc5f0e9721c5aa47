#include "record.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

int tagg_fs_kind(const char *path)
{
    struct statfs s;
    char          dir[4096];
    if (statfs(path, &s) != 0) { /* not created yet: its directory */
        snprintf(dir, sizeof dir, "%s", path);
        char *slash = strrchr(dir, '/');
        if (slash == dir)
            slash[1] = '\0';
        else if (slash)
            *slash = '\0';
        else
            snprintf(dir, sizeof dir, ".");
        if (statfs(dir, &s) != 0)
            return 0;
    }
    switch ((unsigned long)s.f_type) {
    case 0xEF53:     /* ext2/3/4 */
    case 0x58465342: /* xfs */
    case 0x9123683E: /* btrfs */
        return 1;
    case 0x01021994: /* tmpfs */
        return 2;
    case 0x6969:     /* nfs */
    case 0x65735546: /* fuse (GlusterFS's client, ...) */
    case 0xFF534D42: /* cifs */
        return 3;
    case 0x0BD00BD0: /* lustre */
    case 0x47504653: /* gpfs */
        return 4;
    default:
        return 0;
    }
}

/* Opens the record file: created 0644 when absent, no symlink, regular files only. */
static int record_open(const char *path, char *err, size_t errlen)
{
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0644);
    if (fd < 0) {
        snprintf(err, errlen, "record file %s: %s", path, strerror(errno));
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        snprintf(err, errlen, "record file %s: not a regular file", path);
        close(fd);
        return -1;
    }
    return fd;
}

static int record_write(int fd, const char *path, const char *line, size_t len, char *err, size_t errlen)
{
    ssize_t n;
    do
        n = write(fd, line, len);
    while (n < 0 && errno == EINTR);
    if (n != (ssize_t)len) {
        snprintf(err, errlen, "record file %s: %s", path, n < 0 ? strerror(errno) : "short write");
        return -1;
    }
    return 0;
}

int tagg_record_append_fd(int *fd, const char *path, const char *line, size_t len, char *err, size_t errlen)
{
    if (*fd < 0 && (*fd = record_open(path, err, errlen)) < 0)
        return -1;
    if (record_write(*fd, path, line, len, err, errlen) < 0) {
        tagg_record_close(fd);
        return -1;
    }
    return 0;
}

void tagg_record_close(int *fd)
{
    if (*fd >= 0)
        close(*fd);
    *fd = -1;
}
