/* record=FILE (self-tuning, issue 16): rank 0 appends one JSON line per
 * collective call (format: tagg/tune.h, tagg_tune_record_format). No MPI here:
 * the caller has the call's description and times; this appends safely. */
#ifndef TAGG_RECORD_H
#define TAGG_RECORD_H

#include <stddef.h>

/* Appends len bytes (one whole line) to the record file through *fd, kept
 * open from the first record to the file's close (one write(2) a record, not
 * open + write + close: tens of microseconds on a small call's critical
 * path). *fd < 0: the file is opened here, created 0644 when absent, never
 * through a symlink, only a regular file, with O_APPEND so that lines of
 * concurrent jobs do not interleave. 0, or -1 with a message (*fd then closed
 * and < 0). tagg_record_close closes it. */
int  tagg_record_append_fd(int *fd, const char *path, const char *line, size_t len, char *err, size_t errlen);
void tagg_record_close(int *fd);

#endif
