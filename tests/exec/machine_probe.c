/* machine_probe: what a static program (no libc wrapper the shim could see) learns about the
 * machine it runs on, for tests/cli/test_whole_static.sh under hwemu exec --intercept seccomp:
 * prints the Name and *_allowed lines of /proc/self/status (read with open/read, as libnuma's
 * fopen does), each file named on the command line as "path: first line", and the byte
 * count and CPUs of the raw sched_getaffinity system call. */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    char buf[16384];
    int fd = open("/proc/self/status", O_RDONLY);
    if (fd < 0) {
        perror("open /proc/self/status");
        return 1;
    }
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return 1;
    buf[n] = 0;
    for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n"))
        if (strstr(line, "_allowed") || !strncmp(line, "Name:", 5))
            printf("%s\n", line);
    for (int i = 1; i < argc; i++) {
        FILE *f = fopen(argv[i], "r");
        char line[4096] = "";
        if (!f || !fgets(line, sizeof line, f))
            snprintf(line, sizeof line, "(unreadable)\n");
        if (f)
            fclose(f);
        printf("%s: %s", argv[i], line);
    }
    static unsigned long mask[1024];
    long k = syscall(SYS_sched_getaffinity, 0, sizeof mask, mask);
    int set = 0;
    for (long i = 0; i < k * 8; i++)
        set += (mask[i / 64] >> (i % 64)) & 1;
    printf("sched_getaffinity: %ld bytes, %d CPUs\n", k, set);
    return 0;
}
