/* cpuidpatch: CPUID answered with the node's processor on a host without CPUID faulting (the
 * host's /proc/cpuinfo has no cpuid_fault: a KVM or firecracker guest on AMD, many clouds). The
 * instruction cannot be made to fault there, so the shim rewrites it: every CPUID (0F A2) of the
 * program's and its libraries' code becomes UD2 (0F 0B), the same two bytes long, which raises
 * SIGILL (#UD, si_code ILL_ILLOPN, RIP at the instruction); cpufault.c's SIGILL handler asks
 * cpuidpatch_is_site whether the UD2 is one of these, answers it exactly as it answers a faulting
 * CPUID and steps over the two bytes. A UD2 the program itself has (__builtin_trap) is not in the
 * table and raises SIGILL as before.
 *   Finding the instructions soundly. A 0F A2 byte pair is a CPUID only where an instruction
 * starts, so the pairs of the executable PT_LOAD segments (an SSE2 scan: most objects have a
 * few by chance, in immediates and displacements) are confirmed by decoding instruction lengths
 * (x86len.c) from the start of the function that holds each: the function ranges are the
 * object's .eh_frame_hdr table (in memory: every function compiled with unwind tables, stripped
 * or not) and, when a pair lies in none of those, its STT_FUNC symbols with sizes (.symtab, else
 * .dynsym, read from its file), each range decoded from its start to exactly its end. In an
 * object that has neither (stripped, without unwind tables), a pair in an executable section
 * (SHF_EXECINSTR) is confirmed by a linear sweep of that section from its section header. A pair
 * in no known function of an object that has them (a constant table in hand-written assembly's
 * .text, as libcrypto's; code without CFI or symbol) or outside every executable section
 * (read-only data in an old-layout text segment) is left alone, never rewritten. An object
 * where a decode fails (an opcode x86len does not know, an instruction running over a function's
 * or a section's end) or whose file does not match its mapping is left unpatched: its CPUIDs keep
 * the host's answers, said once on stderr under HWEMU_DEBUG=1 (as are the pairs left alone).
 *   Never patched: ld.so and libc.so.6 (glibc's CPUIDs choose its ifuncs and must stay the
 * host's, as they do on the faulting route, where they run before the shim's constructor), the
 * vDSO, the shim and the audit module.
 *   Writing: the page holding the rewritten byte is made PROT_READ|PROT_WRITE, written, and given
 * back its segment's protection (never writable and executable at once), after the site is in
 * the table (a trap never meets an unknown site). Only the second byte changes (A2 to 0B).
 *   When: the objects loaded at start, by the constructor (dl_iterate_phdr); those loaded later
 * (dlopen, dlmopen, their dependencies) by the audit module's la_objopen (audit.c), which ld.so
 * calls once an object is mapped and before it is relocated or its constructors run: the shim
 * writes its hook into the module's exported hwemu_objopen_hook (the module found in
 * /proc/self/maps, the symbol through its GNU hash table), and la_objclose takes an unloaded object's sites out of the table again.
 * Without the audit module (LD_PRELOAD set by hand) only the objects loaded at start are
 * patched. The constructors of the libraries that run before the shim's (its dependencies and
 * the libraries ld.so initialises first) keep the host's CPUID, as on the faulting route. */
#include "cpuidpatch.h"

#include "real.h"
#include "x86len.h"

#include <elf.h>
#include <emmintrin.h>
#include <fcntl.h>
#include <link.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

/* The rewritten sites: an open-addressing set of addresses, written under ld.so's load lock or
 * by the constructor (one writer at a time), read lock-free by the SIGILL handler. An unloaded
 * object's sites become GONE. */
#define SITES 8192 /* a power of two */
#define GONE ((uintptr_t)1)
static _Atomic uintptr_t site_set[SITES];
static size_t site_used;
static bool debug;
static unsigned objects_scanned; /* at start, for HWEMU_DEBUG's summary */

static size_t slot_of(uintptr_t a)
{
    return (size_t)((a * 0x9E3779B97F4A7C15ull) >> 40) & (SITES - 1);
}

bool cpuidpatch_is_site(uintptr_t ip)
{
    for (size_t i = slot_of(ip), n = 0; n < SITES; i = (i + 1) & (SITES - 1), n++) {
        uintptr_t v = atomic_load_explicit(&site_set[i], memory_order_acquire);
        if (v == ip)
            return true;
        if (!v)
            return false;
    }
    return false;
}

static bool site_add(uintptr_t ip)
{
    if (cpuidpatch_is_site(ip))
        return true;
    if (site_used >= SITES / 2)
        return false; /* kept half empty: lookups stay short */
    size_t i = slot_of(ip);
    while (atomic_load_explicit(&site_set[i], memory_order_relaxed))
        i = (i + 1) & (SITES - 1);
    atomic_store_explicit(&site_set[i], ip, memory_order_release);
    site_used++;
    return true;
}

static void sites_forget(uintptr_t lo, uintptr_t hi)
{
    for (size_t i = 0; i < SITES; i++) {
        uintptr_t v = atomic_load_explicit(&site_set[i], memory_order_relaxed);
        if (v >= lo && v < hi)
            atomic_store_explicit(&site_set[i], GONE, memory_order_release);
    }
}

/* A growable array of addresses (pairs for ranges) in mapped memory: this runs in the
 * constructor and inside ld.so's dlopen, where the program's malloc may not be ready or wanted. */
struct vec {
    uintptr_t *v;
    size_t n, cap;
};

static bool push(struct vec *a, uintptr_t x)
{
    if (a->n == a->cap) {
        size_t cap = a->cap ? a->cap * 2 : 1024;
        void *m = REAL(mmap)(NULL, cap * sizeof *a->v, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED)
            return false;
        if (a->n)
            memcpy(m, a->v, a->n * sizeof *a->v);
        if (a->v)
            munmap(a->v, a->cap * sizeof *a->v);
        a->v = m, a->cap = cap;
    }
    a->v[a->n++] = x;
    return true;
}

static void vec_free(struct vec *a)
{
    if (a->v)
        munmap(a->v, a->cap * sizeof *a->v);
    *a = (struct vec){0};
}

static int by_lo(const void *a, const void *b)
{
    uintptr_t x = *(const uintptr_t *)a, y = *(const uintptr_t *)b;
    return x < y ? -1 : x > y;
}

/* One loaded object: its load bias, program headers (in memory), and the file it came from. */
struct obj {
    uintptr_t base;
    const ElfW(Phdr) *ph;
    size_t phnum;
    const char *path;
};

static void say(const char *path, const char *why)
{
    if (!debug)
        return;
    char line[1200];
    int n = snprintf(line, sizeof line, "hwemu shim: %s: CPUID left unpatched (the host's answers): %s\n", path, why);
    if (n > 0)
        (void)!REAL(write)(2, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
}

/* The executable segment holding [a, a + len), or NULL. */
static const ElfW(Phdr) *exec_seg(const struct obj *o, uintptr_t a, uintptr_t len)
{
    for (size_t i = 0; i < o->phnum; i++) {
        const ElfW(Phdr) *p = &o->ph[i];
        uintptr_t lo = o->base + p->p_vaddr;
        if (p->p_type == PT_LOAD && (p->p_flags & PF_X) && (p->p_flags & PF_R) && a >= lo && len <= p->p_filesz &&
            a - lo <= p->p_filesz - len)
            return p;
    }
    return NULL;
}

/* Every 0F A2 pair of [lo, hi). */
static bool scan(const uint8_t *lo, const uint8_t *hi, struct vec *out)
{
    const uint8_t *p = lo;
    const __m128i f = _mm_set1_epi8(0x0F), a2 = _mm_set1_epi8((char)0xA2);
    for (; hi - p >= 17; p += 16) {
        __m128i x = _mm_loadu_si128((const __m128i *)p), y = _mm_loadu_si128((const __m128i *)(p + 1));
        unsigned m = (unsigned)_mm_movemask_epi8(_mm_and_si128(_mm_cmpeq_epi8(x, f), _mm_cmpeq_epi8(y, a2)));
        for (; m; m &= m - 1)
            if (!push(out, (uintptr_t)(p + __builtin_ctz(m))))
                return false;
    }
    for (; hi - p >= 2; p++)
        if (p[0] == 0x0F && p[1] == 0xA2 && !push(out, (uintptr_t)p))
            return false;
    return true;
}

/* The object's .eh_frame_hdr search table (in memory): the table glibc's and libgcc's unwinders
 * search, version 1 with the encodings every toolchain writes (eh_frame_ptr pcrel sdata4, count
 * udata4, table datarel sdata4; another layout counts as none): its start and entry count. */
static const uint8_t *fde_table(const struct obj *o, uint32_t *count)
{
    for (size_t i = 0; i < o->phnum; i++) {
        if (o->ph[i].p_type != PT_GNU_EH_FRAME)
            continue;
        const uint8_t *h = (const uint8_t *)(o->base + o->ph[i].p_vaddr);
        if (o->ph[i].p_memsz < 12 || h[0] != 1 || h[1] != 0x1B || h[2] != 0x03 || h[3] != 0x3B)
            return NULL;
        memcpy(count, h + 8, 4);
        return *count && *count <= (o->ph[i].p_memsz - 12) / 8 ? h : NULL;
    }
    return NULL;
}

/* The function of the search table holding a, found by binary search: true with [*lo, *hi). The
 * entry's FDE gives the function's length when its pc_begin is pcrel sdata4 (checked against the
 * table's start: then pc_range is the 4 bytes after it). */
static bool fde_lookup(const struct obj *o, uintptr_t a, uintptr_t *lo, uintptr_t *hi)
{
    uint32_t count;
    const uint8_t *h = fde_table(o, &count);
    if (!h)
        return false;
    size_t l = 0, r = count; /* the first entry starting after a */
    while (l < r) {
        size_t mid = (l + r) / 2;
        int32_t loc;
        memcpy(&loc, h + 12 + 8 * mid, 4);
        if ((uintptr_t)h + (uintptr_t)(intptr_t)loc <= a)
            l = mid + 1;
        else
            r = mid;
    }
    if (!l)
        return false;
    int32_t loc, off, pcb;
    uint32_t len, range;
    memcpy(&loc, h + 12 + 8 * (l - 1), 4);
    memcpy(&off, h + 16 + 8 * (l - 1), 4);
    const uint8_t *fde = h + off;
    uintptr_t start = (uintptr_t)h + (uintptr_t)(intptr_t)loc;
    memcpy(&len, fde, 4);
    memcpy(&pcb, fde + 8, 4);
    if (len == 0xFFFFFFFFu || len < 12 || (uintptr_t)(fde + 8) + (uintptr_t)(intptr_t)pcb != start)
        return false;
    memcpy(&range, fde + 12, 4);
    if (a - start >= range)
        return false;
    *lo = start, *hi = start + range;
    return true;
}

static bool pread_all(int fd, void *buf, size_t n, off_t at)
{
    for (size_t done = 0; done < n;) {
        ssize_t k = REAL(pread)(fd, (char *)buf + done, n - done, at + (off_t)done);
        if (k <= 0)
            return false;
        done += (size_t)k;
    }
    return true;
}

/* From the object's file: its executable sections (code) and its STT_FUNC symbols with sizes
 * (.symtab, else .dynsym) as ranges. Returns NULL, or why the file cannot be used. */
static const char *file_ranges(const struct obj *o, struct vec *r, struct vec *code)
{
    int fd = REAL(open)(o->path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return "its file cannot be opened";
    const char *why = NULL;
    ElfW(Ehdr) eh;
    ElfW(Shdr) *sh = MAP_FAILED;
    void *syms = MAP_FAILED;
    size_t shlen = 0, symlen = 0;
    const ElfW(Ehdr) *mem = NULL;
    for (size_t i = 0; i < o->phnum; i++)
        if (o->ph[i].p_type == PT_LOAD && o->ph[i].p_offset == 0 && o->ph[i].p_filesz >= sizeof eh)
            mem = (const ElfW(Ehdr) *)(o->base + o->ph[i].p_vaddr);
    if (!pread_all(fd, &eh, sizeof eh, 0) || memcmp(eh.e_ident, ELFMAG, SELFMAG) || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
        eh.e_machine != EM_X86_64 || eh.e_shentsize != sizeof(ElfW(Shdr)) || !eh.e_shnum) {
        why = "its file is no x86-64 ELF object with section headers";
        goto out;
    }
    if (!mem || memcmp(mem, &eh, sizeof eh)) {
        why = "its file does not match its mapping (replaced since it was loaded?)";
        goto out;
    }
    shlen = (size_t)eh.e_shnum * sizeof *sh;
    sh = REAL(mmap)(NULL, shlen, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (sh == MAP_FAILED || !pread_all(fd, sh, shlen, (off_t)eh.e_shoff)) {
        why = "its section headers cannot be read";
        goto out;
    }
    const ElfW(Shdr) *tab = NULL;
    for (size_t i = 0; i < eh.e_shnum; i++) {
        if (sh[i].sh_type == SHT_PROGBITS && (sh[i].sh_flags & SHF_EXECINSTR) && (sh[i].sh_flags & SHF_ALLOC) &&
            sh[i].sh_size && (!push(code, o->base + sh[i].sh_addr) || !push(code, o->base + sh[i].sh_addr + sh[i].sh_size))) {
            why = "out of memory";
            goto out;
        }
        if (sh[i].sh_type == SHT_SYMTAB || (sh[i].sh_type == SHT_DYNSYM && !tab))
            tab = &sh[i];
    }
    if (!tab || tab->sh_entsize != sizeof(ElfW(Sym)) || !tab->sh_size || tab->sh_size > (1u << 28))
        goto out; /* no symbols: the unwind table's functions and the sweep */
    symlen = tab->sh_size;
    syms = REAL(mmap)(NULL, symlen, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (syms == MAP_FAILED || !pread_all(fd, syms, symlen, (off_t)tab->sh_offset)) {
        why = "its symbol table cannot be read";
        goto out;
    }
    const ElfW(Sym) *s = syms;
    for (size_t i = 0; i < symlen / sizeof *s; i++) {
        unsigned t = ELF64_ST_TYPE(s[i].st_info);
        if ((t == STT_FUNC || t == STT_GNU_IFUNC) && s[i].st_size && s[i].st_shndx != SHN_UNDEF &&
            s[i].st_shndx < SHN_LORESERVE &&
            (!push(r, o->base + s[i].st_value) || !push(r, o->base + s[i].st_value + s[i].st_size))) {
            why = "out of memory";
            goto out;
        }
    }
out:
    if (sh != MAP_FAILED)
        munmap(sh, shlen);
    if (syms != MAP_FAILED)
        munmap(syms, symlen);
    REAL(close)(fd);
    return why;
}

/* Decodes [lo, hi) from lo to exactly hi; the CPUIDs met go to found. */
static bool decode(uintptr_t lo, uintptr_t hi, struct vec *found)
{
    for (uintptr_t a = lo; a < hi;) {
        const uint8_t *p = (const uint8_t *)a;
        int n = x86_insn_len(p, hi - a);
        if (n < 0)
            return false;
        if (n == 2 && p[0] == 0x0F && p[1] == 0xA2 && !push(found, a))
            return false;
        a += (uintptr_t)n;
    }
    return true;
}

/* The range of sorted pairs r holding a (the last few starting at or before it), or -1. */
static long covering(const struct vec *r, uintptr_t a)
{
    size_t lo = 0, hi = r->n / 2;
    while (lo < hi) { /* the first pair starting after a */
        size_t mid = (lo + hi) / 2;
        if (r->v[2 * mid] <= a)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t k = lo, tries = 0; k-- > 0 && tries < 16; tries++)
        if (r->v[2 * k + 1] > a)
            return (long)k;
    return -1;
}

static long page_size(void)
{
    static long pg;
    if (!pg)
        pg = sysconf(_SC_PAGESIZE);
    return pg;
}

/* Rewrites the CPUID at a into UD2: its second byte, its page made writable (not executable)
 * for the write and given back its segment's protection. NULL, or why not. */
static void (*before_first)(void); /* cpuidpatch_loaded's hook, until it ran (under ld.so's load lock) */

static const char *rewrite(const struct obj *o, uintptr_t a)
{
    const ElfW(Phdr) *seg = exec_seg(o, a, 2);
    if (!seg)
        return "a CPUID outside its executable segments";
    if (!site_add(a))
        return "the table of sites is full";
    if (before_first) { /* the caller's preparation, before the first UD2 can trap */
        void (*f)(void) = before_first;
        before_first = NULL;
        f();
    }
    uintptr_t page = (a + 1) & ~(uintptr_t)(page_size() - 1);
    int prot = PROT_READ | PROT_EXEC | (seg->p_flags & PF_W ? PROT_WRITE : 0);
    if (mprotect((void *)page, (size_t)page_size(), PROT_READ | PROT_WRITE))
        return "mprotect refused to make a text page writable";
    ((volatile uint8_t *)a)[1] = 0x0B;
    if (mprotect((void *)page, (size_t)page_size(), prot))
        return "mprotect refused to give a text page back its protection";
    return NULL;
}

static void patch_object(const struct obj *o)
{
    struct vec cand = {0}, ranges = {0}, code = {0}, found = {0};
    const char *why = NULL;
    for (size_t i = 0; i < o->phnum && !why; i++) {
        const ElfW(Phdr) *p = &o->ph[i];
        if (p->p_type == PT_LOAD && (p->p_flags & PF_X) && (p->p_flags & PF_R) &&
            !scan((const uint8_t *)(o->base + p->p_vaddr), (const uint8_t *)(o->base + p->p_vaddr + p->p_filesz), &cand))
            why = "out of memory";
    }
    if (why || !cand.n)
        goto out;
    uintptr_t done = 0;
    size_t outside = 0;
    bool loaded = false; /* the file's symbols (ranges) and executable sections (code) read */
    for (size_t i = 0; i < cand.n; i++) {
        uintptr_t a = cand.v[i], flo, fhi;
        if (a < done)
            continue;
        if (fde_lookup(o, a, &flo, &fhi) && exec_seg(o, flo, fhi - flo)) { /* the common case */
            if (!decode(flo, fhi, &found)) {
                why = "a function does not decode from its start to its end";
                goto out;
            }
            done = fhi;
            continue;
        }
        if (!loaded) {
            loaded = true;
            const char *file = file_ranges(o, &ranges, &code);
            if (file && strcmp(file, "its file cannot be opened")) {
                why = file;
                goto out;
            }
            if (ranges.n)
                qsort(ranges.v, ranges.n / 2, 2 * sizeof *ranges.v, by_lo);
        }
        long r = covering(&ranges, a);
        if (r >= 0 && exec_seg(o, ranges.v[2 * r], ranges.v[2 * r + 1] - ranges.v[2 * r])) {
            if (!decode(ranges.v[2 * r], ranges.v[2 * r + 1], &found)) {
                why = "a function does not decode from its start to its end";
                goto out;
            }
            done = ranges.v[2 * r + 1];
            continue;
        }
        uint32_t fdes;
        if (ranges.n || fde_table(o, &fdes)) { /* in no known function of an object that has them: */
            outside++; /* data, or code without an unwind entry or symbol: left alone either way */
            continue;
        }
        for (size_t s = 0; s < code.n; s += 2)
            if (a >= code.v[s] && a < code.v[s + 1]) { /* an object without functions: the sweep */
                if (!exec_seg(o, code.v[s], code.v[s + 1] - code.v[s]) ||
                    !decode(code.v[s], code.v[s + 1], &found)) {
                    why = "a linear sweep of an executable section does not decode to its end";
                    goto out;
                }
                done = code.v[s + 1];
                break;
            }
    }
    for (size_t i = 0; i < found.n && !why; i++)
        why = rewrite(o, found.v[i]);
    if (!why && outside) {
        char what[120];
        snprintf(what, sizeof what, "%zu 0F A2 byte pairs in no function its unwind table or symbols know", outside);
        say(o->path, what);
    }
out:
    if (why)
        say(o->path, why);
    vec_free(&cand);
    vec_free(&ranges);
    vec_free(&code);
    vec_free(&found);
}

static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

/* Objects whose CPUIDs stay the host's whatever the route (the header comment). */
static bool never(const char *path, uintptr_t base)
{
    const char *b = base_name(path);
    return base == getauxval(AT_BASE) || !strcmp(b, "libc.so.6") || !strncmp(b, "ld-linux", 8) ||
           !strcmp(b, "libhwemu-audit.so") || !strcmp(b, "libhwemu-shim.so");
}

/* An object loaded after start, handed over by the audit module (open: before its relocation
 * and constructors; !open: before it is unmapped). Its headers are read from its mapping: a
 * shared object whose first segment maps the file's start at the load bias. */
static void objopen(int open, uintptr_t base, const char *path)
{
    const ElfW(Ehdr) *eh = (const ElfW(Ehdr) *)base;
    if (!base || !path || !strchr(path, '/') || memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_type != ET_DYN ||
        eh->e_phentsize != sizeof(ElfW(Phdr)) || eh->e_phoff + (size_t)eh->e_phnum * sizeof(ElfW(Phdr)) > (size_t)page_size())
        return;
    struct obj o = {base, (const ElfW(Phdr) *)(base + eh->e_phoff), eh->e_phnum, path};
    bool mapped = false;
    uintptr_t hi = 0;
    for (size_t i = 0; i < o.phnum; i++)
        if (o.ph[i].p_type == PT_LOAD) {
            mapped |= o.ph[i].p_offset == 0 && o.ph[i].p_vaddr == 0;
            hi = o.ph[i].p_vaddr + o.ph[i].p_memsz > hi ? o.ph[i].p_vaddr + o.ph[i].p_memsz : hi;
        }
    if (!mapped)
        return;
    if (!open) {
        if (site_used)
            sites_forget(base, base + hi);
    }
    else if (!never(path, base))
        patch_object(&o);
}

/* The exported hwemu_objopen_hook of the audit module whose ELF header is mapped at ehdr, looked
 * up in its GNU hash table. */
static void *audit_hook(uintptr_t ehdr)
{
    const ElfW(Ehdr) *eh = (const ElfW(Ehdr) *)ehdr;
    if (memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_type != ET_DYN || eh->e_phentsize != sizeof(ElfW(Phdr)) ||
        eh->e_phoff + (size_t)eh->e_phnum * sizeof(ElfW(Phdr)) > (size_t)page_size())
        return NULL;
    const ElfW(Phdr) *ph = (const ElfW(Phdr) *)(ehdr + eh->e_phoff);
    uintptr_t base = ehdr;
    for (int i = 0; i < eh->e_phnum; i++)
        if (ph[i].p_type == PT_LOAD && ph[i].p_offset == 0) {
            base = ehdr - ph[i].p_vaddr; /* the load bias */
            break;
        }
    const ElfW(Dyn) *dyn = NULL;
    for (int i = 0; i < eh->e_phnum; i++)
        if (ph[i].p_type == PT_DYNAMIC)
            dyn = (const ElfW(Dyn) *)(base + ph[i].p_vaddr);
    const ElfW(Sym) *sym = NULL;
    const char *str = NULL;
    const uint32_t *gnu = NULL;
    for (; dyn && dyn->d_tag != DT_NULL; dyn++) {
        uintptr_t v = dyn->d_un.d_ptr < base ? base + dyn->d_un.d_ptr : dyn->d_un.d_ptr; /* ld.so relocates them */
        if (dyn->d_tag == DT_SYMTAB)
            sym = (const ElfW(Sym) *)v;
        else if (dyn->d_tag == DT_STRTAB)
            str = (const char *)v;
        else if (dyn->d_tag == DT_GNU_HASH)
            gnu = (const uint32_t *)v;
    }
    if (!sym || !str || !gnu || !gnu[0])
        return NULL;
    static const char want[] = "hwemu_objopen_hook";
    uint32_t h = 5381;
    for (const char *c = want; *c; c++)
        h = h * 33 + (uint8_t)*c;
    uint32_t nb = gnu[0], off = gnu[1], bloom = gnu[2];
    const uint32_t *buckets = gnu + 4 + bloom * (sizeof(ElfW(Addr)) / 4), *chain = buckets + nb;
    for (uint32_t k = buckets[h % nb]; k >= off; k++) {
        if ((chain[k - off] | 1) == (h | 1) && !strcmp(str + sym[k].st_name, want) && sym[k].st_shndx != SHN_UNDEF)
            return (void *)(base + sym[k].st_value);
        if (chain[k - off] & 1)
            break;
    }
    return NULL;
}

static int each(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size, (void)data;
    const char *name = info->dlpi_name ? info->dlpi_name : "";
    uintptr_t self = (uintptr_t)&cpuidpatch_loaded;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *p = &info->dlpi_phdr[i];
        if (p->p_type == PT_LOAD && self - (info->dlpi_addr + p->p_vaddr) < p->p_memsz)
            return 0; /* the shim */
    }
    if (*name && !strchr(name, '/'))
        return 0; /* the vDSO */
    if (never(name, info->dlpi_addr))
        return 0;
    struct obj o = {info->dlpi_addr, info->dlpi_phdr, info->dlpi_phnum, *name ? name : "/proc/self/exe"};
    patch_object(&o);
    objects_scanned++;
    return 0;
}

/* The audit module: ld.so loads it in a link namespace of its own, which dl_iterate_phdr does not
 * list, so it is found in /proc/self/maps (the mapping of libhwemu-audit.so at file offset 0:
 * its ELF header), and the shim's hook written into its hwemu_objopen_hook. */
static void hook_audit(void)
{
    int fd = REAL(open)("/proc/self/maps", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    char buf[8192];
    size_t have = 0;
    bool found = false;
    for (;;) {
        ssize_t k = REAL(read)(fd, buf + have, sizeof buf - 1 - have);
        if (k <= 0)
            break;
        have += (size_t)k;
        buf[have] = 0;
        char *line = buf, *nl;
        while (!found && (nl = strchr(line, '\n'))) {
            *nl = 0;
            unsigned long lo, off;
            int path = 0;
            if (sscanf(line, "%lx-%*x %*s %lx %*s %*s %n", &lo, &off, &path) == 2 && path && off == 0 &&
                !strcmp(base_name(line + path), "libhwemu-audit.so")) {
                void (**hook)(int, uintptr_t, const char *) = audit_hook((uintptr_t)lo);
                if (hook)
                    __atomic_store_n(hook, objopen, __ATOMIC_RELEASE);
                found = true;
            }
            line = nl + 1;
        }
        if (found)
            break;
        have = (size_t)(buf + have - line);
        memmove(buf, line, have);
        if (have == sizeof buf - 1)
            have = 0; /* a line longer than the buffer: no mapping of ours */
    }
    REAL(close)(fd);
}

void cpuidpatch_loaded(void (*before_first_rewrite)(void))
{
    before_first = before_first_rewrite;
    const char *d = getenv("HWEMU_DEBUG");
    debug = d && *d && strcmp(d, "0");
    struct timespec t0, t1;
    REAL(clock_gettime)(CLOCK_MONOTONIC, &t0);
    dl_iterate_phdr(each, NULL);
    hook_audit();
    REAL(clock_gettime)(CLOCK_MONOTONIC, &t1);
    if (debug) {
        char line[200];
        int n = snprintf(line, sizeof line, "hwemu shim: CPUID patched at start: %zu sites in %u objects, %.0f us\n",
                         site_used, objects_scanned, (double)(t1.tv_sec - t0.tv_sec) * 1e6 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e3);
        if (n > 0)
            (void)!REAL(write)(2, line, (size_t)n);
    }
}
