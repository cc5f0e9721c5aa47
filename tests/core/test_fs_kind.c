#define _GNU_SOURCE /* unshare */
/* The file system under a path from the mount table (core/src/fs_kind.c):
 * the longest mount point at a '/' boundary, escaped mount points, optional
 * fields, malformed lines; the kinds of type names (FUSE serialises); and the
 * view of real paths on this machine against statfs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fs_kind.h"

static const char table[] =
    "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n"
    "23 22 0:21 / /proc rw,nosuid - proc proc rw\n"
    "30 22 0:30 / /mnt/gl rw,relatime shared:7 master:2 - fuse.glusterfs vm:/tagg rw,user_id=0\n"
    "31 22 0:31 / /mnt/glx rw - nfs4 srv:/x rw\n"
    "32 22 0:32 / /scratch/my\\040data rw - lustre 10.0.0.1@o2ib:/fs rw\n"
    "33 22 0:33 / /dev/shm rw - tmpfs tmpfs rw\n"
    "34 33 0:34 / /dev/shm/sub rw - xfs /dev/sdb rw\n"
    "garbage line without fields\n"
    "35 22 0:35 / /broken rw no-separator-here ext4\n"
    "36 22 0:36 / /mnt/gl/inner rw - fuseblk /dev/sdc rw"; /* last line without a newline */

static const char *type_of(const char *abs)
{
    static char t[64];
    return tagg_mount_type(table, sizeof table - 1, abs, t, sizeof t) == 0 ? t : "(none)";
}

static void test_mount_table(void **s)
{
    (void)s;
    assert_string_equal(type_of("/"), "ext4");
    assert_string_equal(type_of("/home/u/x.h5"), "ext4");
    assert_string_equal(type_of("/mnt/gl"), "fuse.glusterfs");
    assert_string_equal(type_of("/mnt/gl/run/x.h5"), "fuse.glusterfs");
    assert_string_equal(type_of("/mnt/glx/x.h5"), "nfs4");     /* not /mnt/gl: a '/' boundary */
    assert_string_equal(type_of("/mnt/glue/x.h5"), "ext4");
    assert_string_equal(type_of("/scratch/my data/x"), "lustre"); /* \040 is a space */
    assert_string_equal(type_of("/scratch/my\\040data/x"), "ext4");
    assert_string_equal(type_of("/dev/shm/sub/a"), "xfs");     /* the longest mount point */
    assert_string_equal(type_of("/dev/shm/subx"), "tmpfs");
    assert_string_equal(type_of("/broken/x"), "ext4");         /* a line without " - " is skipped */
    assert_string_equal(type_of("/mnt/gl/inner/x"), "fuseblk");
    char t[5];
    assert_int_equal(tagg_mount_type(table, sizeof table - 1, "/mnt/gl/x", t, sizeof t), 0); /* too long: unknown */
    assert_string_equal(t, "");
    assert_int_equal(tagg_mount_type(table, sizeof table - 1, "/x", t, sizeof t), 0); /* "ext4" fits */
    assert_string_equal(t, "ext4");
    assert_int_equal(tagg_mount_type("", 0, "/x", t, sizeof t), -1);
    assert_int_equal(tagg_mount_type("1 2 3\n", 6, "/x", t, sizeof t), -1);
    /* a later mount over the same point hides the earlier one */
    static const char over[] = "1 0 0:1 / /a rw - ext4 d rw\n2 1 0:2 / /a rw - tmpfs t rw\n";
    char t2[64];
    assert_int_equal(tagg_mount_type(over, sizeof over - 1, "/a/b", t2, sizeof t2), 0);
    assert_string_equal(t2, "tmpfs");
}

static void test_kinds(void **s)
{
    (void)s;
    int serial = -1;
    assert_int_equal(tagg_fs_kind_of_type("fuse.glusterfs", &serial), TAGG_FS_NETWORK);
    assert_int_equal(serial, 1);
    assert_int_equal(tagg_fs_kind_of_type("fuse", &serial), TAGG_FS_NETWORK);
    assert_int_equal(serial, 1);
    assert_int_equal(tagg_fs_kind_of_type("fuseblk", &serial), TAGG_FS_NETWORK);
    assert_int_equal(serial, 1);
    assert_int_equal(tagg_fs_kind_of_type("nfs4", &serial), TAGG_FS_NETWORK);
    assert_int_equal(serial, 0);
    assert_int_equal(tagg_fs_kind_of_type("fusectl", &serial), TAGG_FS_OTHER); /* not a FUSE file system */
    assert_int_equal(serial, 0);
    assert_int_equal(tagg_fs_kind_of_type("ext4", NULL), TAGG_FS_LOCAL);
    assert_int_equal(tagg_fs_kind_of_type("xfs", NULL), TAGG_FS_LOCAL);
    assert_int_equal(tagg_fs_kind_of_type("tmpfs", NULL), TAGG_FS_TMPFS);
    assert_int_equal(tagg_fs_kind_of_type("lustre", NULL), TAGG_FS_PARALLEL);
    assert_int_equal(tagg_fs_kind_of_type("gpfs", NULL), TAGG_FS_PARALLEL);
    assert_int_equal(tagg_fs_kind_of_type("overlay", NULL), TAGG_FS_OTHER);
}

/* The kind statfs gives for a path (the same categories), for comparison. */
static int statfs_kind(const char *path, int *serial)
{
    struct statfs st;
    *serial = 0;
    if (statfs(path, &st) != 0)
        return -1;
    switch ((unsigned long)st.f_type) {
    case 0xEF53: case 0x58465342: case 0x9123683E: return TAGG_FS_LOCAL;
    case 0x01021994: return TAGG_FS_TMPFS;
    case 0x65735546: *serial = 1; return TAGG_FS_NETWORK;
    case 0x6969: case 0xFF534D42: return TAGG_FS_NETWORK;
    default: return -2; /* kinds this test does not compare */
    }
}

/* On this machine: the view of a path in an existing directory (a file not
 * yet created, and the directory with a trailing '/'), relative paths
 * included, agrees with statfs of the directory. */
static void test_view_here(void **s)
{
    (void)s;
    const char *dirs[] = {"/dev/shm", "/tmp", "/var/tmp", "/mnt/tagg-gluster", "."};
    int         compared = 0;
    for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
        int serial, k = statfs_kind(dirs[i], &serial);
        if (k < 0)
            continue; /* absent here, or a kind outside the table */
        char     file[4200], slash[4200];
        snprintf(slash, sizeof slash, "%s/", dirs[i]);
        unsigned v = tagg_fs_view(slash);
        snprintf(file, sizeof file, "%s/tagg-fs-kind-not-there-%d.h5", dirs[i], (int)i);
        unsigned w = tagg_fs_view(file);
        if ((int)(v & 0xffu) != k || !!(v & TAGG_FS_SERIAL) != serial || v != w)
            fail_msg("%s: view %#x (file %#x), statfs kind %d serial %d", dirs[i], v, w, k, serial);
        compared++;
    }
    assert_true(compared >= 1);
    assert_int_equal(tagg_fs_view("/no/such/directory/x.h5"), TAGG_FS_OTHER);
}

/* The kept answers follow the mount table: in a child with a mount namespace
 * of its own (root only: unshare needs CAP_SYS_ADMIN), a directory's view
 * changes when a tmpfs is mounted on it and back when it is unmounted. Runs
 * before any other view in this process (a child inherits the parent's kept
 * descriptor, which watches the parent's namespace). */
static void test_view_follows_mounts(void **s)
{
    (void)s;
    char dir[] = "/var/tmp/tagg-fs-kind-XXXXXX", file[64];
    assert_non_null(mkdtemp(dir));
    snprintf(file, sizeof file, "%s/x.h5", dir);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        if (unshare(CLONE_NEWNS) != 0)
            _exit(errno == EPERM ? 3 : 4);
        if (mount("none", "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0)
            _exit(5);
        unsigned before = tagg_fs_view(file), again = tagg_fs_view(file);
        if (before != again || before != tagg_fs_view_uncached(file) || (before & 0xffu) == TAGG_FS_TMPFS)
            _exit(6);
        if (mount("none", dir, "tmpfs", 0, NULL) != 0)
            _exit(7);
        unsigned on = tagg_fs_view(file);
        umount(dir);
        unsigned off = tagg_fs_view(file);
        _exit((on & 0xffu) == TAGG_FS_TMPFS && off == before ? 0 : 8);
    }
    int st = 0;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    rmdir(dir);
    assert_true(WIFEXITED(st));
    if (WEXITSTATUS(st) == 3) {
        printf("view_follows_mounts: not root (unshare: EPERM), the mount check did not run\n");
        return;
    }
    if (WEXITSTATUS(st) != 0)
        fail_msg("child failed at step %d (6: cached view differs; 8: a mount or unmount not seen)", WEXITSTATUS(st));
}

/* A device's nature from a sysfs tree made here as the kernel lays it out:
 * dev/block/MAJ:MIN links into devices/, a partition's directory inside its
 * disk's (with a `partition` attribute, no queue of its own). One table makes
 * the tree (in order) and removes it (in reverse). */
static const struct {
    char        kind; /* 'd' directory, 'f' file with text, 'l' link to text */
    const char *rel, *text;
} sysfs_tree[] = {
    {'d', "dev", NULL},
    {'d', "dev/block", NULL},
    {'d', "devices", NULL},
    {'d', "devices/sda", NULL},
    {'d', "devices/sda/queue", NULL},
    {'f', "devices/sda/queue/rotational", "1\n"},
    {'d', "devices/sda/sda1", NULL},
    {'f', "devices/sda/sda1/partition", "1\n"},
    {'d', "devices/nvme0n1", NULL},
    {'d', "devices/nvme0n1/queue", NULL},
    {'f', "devices/nvme0n1/queue/rotational", "0\n"},
    {'d', "devices/nvme0n1/nvme0n1p2", NULL},
    {'f', "devices/nvme0n1/nvme0n1p2/partition", "2\n"},
    {'d', "devices/odd", NULL},
    {'d', "devices/odd/queue", NULL},
    {'f', "devices/odd/queue/rotational", ""}, /* empty: unknown */
    {'l', "dev/block/8:0", "../../devices/sda"},
    {'l', "dev/block/8:1", "../../devices/sda/sda1"},
    {'l', "dev/block/259:0", "../../devices/nvme0n1"},
    {'l', "dev/block/259:2", "../../devices/nvme0n1/nvme0n1p2"},
    {'l', "dev/block/7:3", "../../devices/odd"},
};

static void test_rotational(void **s)
{
    (void)s;
    char root[] = "/tmp/tagg-sysfs-XXXXXX", p[4200];
    size_t n = sizeof sysfs_tree / sizeof sysfs_tree[0];
    assert_non_null(mkdtemp(root));
    for (size_t i = 0; i < n; i++) {
        snprintf(p, sizeof p, "%s/%s", root, sysfs_tree[i].rel);
        if (sysfs_tree[i].kind == 'd')
            assert_int_equal(mkdir(p, 0700), 0);
        else if (sysfs_tree[i].kind == 'l')
            assert_int_equal(symlink(sysfs_tree[i].text, p), 0);
        else {
            FILE *f = fopen(p, "w");
            assert_non_null(f);
            fputs(sysfs_tree[i].text, f);
            fclose(f);
        }
    }
    assert_int_equal(tagg_dev_rotational(root, makedev(8, 0)), 1);
    assert_int_equal(tagg_dev_rotational(root, makedev(8, 1)), 1);   /* a partition: its disk's */
    assert_int_equal(tagg_dev_rotational(root, makedev(259, 0)), 0);
    assert_int_equal(tagg_dev_rotational(root, makedev(259, 2)), 0);
    assert_int_equal(tagg_dev_rotational(root, makedev(7, 3)), 0);   /* unreadable attribute */
    assert_int_equal(tagg_dev_rotational(root, makedev(8, 16)), 0);  /* no such device */
    assert_int_equal(tagg_dev_rotational(root, makedev(0, 45)), 0);  /* anonymous: tmpfs, FUSE */
    assert_int_equal(tagg_dev_rotational("/no/such/sysfs", makedev(8, 0)), 0);
    for (size_t i = n; i-- > 0;) {
        snprintf(p, sizeof p, "%s/%s", root, sysfs_tree[i].rel);
        if (sysfs_tree[i].kind == 'd' ? rmdir(p) : unlink(p))
            fail_msg("%s: %s", p, strerror(errno));
    }
    rmdir(root);
    /* this machine: a local disk's view says what its device says; tmpfs never rotational */
    struct stat st;
    if (stat("/var/tmp", &st) == 0 && (tagg_fs_view("/var/tmp/x.h5") & 0xffu) == TAGG_FS_LOCAL)
        assert_int_equal(!!(tagg_fs_view("/var/tmp/x.h5") & TAGG_FS_ROTATIONAL), tagg_dev_rotational("/sys", st.st_dev));
    assert_int_equal(tagg_fs_view("/dev/shm/x.h5") & TAGG_FS_ROTATIONAL, 0);
}

/* Kept answers equal fresh ones, absolute and relative names alike. */
static void test_view_cached(void **s)
{
    (void)s;
    const char *paths[] = {"/dev/shm/x.h5", "/tmp/x.h5", "/var/tmp/", "x.h5", "./x.h5", "/", "/no/such/dir/x.h5"};
    for (int round = 0; round < 2; round++)
        for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) {
            unsigned a = tagg_fs_view(paths[i]), b = tagg_fs_view_uncached(paths[i]);
            if (a != b)
                fail_msg("%s: kept view %#x, fresh %#x (round %d)", paths[i], a, b, round);
        }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_view_follows_mounts), /* first: see there */
        cmocka_unit_test(test_mount_table),
        cmocka_unit_test(test_kinds),
        cmocka_unit_test(test_view_here),
        cmocka_unit_test(test_view_cached),
        cmocka_unit_test(test_rotational),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
