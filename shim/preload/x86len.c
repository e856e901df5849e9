/* x86len: the length of one x86-64 (64-bit mode) instruction, for cpuidpatch.c's search of the
 * CPUID instructions in a program's code. It knows the encodings (Intel SDM Vol. 2 chapter 2 and
 * appendix A's opcode maps; AMD APM Vol. 3 for XOP and 3DNow!): legacy prefixes (66, 67, F0, F2,
 * F3, the segment overrides), REX, the one-byte map, the 0F, 0F38 and 0F3A maps, VEX (C4, C5),
 * EVEX (62, maps 1-3, 5, 6), XOP (8F with a map of 8 or more), ModRM, SIB, displacements and the
 * immediates each opcode takes (operand size: 66 and REX.W; MOV moffs: 67). What it does not
 * know (an opcode invalid in 64-bit mode, a REX before a prefix, a prefix before VEX/EVEX, more
 * than 15 bytes, a near call or jump with 66, whose length Intel and AMD processors differ on) is -1: the caller then leaves the object unpatched, never guesses. Only
 * lengths: no operands, no validity beyond what a length needs. */
#include "x86len.h"

#include <stdbool.h>

/* ModRM with its SIB and displacement at p[i]: their length, or -1 past avail. 64-bit mode (and
 * its 32-bit addressing under 67) has one format: mod 3 a register; rm 4 a SIB; mod 0 with rm 5
 * RIP + disp32, with a SIB base of 5 disp32; mod 1 disp8; mod 2 disp32. */
static int modrm_len(const uint8_t *p, size_t i, size_t avail)
{
    if (i >= avail)
        return -1;
    unsigned mod = p[i] >> 6, rm = p[i] & 7;
    int n = 1;
    if (mod == 3)
        return 1;
    if (rm == 4) {
        if (i + 1 >= avail)
            return -1;
        n++;
        if (mod == 0 && (p[i + 1] & 7) == 5)
            n += 4;
    } else if (mod == 0 && rm == 5)
        n += 4;
    n += mod == 1 ? 1 : mod == 2 ? 4 : 0;
    return n;
}

/* VEX and EVEX map 1 opcodes with an imm8 (pshufd/pshuf[hl]w, the shift groups, cmpps,
 * pinsrw, pextrw, shufps) */
static bool map1_imm8(uint8_t op)
{
    return (op >= 0x70 && op <= 0x73) || op == 0xC2 || op == 0xC4 || op == 0xC5 || op == 0xC6;
}

/* The one-byte map: whether opcode op has a ModRM (*modrm) and its immediate's bytes, -1 for an
 * opcode invalid in 64-bit mode. z: the 16/32-bit immediate's size. */
static int onebyte(uint8_t op, int z, bool rexw, bool adsize, const uint8_t *modrm_byte, bool *modrm)
{
    *modrm = false;
    if (op < 0x40) {
        switch (op & 7) {
        case 0: case 1: case 2: case 3:
            *modrm = true;
            return 0;
        case 4:
            return 1;
        case 5:
            return z;
        default:
            return -1; /* push/pop es/cs/ss/ds, daa, das, aaa, aas: invalid (the prefixes were taken) */
        }
    }
    if (op <= 0x5F)
        return op >= 0x50 ? 0 : -1; /* push/pop r; a REX here follows another REX */
    switch (op) {
    case 0x63: case 0x84: case 0x85: case 0x86: case 0x87: case 0x88: case 0x89: case 0x8A: case 0x8B:
    case 0x8C: case 0x8D: case 0x8E: case 0x8F: case 0xD0: case 0xD1: case 0xD2: case 0xD3:
    case 0xD8: case 0xD9: case 0xDA: case 0xDB: case 0xDC: case 0xDD: case 0xDE: case 0xDF:
    case 0xFE: case 0xFF:
        *modrm = true;
        return 0;
    case 0x68: case 0xA9:
        return z;
    case 0xE8: case 0xE9: /* call/jmp rel32; with 66 rel16 on AMD, rel32 on Intel: refused */
        return z == 2 ? -1 : 4;
    case 0x69: case 0x81: case 0xC7:
        *modrm = true;
        return z;
    case 0x6A: case 0xA8: case 0xCD: case 0xEB:
        return 1;
    case 0x6B: case 0x80: case 0x83: case 0xC0: case 0xC1: case 0xC6:
        *modrm = true;
        return 1;
    case 0xA0: case 0xA1: case 0xA2: case 0xA3:
        return adsize ? 4 : 8; /* mov moffs */
    case 0xC2: case 0xCA:
        return 2;
    case 0xC8:
        return 3; /* enter iw, ib */
    case 0xF6: case 0xF7:
        *modrm = true; /* test r/m, imm: reg 0 and 1 of group 3 */
        return (modrm_byte[0] >> 3 & 7) < 2 ? (op == 0xF6 ? 1 : z) : 0;
    default:
        break;
    }
    if (op >= 0x70 && op <= 0x7F)
        return 1; /* jcc rel8 */
    if (op >= 0xB0 && op <= 0xB7)
        return 1;
    if (op >= 0xB8 && op <= 0xBF)
        return rexw ? 8 : z; /* mov r, imm64 with REX.W */
    if (op >= 0xE0 && op <= 0xE7)
        return 1; /* loop, jrcxz, in, out */
    static const uint8_t none[] = {0x6C, 0x6D, 0x6E, 0x6F, 0x90, 0x91, 0x92, 0x93, 0x94, 0x95, 0x96, 0x97,
                                   0x98, 0x99, 0x9B, 0x9C, 0x9D, 0x9E, 0x9F, 0xA4, 0xA5, 0xA6, 0xA7, 0xAA,
                                   0xAB, 0xAC, 0xAD, 0xAE, 0xAF, 0xC3, 0xC9, 0xCB, 0xCC, 0xCF, 0xD7, 0xEC,
                                   0xED, 0xEE, 0xEF, 0xF1, 0xF4, 0xF5, 0xF8, 0xF9, 0xFA, 0xFB, 0xFC, 0xFD};
    for (size_t k = 0; k < sizeof none; k++)
        if (none[k] == op)
            return 0;
    return -1; /* 60, 61, 82, 9A, CE, D4-D6, EA: invalid in 64-bit mode */
}

/* The 0F map (after 0F, not 0F38/0F3A): ModRM and immediate as onebyte. */
static int twobyte(uint8_t op, uint8_t rep, bool opsize, bool *modrm)
{
    *modrm = false;
    switch (op) {
    case 0x05: case 0x06: case 0x07: case 0x08: case 0x09: case 0x0B: case 0x0E: case 0x30: case 0x31:
    case 0x32: case 0x33: case 0x34: case 0x35: case 0x37: case 0x77: case 0xA0: case 0xA1: case 0xA2:
    case 0xA8: case 0xA9: case 0xAA:
        return 0; /* syscall, clts, sysret, invd, wbinvd, ud2, femms, wrmsr, rdtsc, rdmsr, rdpmc,
                   * sysenter, sysexit, getsec, emms, push/pop fs/gs, cpuid, rsm */
    case 0x04: case 0x0A: case 0x0C: case 0x24: case 0x25: case 0x26: case 0x27: case 0x36: case 0x39:
    case 0x3B: case 0x3C: case 0x3D: case 0x3E: case 0x3F: case 0x7A: case 0x7B: case 0xA6: case 0xA7:
        return -1;
    case 0x0F: /* 3DNow!: ModRM, then the opcode as an imm8 */
    case 0x70: case 0x71: case 0x72: case 0x73: case 0xA4: case 0xAC: case 0xBA: case 0xC2: case 0xC4:
    case 0xC5: case 0xC6:
        *modrm = true;
        return 1;
    case 0x78: /* vmread; with 66 EXTRQ, with F2 INSERTQ (SSE4a): imm8, imm8 */
        *modrm = true;
        return opsize || rep == 0xF2 ? 2 : 0;
    default:
        break;
    }
    if (op >= 0x80 && op <= 0x8F)
        return opsize ? -1 : 4; /* jcc rel32 (with 66: the vendors differ, as for call) */
    if (op >= 0xC8 && op <= 0xCF)
        return 0; /* bswap */
    *modrm = true;
    return 0;
}

int x86_insn_len(const uint8_t *p, size_t avail)
{
    size_t i = 0;
    bool opsize = false, adsize = false, rexw = false, legacy = false;
    uint8_t rep = 0;
    for (;; i++) {
        if (i >= avail || i >= 15)
            return -1;
        uint8_t b = p[i];
        if (b == 0x66)
            opsize = true, legacy = true;
        else if (b == 0x67)
            adsize = true;
        else if (b == 0xF2 || b == 0xF3)
            rep = b, legacy = true;
        else if (b == 0xF0)
            legacy = true;
        else if (b != 0x2E && b != 0x36 && b != 0x3E && b != 0x26 && b != 0x64 && b != 0x65)
            break;
    }
    bool rex = (p[i] & 0xF0) == 0x40;
    if (rex) {
        rexw = p[i] & 8;
        if (++i >= avail)
            return -1;
        uint8_t b = p[i];
        if ((b & 0xF0) == 0x40 || b == 0x66 || b == 0x67 || b == 0xF0 || b == 0xF2 || b == 0xF3 ||
            b == 0x2E || b == 0x36 || b == 0x3E || b == 0x26 || b == 0x64 || b == 0x65)
            return -1; /* a REX must come last: one before a prefix is ignored, never emitted */
    }
    int z = opsize && !rexw ? 2 : 4;
    uint8_t op = p[i++];
    bool modrm = false;
    int imm;
    if (op == 0x0F) {
        if (i >= avail)
            return -1;
        uint8_t op2 = p[i++];
        if (op2 == 0x38 || op2 == 0x3A) {
            if (i >= avail)
                return -1;
            i++; /* the third opcode byte: every 0F38 and 0F3A opcode has a ModRM, 0F3A an imm8 */
            modrm = true;
            imm = op2 == 0x3A;
        } else
            imm = twobyte(op2, rep, opsize, &modrm);
    } else if (op == 0xC4 || op == 0xC5 || op == 0x62 || (op == 0x8F && i < avail && (p[i] & 0x1F) >= 8)) {
        /* VEX, EVEX, XOP: no REX or 66/F2/F3/F0 before them (#UD) */
        if (rex || legacy)
            return -1;
        size_t n = op == 0xC5 ? 1 : op == 0x62 ? 3 : 2;
        if (i + n >= avail)
            return -1;
        unsigned map = op == 0xC5 ? 1 : op == 0x62 ? p[i] & 7 : p[i] & 0x1F;
        if (op == 0x62 && !(p[i + 1] & 0x04))
            return -1; /* EVEX's fixed bit */
        i += n;
        uint8_t o = p[i++];
        if (op == 0x8F) { /* XOP maps 8 (imm8), 9, 0xA (imm32) */
            if (map > 0xA)
                return -1;
            imm = map == 8 ? 1 : map == 0xA ? 4 : 0;
        } else if (map == 1) {
            if (op != 0x62 && o == 0x77)
                return (int)i; /* vzeroupper, vzeroall: no ModRM */
            imm = map1_imm8(o);
        } else if (map == 2 || (op == 0x62 && (map == 5 || map == 6)))
            imm = 0;
        else if (map == 3)
            imm = 1;
        else
            return -1;
        modrm = true;
    } else {
        if (i >= avail && (op == 0xF6 || op == 0xF7))
            return -1;
        imm = onebyte(op, z, rexw, adsize, p + i, &modrm);
    }
    if (imm < 0)
        return -1;
    if (modrm) {
        int m = modrm_len(p, i, avail);
        if (m < 0)
            return -1;
        i += (size_t)m;
    }
    i += (size_t)imm;
    return i <= 15 && i <= avail ? (int)i : -1;
}
