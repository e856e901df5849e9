/* render_powercap: the powercap class tree of a node (sysfs §2-3; upstream c0).
 *
 *   sys/devices/virtual/powercap/<ct>/                 control type, `enabled` (A, always 1)
 *   sys/devices/virtual/powercap/<ct>/<ct>:<i>/        top-level zones, i in lower-case hex
 *   .../<ct>:<i>/<ct>:<i>:<j>/                         sub-zones, nested as the kernel nests them
 *   sys/class/powercap/<ct>, <ct>:<i>, <ct>:<i>:<j>    flat class links to all of them
 * Zone files: name (R 0444), enabled (when sourced; A 0644, R when every constraint rejects
 * writes), energy_uj (S 0400), max_energy_range_uj (R 0444), and per constraint N:
 * constraint_N_name (R), constraint_N_power_limit_uw and constraint_N_time_window_us (A 0644;
 * a locked or disabled constraint answers ENODATA), constraint_N_max_power_uw (R 0444).
 * Peak power (PL4) has no time window file: the kernel fails its read with ENODATA.
 * Never renders constraint_N_min_power_uw (RAPL has no such op).
 * Control types and zones are devices of class powercap (powercap_sys.c: dev.class =
 * &powercap_class, no bus, no devt, no uevent callback): `subsystem` -> class/powercap, an empty
 * `uevent`, `power/` (runtime PM never enabled), and a zone's `device` -> its parent (the control
 * type or the parent zone: powercap_register_zone sets dev.parent). */
#include "params.h"
#include "render.h"
#include "render_devmodel.h"
#include "profile.h"
#include "seg_attr.h"
#include "ytree.h"

#include <stdio.h>
#include <string.h>

#define DEV "sys/devices/virtual/powercap"
#define TEXT(buf, ...) (snprintf(buf, sizeof buf, __VA_ARGS__), buf)

/* Fills nameFormat's %d verbs (already validated: 0, 1 or 2 of them) and %% escapes. */
static void zone_name(char *out, size_t len, const char *fmt, int a, int b)
{
    int args[2] = {a, b}, used = 0;
    size_t o = 0;
    for (const char *p = fmt; *p && o + 12 < len; p++) {
        if (p[0] == '%' && p[1] == '%') {
            out[o++] = '%';
            p++;
        } else if (p[0] == '%' && p[1] == 'd') {
            o += (size_t)snprintf(out + o, len - o, "%d", args[used < 2 ? used : 1]);
            used++;
            p++;
        } else {
            out[o++] = *p;
        }
    }
    out[o] = 0;
}

struct zctx {
    struct node_layout *l;
    const struct phys_cpu_params *p;
    const char *ct;
};

static bool has(const struct yt_node *n, const char *key)
{
    const struct yt_node *v = yt_get(n, key);
    return v && v->src;
}

static void add_file(struct zctx *c, const char *dir, const char *file, const char *text)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    segb_static(c->l->b, path, 0444, text, strlen(text));
}

static void render_zone(struct zctx *c, const struct yt_node *z, const char *dir, const char *cls, const char *name,
                        int zone, int pkg)
{
    struct seg_builder *b = c->l->b;
    char path[512], text[64], target[512];
    segb_dir(b, dir, 0755);
    char parent[512];
    snprintf(parent, sizeof parent, "%.*s", (int)(strrchr(dir, '/') - dir), dir);
    dm_device(c->l, dir, "class/powercap", "", DM_PM_UNSUPPORTED);
    dm_link(c->l, dir, "device", parent);
    /* The flat class link: sys/class/powercap/<cls> -> ../../devices/virtual/powercap/... */
    snprintf(path, sizeof path, "sys/class/powercap/%s", cls);
    snprintf(target, sizeof target, "../../devices/virtual/powercap/%s", dir + strlen(DEV) + 1);
    segb_link(b, path, target);
    add_file(c, dir, "name", TEXT(text, "%s\n", name));

    const struct yt_node *cons = yt_get(z, "constraints");
    int ncons = cons && cons->kind == YT_SEQ ? cons->n : 0;
    bool any_writable = false, pl1_locked = false;
    for (int i = 0; i < ncons; i++) {
        const char *rej = prof_str(cons->vals[i], "rejectWrites", "");
        if (!*rej)
            any_writable = true;
        if (params_pl_of(prof_str(cons->vals[i], "name", "")) == PHYS_PL1 && !strcmp(rej, "locked"))
            pl1_locked = true;
    }
    bool package = zone == PHYS_ZONE_PACKAGE && pkg >= 0;
    if (has(z, "enabled")) {
        long long en = prof_int(z, "enabled", 0);
        snprintf(path, sizeof path, "%s/enabled", dir);
        if (any_writable) {
            struct binding bind = {.kind = package ? BK_ZONE_ENABLED : BK_STATIC, .pkg = (uint8_t)(pkg < 0 ? 0 : pkg)};
            /* A locked PL1 reads 0 and refuses the write with ENOSYS (§3.3). */
            uint32_t v = layout_value(c->l, pl1_locked ? "0\n" : TEXT(text, "%lld\n", en), bind);
            segb_dynamic(b, path, 0644, SEG_A, v, SV_ZONE_ENABLED,
                         segb_param(b, (struct seg_param){.a = pl1_locked, .related = SEG_NONE}, NULL));
        } else {
            segb_static(b, path, 0644, TEXT(text, "%lld\n", en), strlen(text));
        }
    }
    long long unit = prof_int(z, "energyUnitNJ", 0);
    long long range = prof_int(z, "maxEnergyRangeUJ", 0);
    if (!range && unit > 0)
        range = (long long)phys_rapl_max_energy_range_uj((uint64_t)unit);
    if (!unit && range > 0)
        unit = (long long)(((unsigned __int128)range * 1000 + 0xFFFFFFFEu) / 0xFFFFFFFFu);
    if (zone >= 0) {
        struct binding bind = {.kind = BK_ENERGY, .zone = (uint8_t)zone, .pkg = (uint8_t)(pkg < 0 ? 0 : pkg)};
        uint32_t v = layout_counter(c->l, (uint32_t)(unit > 0 ? unit : 1000), bind);
        snprintf(path, sizeof path, "%s/energy_uj", dir);
        segb_dynamic(b, path, 0400, SEG_S, v, SV_NONE, SEG_NONE);
    } else {
        add_file(c, dir, "energy_uj", "0\n"); /* a zone the physics does not model draws nothing */
    }
    add_file(c, dir, "max_energy_range_uj", TEXT(text, "%lld\n", range));

    long long power_unit = prof_int(z, "powerUnitUW", 0);
    for (int i = 0; i < ncons; i++) {
        const struct yt_node *k = cons->vals[i];
        const char *cname = prof_str(k, "name", "");
        const char *rej = prof_str(k, "rejectWrites", "");
        int pl = params_pl_of(cname);
        int bits = (int)prof_int(z, "limitBits", 0);
        if (!bits && pl >= 0)
            bits = phys_rapl_default_limit_bits((enum phys_pl)pl, zone == PHYS_ZONE_PSYS);
        if (!bits)
            bits = 15;
        bool rejects = *rej != 0;
        char file[64];
        snprintf(file, sizeof file, "constraint_%d_name", i);
        add_file(c, dir, file, TEXT(text, "%.28s\n", cname));
        if (has(k, "powerLimitUW")) {
            struct binding bind = {.kind = package && pl >= 0 ? BK_PL_LIMIT : BK_STATIC,
                                   .pkg = (uint8_t)(pkg < 0 ? 0 : pkg), .pl = (uint8_t)(pl < 0 ? 0 : pl)};
            uint64_t lim = rapl_limit_readback((uint64_t)prof_int(k, "powerLimitUW", 0), (uint64_t)power_unit,
                                               (unsigned)bits);
            uint32_t v = layout_value(c->l, TEXT(text, "%llu\n", (unsigned long long)lim), bind);
            snprintf(path, sizeof path, "%s/constraint_%d_power_limit_uw", dir, i);
            segb_dynamic(b, path, 0644, SEG_A, v, SV_RAPL_LIMIT,
                         segb_param(b, (struct seg_param){.a = power_unit, .b = bits, .c = rejects,
                                                          .related = SEG_NONE}, NULL));
        }
        if (has(k, "timeWindowUS") && pl != PHYS_PL4) {
            struct binding bind = {.kind = package && pl == PHYS_PL1 ? BK_PL1_WINDOW : BK_STATIC,
                                   .pkg = (uint8_t)(pkg < 0 ? 0 : pkg)};
            uint32_t v = layout_value(c->l, TEXT(text, "%lld\n", prof_int(k, "timeWindowUS", 0)), bind);
            snprintf(path, sizeof path, "%s/constraint_%d_time_window_us", dir, i);
            segb_dynamic(b, path, 0644, SEG_A, v, SV_RAPL_WINDOW,
                         segb_param(b, (struct seg_param){.a = 976, .c = rejects, .related = SEG_NONE}, NULL));
        }
        if (has(k, "maxPowerUW")) {
            snprintf(file, sizeof file, "constraint_%d_max_power_uw", i);
            add_file(c, dir, file, TEXT(text, "%lld\n", prof_int(k, "maxPowerUW", 0)));
        }
    }
    const struct yt_node *extra = yt_get(z, "extraFiles");
    for (int i = 0; extra && extra->kind == YT_MAP && i < extra->n; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, extra->keys[i]->text);
        if (segb_find(b, path) == SEG_NONE)
            segb_static(b, path, 0444, extra->vals[i]->text, strlen(extra->vals[i]->text));
    }
    const struct yt_node *kids = yt_get(z, "children");
    for (int j = 0; kids && kids->kind == YT_SEQ && j < kids->n; j++) {
        const struct yt_node *kz = kids->vals[j];
        char kdir[512], kcls[128], kname[128];
        snprintf(kcls, sizeof kcls, "%s:%x", cls, j);
        snprintf(kdir, sizeof kdir, "%s/%s", dir, kcls);
        zone_name(kname, sizeof kname, prof_str(kz, "nameFormat", ""), 0, 0);
        render_zone(c, kz, kdir, kcls, kname, params_zone_of(kname, false), pkg);
    }
}

void render_powercap(struct node_layout *l, const struct yt_node *tree, const struct phys_cpu_params *p)
{
    const struct yt_node *cts = yt_path(tree, "powercap.controlTypes");
    for (int t = 0; cts && cts->kind == YT_SEQ && t < cts->n; t++) {
        const struct yt_node *ctn = cts->vals[t];
        const char *ct = prof_str(ctn, "name", "intel-rapl");
        struct zctx c = {.l = l, .p = p, .ct = ct};
        char dir[512], target[512], path[512];
        snprintf(dir, sizeof dir, DEV "/%s", ct);
        segb_dir(l->b, dir, 0755);
        dm_device(l, dir, "class/powercap", "", DM_PM_UNSUPPORTED); /* no parent: no device link */
        snprintf(path, sizeof path, "sys/class/powercap/%s", ct);
        snprintf(target, sizeof target, "../../devices/virtual/powercap/%s", ct);
        segb_link(l->b, path, target);
        snprintf(path, sizeof path, "%s/enabled", dir);
        segb_dynamic(l->b, path, 0644, SEG_A, layout_value(l, "1\n", (struct binding){.kind = BK_STATIC}),
                     SV_CT_ENABLED, SEG_NONE);
        const struct yt_node *zones = yt_get(ctn, "zones");
        int index = 0;
        for (int zi = 0; zones && zones->kind == YT_SEQ && zi < zones->n; zi++) {
            const struct yt_node *z = zones->vals[zi];
            const char *repeat = prof_str(z, "repeat", "once");
            int sockets = p->sockets > 0 ? p->sockets : 1, dies = p->dies_per_pkg > 0 ? p->dies_per_pkg : 1;
            int n = !strcmp(repeat, "per-package") ? sockets : !strcmp(repeat, "per-die") ? sockets * dies : 1;
            for (int k = 0; k < n; k++, index++) {
                char cls[128], zdir[512], name[128];
                int socket = !strcmp(repeat, "per-die") ? k / dies : k, die = k % dies;
                snprintf(cls, sizeof cls, "%s:%x", ct, index);
                snprintf(zdir, sizeof zdir, "%s/%s", dir, cls);
                zone_name(name, sizeof name, prof_str(z, "nameFormat", ""), socket, die);
                int zone = params_zone_of(name, true);
                /* die zones count toward their package only when the package has no zone */
                if (!strcmp(repeat, "per-die"))
                    zone = die == 0 ? PHYS_ZONE_PACKAGE : -1;
                render_zone(&c, z, zdir, cls, name, zone, zone == PHYS_ZONE_PSYS || socket >= PHYS_MAX_PKGS ? -1
                                                                                                           : socket);
            }
        }
    }
}
