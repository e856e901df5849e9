/* sv_route: which route `hwemu exec --intercept=auto` takes for a program, read from its file
 * (supervisor.h has the routes):
 *   ELF, no PT_INTERP (statically linked: no dynamic loader, LD_PRELOAD is never read)  seccomp
 *   ELF with a .go.buildinfo section or a Go build-ID note (PT_NOTE, owner "Go", type 4):
 *   a Go program, which makes raw system calls whether cgo linked it dynamically or not  seccomp
 *   any other 64-bit ELF with PT_INTERP (a dynamically linked libc program)              preload
 *   a 32-bit ELF (neither the shim nor the filter, which is for the native ABI, covers it) preload
 *   "#!" script: its interpreter's route (with /usr/bin/env, the program env would run)
 *   a file that cannot be read, or of an unknown format: cannot tell                      seccomp
 *   not found: preload (execvp then fails with 127 as it always did)
 * The seccomp route also keeps LD_PRELOAD, so "seccomp" is the safe answer when in doubt.
 * What it must never do: execute or map the file; read more than its headers, notes and
 * section names (bounded: a corrupt header cannot make it allocate or loop without end). */
#include "supervisor.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_NOTES (64 * 1024)
#define MAX_SECTIONS 4096
#define MAX_SHSTRTAB (1024 * 1024)

/* execvp's lookup: cmd itself when it has a slash, else the first executable file in PATH. */
static bool find_prog(const char *cmd, char *out, size_t len)
{
    if (strchr(cmd, '/')) {
        snprintf(out, len, "%s", cmd);
        return true;
    }
    const char *path = getenv("PATH");
    if (!path || !*path)
        path = "/usr/local/bin:/usr/bin:/bin";
    for (const char *p = path;; p++) {
        const char *end = strchr(p, ':');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        struct stat st;
        int k = snprintf(out, len, "%.*s/%s", (int)n, n ? p : ".", cmd);
        if (k > 0 && (size_t)k < len && stat(out, &st) == 0 && S_ISREG(st.st_mode) && access(out, X_OK) == 0)
            return true;
        if (!end)
            return false;
        p = end;
    }
}

static bool read_at(int fd, void *buf, size_t len, uint64_t off)
{
    return pread(fd, buf, len, (off_t)off) == (ssize_t)len;
}

/* Does a PT_NOTE segment hold Go's build ID note? */
static bool go_note(int fd, const Elf64_Phdr *ph)
{
    size_t n = ph->p_filesz < MAX_NOTES ? (size_t)ph->p_filesz : MAX_NOTES;
    unsigned char *buf = malloc(n ? n : 1);
    bool go = false;
    if (buf && read_at(fd, buf, n, ph->p_offset)) {
        size_t at = 0;
        while (!go && at + sizeof(Elf64_Nhdr) <= n) {
            Elf64_Nhdr h;
            memcpy(&h, buf + at, sizeof h);
            size_t name = at + sizeof h, desc = name + ((h.n_namesz + 3u) & ~3u);
            if (h.n_namesz == 3 && h.n_type == 4 && name + 3 <= n && !memcmp(buf + name, "Go", 3))
                go = true;
            at = desc + ((h.n_descsz + 3u) & ~3u);
        }
    }
    free(buf);
    return go;
}

/* Is there a section named .go.buildinfo? */
static bool go_section(int fd, const Elf64_Ehdr *eh)
{
    if (!eh->e_shoff || !eh->e_shnum || eh->e_shnum > MAX_SECTIONS || eh->e_shentsize != sizeof(Elf64_Shdr) ||
        eh->e_shstrndx >= eh->e_shnum)
        return false;
    Elf64_Shdr strs;
    if (!read_at(fd, &strs, sizeof strs, eh->e_shoff + (uint64_t)eh->e_shstrndx * sizeof strs) ||
        !strs.sh_size || strs.sh_size > MAX_SHSTRTAB)
        return false;
    char *names = malloc(strs.sh_size + 1);
    Elf64_Shdr *sh = malloc(sizeof *sh * eh->e_shnum);
    bool go = false;
    if (names && sh && read_at(fd, names, strs.sh_size, strs.sh_offset) &&
        read_at(fd, sh, sizeof *sh * eh->e_shnum, eh->e_shoff)) {
        names[strs.sh_size] = 0;
        for (unsigned i = 0; i < eh->e_shnum && !go; i++)
            go = sh[i].sh_name < strs.sh_size && !strcmp(names + sh[i].sh_name, ".go.buildinfo");
    }
    free(names);
    free(sh);
    return go;
}

static enum sv_route classify(const char *path, int depth, char *why, size_t len);
/* What the last ELF program classify looked at is (for sv_time_fits). */
static bool last_go, last_static;

/* "#!interpreter [arg]": the interpreter's route (env's program's, for /usr/bin/env). */
static enum sv_route script(const char *path, int fd, int depth, char *why, size_t len)
{
    char line[256] = "";
    ssize_t n = pread(fd, line, sizeof line - 1, 0);
    line[n > 0 ? n : 0] = 0;
    char *nl = strchr(line, '\n');
    if (!nl || depth > 4) {
        snprintf(why, len, "%s: cannot tell its interpreter", path);
        return SV_ROUTE_SECCOMP;
    }
    *nl = 0;
    char *interp = strtok(line + 2, " \t"), *arg = strtok(NULL, " \t");
    if (!interp) {
        snprintf(why, len, "%s: cannot tell its interpreter", path);
        return SV_ROUTE_SECCOMP;
    }
    const char *base = strrchr(interp, '/');
    char prog[PATH_MAX];
    if (!strcmp(base ? base + 1 : interp, "env") && arg && arg[0] != '-') {
        if (!find_prog(arg, prog, sizeof prog))
            return SV_ROUTE_PRELOAD;
        return classify(prog, depth + 1, why, len);
    }
    return classify(interp, depth + 1, why, len);
}

static enum sv_route classify(const char *path, int depth, char *why, size_t len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(why, len, "%s: %s", path, strerror(errno));
        return errno == ENOENT ? SV_ROUTE_PRELOAD : SV_ROUTE_SECCOMP;
    }
    Elf64_Ehdr eh;
    enum sv_route r = SV_ROUTE_SECCOMP;
    ssize_t n = pread(fd, &eh, sizeof eh, 0);
    if (n >= 2 && !memcmp(&eh, "#!", 2)) {
        r = script(path, fd, depth, why, len);
    } else if (n < (ssize_t)sizeof eh || memcmp(eh.e_ident, ELFMAG, SELFMAG)) {
        snprintf(why, len, "%s: not an ELF program, cannot tell", path);
    } else if (eh.e_ident[EI_CLASS] != ELFCLASS64) {
        snprintf(why, len, "%s: a 32-bit program (not emulated by either route)", path);
        r = SV_ROUTE_PRELOAD;
    } else if (eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phnum > 1024) {
        snprintf(why, len, "%s: unusual ELF headers, cannot tell", path);
    } else {
        bool dynamic = false, go = false;
        for (unsigned i = 0; i < eh.e_phnum; i++) {
            Elf64_Phdr ph;
            if (!read_at(fd, &ph, sizeof ph, eh.e_phoff + (uint64_t)i * sizeof ph))
                break;
            if (ph.p_type == PT_INTERP)
                dynamic = true;
            else if (ph.p_type == PT_NOTE && !go)
                go = go_note(fd, &ph);
        }
        if (!go)
            go = go_section(fd, &eh);
        last_go = go, last_static = !dynamic;
        if (go) {
            snprintf(why, len, "%s: a Go program (raw system calls)", path);
        } else if (!dynamic) {
            snprintf(why, len, "%s: statically linked", path);
        } else {
            snprintf(why, len, "%s: a dynamically linked libc program", path);
            r = SV_ROUTE_PRELOAD;
        }
    }
    close(fd);
    return r;
}

enum sv_route sv_route_for(const char *cmd, char *why, size_t len)
{
    char path[PATH_MAX];
    if (!find_prog(cmd, path, sizeof path)) {
        snprintf(why, len, "%s: not found", cmd);
        return SV_ROUTE_PRELOAD;
    }
    return classify(path, 0, why, len);
}

bool sv_time_fits(const char *cmd, char *why, size_t len)
{
    last_go = last_static = false;
    enum sv_route r = sv_route_for(cmd, why, len);
    if (r == SV_ROUTE_SECCOMP && last_go && !last_static)
        snprintf(why + strlen(why), len - strlen(why), ", linked dynamically (cgo)");
    return r == SV_ROUTE_SECCOMP && last_go && last_static;
}
