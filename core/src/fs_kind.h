/* What kind of file system holds a path, and whether its client serialises
 * the writes of one node into one file: from the mount table
 * (/proc/self/mountinfo), which costs no round trip to a file server (statfs
 * over FUSE asks every brick: 0.4-1 ms on the GlusterFS testbed), with statfs
 * as the fallback where the table cannot be read. */
#ifndef TAGG_FS_KIND_H
#define TAGG_FS_KIND_H

#include <stddef.h>

/* The fs_kind of tagg/tune.h: 0 other or unknown, 1 local disk (ext2/3/4,
 * xfs, btrfs), 2 tmpfs, 3 network or FUSE (NFS, CIFS, FUSE: GlusterFS, ...),
 * 4 parallel (Lustre, GPFS). */
enum { TAGG_FS_OTHER = 0, TAGG_FS_LOCAL = 1, TAGG_FS_TMPFS = 2, TAGG_FS_NETWORK = 3, TAGG_FS_PARALLEL = 4 };

/* Set in the kind word of a rank's describe row (engine.h): the client
 * serialises a file's writes (Linux FUSE takes the file's lock for each
 * write); the call plan's serial_writes. */
#define TAGG_FS_SERIAL 0x100u
/* Set in the same word: this rank's layout moves large accesses with O_DIRECT
 * in blocks of TAGG_DIO_ALIGN (store.h dio_block); the plan aligns rounds to
 * them when every rank's does. */
#define TAGG_FS_DIO 0x200u
/* Set in a view (and the same word) for a local disk whose block device
 * reports itself rotational (sysfs queue/rotational): several streams of
 * direct writes into one file make it seek between them, so the call plan
 * takes such writes as one stream per node, as it does a serialising client
 * (engine_plan.c agree_fs; only for writes with O_DIRECT, TAGG_FS_DIO: the
 * page cache's writeback already sends buffered ones as one sorted stream). */
#define TAGG_FS_ROTATIONAL 0x400u

/* The kind of a mount-table type name ("ext4", "fuse.glusterfs", "nfs4",
 * "lustre", ...); *serial (may be NULL) 1 for FUSE types. */
int tagg_fs_kind_of_type(const char *type, int *serial);

/* Pure: the type of the mount holding the absolute, normalised path abs, from
 * the text of a mountinfo table (proc(5): mount point the fifth field, octal
 * escapes, type after the " - " separator); the longest mount point that is
 * a prefix of abs at a '/' boundary, the last such line when several. 0 and
 * type filled ("" when it does not fit typelen), or -1 (no line matched). */
int tagg_mount_type(const char *mountinfo, size_t len, const char *abs, char *type, size_t typelen);

/* Whether the block device dev (a stat's st_dev) is rotational, from the
 * sysfs tree at sysroot ("/sys"): its queue/rotational, or its parent's for a
 * partition (dev/block/MAJ:MIN/partition present). 1 rotational, 0 not, or
 * unknown (no such device: tmpfs, FUSE, an unreadable tree). */
int tagg_dev_rotational(const char *sysroot, unsigned long long dev);

/* The kind of the file system holding path's directory, in the low byte,
 * | TAGG_FS_SERIAL when its client serialises writes, | TAGG_FS_ROTATIONAL
 * for a local disk on a rotational device. Local: no message
 * passing, no lookup of the file itself (realpath of the directory, the
 * mount table). */
unsigned tagg_fs_view(const char *path);
/* The same, asked afresh: tagg_fs_view keeps the answers of this process by
 * directory while the mount table does not change (one poll of a kept
 * descriptor of /proc/self/mountinfo per call). A link in the directory's
 * path that is changed to point into another mount while the process runs is
 * not seen (the kind only chooses handles and costs, never what is written). */
unsigned tagg_fs_view_uncached(const char *path);

#endif
