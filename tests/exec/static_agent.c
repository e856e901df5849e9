/* static_agent: the basic checks of an energy agent, built with gcc -static for
 * tests/cli/test_exec_go.sh: no dynamic loader runs, so LD_PRELOAD is never read and only the
 * seccomp supervisor can show it the node. One line per check:
 * RAPL zones by readdir (name, link target), energy_uj read twice through one descriptor with
 * pread at 0, a PL1 write read back floored to the power unit, an invalid one (EINVAL), the
 * cpufreq policies by readdir, /proc/cpuinfo's processor blocks, and an exec'd child (this
 * program again) reading a zone's name.
 * `redirect FILE VALUE` and `stdin FILE` do what a static shell does for `echo VALUE > FILE` and
 * `cat < FILE`: the file is dup2'ed onto 1 (or 0) and used through that number, outside the
 * supervisor's descriptor window.
 * `churn N` opens, reads and closes energy_uj N times and holds 200 zone names open at once, as
 * a long-running agent does over hours: every read must be a counter or the name, whichever
 * placeholder the supervisor had ready (made ahead, made at the open, closed and reused).
 * Usage: static_agent [child | redirect FILE VALUE | stdin FILE | churn N] */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define PC "/sys/class/powercap"
#define Z PC "/intel-rapl:0/"

static int read_file(const char *path, char *buf, size_t len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, len - 1);
    close(fd);
    buf[n > 0 ? n : 0] = 0;
    buf[strcspn(buf, "\n")] = 0;
    return n < 0 ? -1 : 0;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int churn(int n)
{
    char buf[64];
    for (int i = 0; i < n; i++)
        if (read_file(Z "energy_uj", buf, sizeof buf) < 0 || !buf[0] || strspn(buf, "0123456789") != strlen(buf)) {
            printf("churn: read %d of energy_uj gave \"%s\"\n", i, buf);
            return 1;
        }
    enum { HELD = 200 };
    int fds[HELD];
    for (int i = 0; i < HELD; i++)
        if ((fds[i] = open(Z "name", O_RDONLY)) < 0) {
            printf("churn: open %d of name: %s\n", i, strerror(errno));
            return 1;
        }
    for (int i = 0; i < HELD; i++) {
        ssize_t k = pread(fds[i], buf, sizeof buf, 0);
        if (k != 10 || memcmp(buf, "package-0\n", 10)) {
            printf("churn: descriptor %d (%d) read %zd bytes\n", i, fds[i], k);
            return 1;
        }
    }
    for (int i = 0; i < HELD; i++)
        close(fds[i]);
    printf("churn ok\n");
    return 0;
}

int main(int argc, char **argv)
{
    char buf[256], path[512];
    if (argc > 1 && !strcmp(argv[1], "child")) {
        read_file(Z "name", buf, sizeof buf);
        printf("child name %s\n", buf);
        return 0;
    }
    if (argc > 3 && !strcmp(argv[1], "redirect")) {
        int fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0666);
        if (fd < 0 || dup2(fd, 1) < 0)
            return 1;
        close(fd);
        printf("%s\n", argv[3]);
        return fflush(stdout) ? 1 : 0;
    }
    if (argc > 2 && !strcmp(argv[1], "stdin")) {
        int fd = open(argv[2], O_RDONLY);
        if (fd < 0 || dup2(fd, 0) < 0)
            return 1;
        close(fd);
        ssize_t n = read(0, buf, sizeof buf - 1);
        buf[n > 0 ? n : 0] = 0;
        printf("stdin %s", buf);
        return 0;
    }
    if (argc > 2 && !strcmp(argv[1], "churn"))
        return churn(atoi(argv[2]));
    DIR *d = opendir(PC);
    char *names[64];
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)) && n < 64)
        if (!strncmp(e->d_name, "intel-rapl:", 11))
            names[n++] = strdup(e->d_name);
    if (d)
        closedir(d);
    qsort(names, (size_t)n, sizeof *names, by_name);
    for (int i = 0; i < n; i++) {
        char link[256] = "", name[64] = "";
        snprintf(path, sizeof path, PC "/%s", names[i]);
        ssize_t k = readlink(path, link, sizeof link - 1);
        link[k > 0 ? k : 0] = 0;
        snprintf(path, sizeof path, PC "/%s/name", names[i]);
        read_file(path, name, sizeof name);
        printf("zone %s %s -> %s\n", names[i], name, link);
        free(names[i]);
    }
    struct stat st;
    if (stat(Z "energy_uj", &st) == 0)
        printf("energy_uj mode %o size %lld\n", st.st_mode & 07777, (long long)st.st_size);

    int fd = open(Z "energy_uj", O_RDONLY);
    char a[64] = "", b[64] = "";
    ssize_t ka = pread(fd, a, sizeof a - 1, 0);
    usleep(50000);
    ssize_t kb = pread(fd, b, sizeof b - 1, 0);
    close(fd);
    printf("energy moves %d\n", ka > 0 && kb > 0 && strtoull(b, NULL, 10) > strtoull(a, NULL, 10));

    fd = open(Z "constraint_0_power_limit_uw", O_WRONLY);
    ssize_t w = write(fd, "120000001", 9);
    close(fd);
    read_file(Z "constraint_0_power_limit_uw", buf, sizeof buf);
    printf("write pl1 %zd readback %s\n", w, buf);
    fd = open(Z "constraint_0_power_limit_uw", O_WRONLY);
    errno = 0;
    w = write(fd, "12ab", 4);
    printf("write invalid %zd %s\n", w, strerror(errno));
    close(fd);

    int policies = 0, freqs = 0;
    d = opendir("/sys/devices/system/cpu/cpufreq");
    while (d && (e = readdir(d))) {
        if (strncmp(e->d_name, "policy", 6))
            continue;
        policies++;
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpufreq/%s/scaling_cur_freq", e->d_name);
        freqs += read_file(path, buf, sizeof buf) == 0 && atol(buf) > 0;
    }
    if (d)
        closedir(d);
    printf("policies %d with a frequency %d\n", policies, freqs);

    FILE *f = fopen("/proc/cpuinfo", "r");
    int blocks = 0;
    while (f && fgets(buf, sizeof buf, f))
        blocks += !strncmp(buf, "processor\t:", 11);
    if (f)
        fclose(f);
    printf("cpuinfo processors %d\n", blocks);

    fflush(stdout);
    pid_t c = fork();
    if (c == 0) {
        execl("/proc/self/exe", argv[0], "child", (char *)NULL);
        _exit(127);
    }
    int status = 0;
    waitpid(c, &status, 0);
    printf("child status %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    return 0;
}
