#include "record.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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
