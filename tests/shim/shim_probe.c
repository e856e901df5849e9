/* shim_probe: one C program that calls the libc entry points agents use on emulated files and
 * prints what it gets, one line per check, so that tests/cli/test_shim.sh (and, built -static
 * for the seccomp route, test_exec_go.sh) can compare the answers with the kernel's
 * (sysfs §1). Built several ways (plain, fortified, 64-bit offsets) so every generation
 * of symbols is exercised. Also: threads reading while others open and close, and a fork child
 * reading an inherited emulated descriptor. */
#define _GNU_SOURCE /* nftw */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#define Z "/sys/class/powercap/intel-rapl:0/"

static void say(const char *what, long v, int err)
{
    printf("%s %ld %s\n", what, v, v < 0 ? strerror(err) : "ok");
}
/* The call first, then its errno (a function's arguments are evaluated in no fixed order). */
#define SAY(what, expr)                                                                                \
    do {                                                                                           \
        errno = 0;                                                                                 \
        long v_ = (long)(expr);                                                                    \
        say(what, v_, errno);                                                                      \
    } while (0)

static int walked, walked_links, walked_dirs;

static int count(const char *path, const struct stat *st, int type, struct FTW *f)
{
    (void)path, (void)st, (void)f;
    walked++;
    walked_links += type == FTW_SL;
    walked_dirs += type == FTW_D || type == FTW_DP;
    return 0;
}

static void *reader(void *arg)
{
    long *bad = arg;
    char buf[64];
    unsigned long long last = 0;
    for (int i = 0; i < 20000; i++) {
        int fd = open(Z "energy_uj", O_RDONLY);
        ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
        if (n <= 0) {
            (*bad)++;
        } else {
            buf[n] = 0;
            unsigned long long v = strtoull(buf, NULL, 10);
            if (v < last)
                (*bad)++;
            last = v;
        }
        close(fd);
    }
    return NULL;
}

int main(void)
{
    char buf[4200] __attribute__((aligned(8))); /* also getdents64 records */
    struct stat st;
    int fd = open(Z "energy_uj", O_RDONLY);
    SAY("open", fd);
    ssize_t a = pread(fd, buf, sizeof buf, 0);
    usleep(20000);
    ssize_t b = pread(fd, buf + 100, sizeof buf - 100, 0);
    buf[a > 0 ? a : 0] = 0;
    buf[100 + (b > 0 ? b : 0)] = 0;
    printf("pread-moves %d\n", strtoull(buf + 100, NULL, 10) > strtoull(buf, NULL, 10));
    int nfd = open(Z "name", O_RDONLY);
    SAY("read-part", read(nfd, buf, 6)); /* "packag": the show at offset 0 */
    SAY("read-rest", read(nfd, buf, 10)); /* "e-0\n": the rest of the same show */
    SAY("read-eof", read(nfd, buf, 10));  /* then EOF */
    close(nfd);
    SAY("pread-past-end", pread(fd, buf, 10, 100)); /* EPERM, the kernel's quirk */
    SAY("lseek-end", lseek(fd, 0, SEEK_END));
    fstat(fd, &st);
    printf("fstat size %ld mode %o\n", (long)st.st_size, st.st_mode & 07777);
    SAY("write-ro-fd", write(fd, "1", 1));
    int d = dup(fd);
    SAY("dup-read", pread(d, buf, 20, 0) > 0);
    close(d);
    pid_t child = fork();
    if (child == 0)
        _exit(pread(fd, buf, 20, 0) > 0 ? 0 : 1);
    int status;
    waitpid(child, &status, 0);
    printf("fork-child-read %d\n", WIFEXITED(status) && WEXITSTATUS(status) == 0);
    SAY("close", close(fd));
    SAY("close-again", close(fd));

    SAY("open-ro-for-write", open(Z "name", O_WRONLY));
    SAY("open-new-name", open(Z "nope", O_WRONLY | O_CREAT, 0644));
    SAY("open-excl", open(Z "name", O_RDONLY | O_CREAT | O_EXCL, 0644));
    SAY("open-dir-for-write", open(Z, O_WRONLY));
    SAY("open-missing", open(Z "missing", O_RDONLY));
    fd = open(Z "constraint_0_power_limit_uw", O_WRONLY | O_TRUNC);
    SAY("write-bad", write(fd, "12ab", 4));
    SAY("write-empty", write(fd, "", 0));
    SAY("pwrite-nul-padded", pwrite(fd, "100062499\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 24, 0));
    struct iovec iov[2] = {{"1000", 4}, {"00000\n", 6}};
    SAY("writev", writev(fd, iov, 2));
    close(fd);
    fd = open(Z "constraint_0_power_limit_uw", O_RDONLY);
    ssize_t n = read(fd, buf, sizeof buf - 1);
    buf[n > 0 ? n : 0] = 0;
    printf("readback %s", buf);
    close(fd);
    fd = open(Z "intel-rapl:0:0/constraint_0_power_limit_uw", O_RDWR);
    SAY("write-disabled", write(fd, "5000000", 7));
    close(fd);

    SAY("stat-link", lstat("/sys/class/powercap/intel-rapl:0", &st));
    printf("lstat mode %o\n", st.st_mode & S_IFMT);
    char link[256];
    n = readlink("/sys/class/powercap/intel-rapl:0", link, sizeof link - 1);
    link[n > 0 ? n : 0] = 0;
    printf("readlink %s\n", link);
    char *rp = realpath("/sys/class/powercap/intel-rapl:0/../intel-rapl:1/./name", NULL);
    printf("realpath %s\n", rp ? rp : strerror(errno));
    free(rp);
    struct statfs sf;
    statfs("/sys/class/powercap", &sf);
    printf("statfs 0x%lx\n", (unsigned long)sf.f_type);
    SAY("access-w-ro", access(Z "energy_uj", W_OK));
    SAY("access-missing", access(Z "missing", F_OK));
    SAY("unlink", unlink(Z "name"));
    SAY("mkdir", mkdir("/sys/class/powercap/x", 0755));
    int dirfd = open("/sys/devices/virtual/powercap/intel-rapl", O_RDONLY | O_DIRECTORY);
    fd = openat(dirfd, "intel-rapl:1/name", O_RDONLY);
    n = read(fd, buf, sizeof buf - 1);
    buf[n > 0 ? n : 0] = 0;
    printf("openat %s", buf);
    close(fd);
    close(dirfd);
    fd = open(Z "name", O_PATH);
    SAY("read-opath", read(fd, buf, 10));
    SAY("lseek-opath", lseek(fd, 0, SEEK_SET));
    close(fd);
    /* A directory's listing through getdents64 in small buffers, then again after SEEK_END,
     * which is 0 for a directory. */
    dirfd = open("/sys/class/powercap", O_RDONLY | O_DIRECTORY);
    SAY("getdents-too-small", getdents64(dirfd, buf, 10));
    for (int pass = 0; pass < 2; pass++) {
        printf("getdents");
        while ((n = getdents64(dirfd, buf, 64)) > 0)
            for (char *r = buf; r < buf + n; r += ((struct dirent64 *)r)->d_reclen)
                printf(" %s", ((struct dirent64 *)r)->d_name);
        printf("\n");
        SAY("lseek-dir-end", lseek(dirfd, 0, SEEK_END));
    }
    close(dirfd);
    /* /sys/class is the host's with the node's entries first: powercap once, the host's net. */
    dirfd = open("/sys/class", O_RDONLY | O_DIRECTORY);
    int powercap = 0, net = 0;
    while ((n = getdents64(dirfd, buf, sizeof buf)) > 0)
        for (char *r = buf; r < buf + n; r += ((struct dirent64 *)r)->d_reclen) {
            powercap += !strcmp(((struct dirent64 *)r)->d_name, "powercap");
            net += !strcmp(((struct dirent64 *)r)->d_name, "net");
        }
    printf("overlay powercap %d net %d\n", powercap, net);
    close(dirfd);
    SAY("host-passthrough", access("/proc/self/status", R_OK));
    FILE *f = fopen("/proc/cpuinfo", "r");
    int blocks = 0;
    while (f && fgets(buf, sizeof buf, f))
        blocks += !strncmp(buf, "processor", 9);
    if (f)
        fclose(f);
    printf("cpuinfo-blocks %d\n", blocks);

    /* nftw on the tree: glibc's own walk would see the host's */
    nftw("/sys/class/powercap", count, 8, FTW_PHYS);
    printf("nftw-phys %d entries %d links %d dirs\n", walked, walked_links, walked_dirs);
    walked = walked_links = walked_dirs = 0;
    /* following links: each directory once, as glibc's nftw walks the kernel's sysfs, whose
     * subsystem and device links lead back into the tree (77 entries, 11 directories: what
     * glibc's own nftw counts on a copy of the node's tree with real symlinks) */
    nftw("/sys/devices/virtual/powercap/intel-rapl/", count, 8, FTW_DEPTH | FTW_CHDIR);
    printf("nftw-depth %d entries %d dirs\n", walked, walked_dirs);

    long bad = 0;
    pthread_t th[4];
    for (int i = 0; i < 4; i++)
        pthread_create(&th[i], NULL, reader, &bad);
    for (int i = 0; i < 4; i++)
        pthread_join(th[i], NULL);
    printf("threads-bad %ld\n", bad);
    return 0;
}
