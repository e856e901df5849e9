/* seg_attr: the store() half of every agent-writable attribute, as the kernel does it.
 *
 * One call decides a write: it parses the bytes exactly as the kernel's store would
 * (kstrtoull, kstrtobool, sscanf("%15s"), ...), refuses with the kernel's errno, and
 * otherwise produces the normalised text the file reads back (a limit floored to the power
 * unit and wrapped at its field width, a frequency clamped, a governor in lower case). The
 * shim and the seccomp supervisor call it at the write; the engine calls it again on every
 * slot it drains, because the slot is untrusted. Dependency-free; no allocation.
 *
 * One store function per validator decides its writes (seg_attr.c's table, as sysfs pairs each
 * attribute's show with its store); an entry whose validator has none answers EIO.
 *
 * Validators and their seg_param constants (a, b, c, d; words; related entry):
 *   SV_IGNORE          any text is taken and changes nothing (e.g. intel_pstate/status)
 *   SV_CT_ENABLED      powercap control-type `enabled`: kstrtobool, then ENOSYS (no set op)
 *   SV_ZONE_ENABLED    zone `enabled`: kstrtobool -> "0"/"1"; a=1 when PL1 is locked -> ENOSYS
 *   SV_RAPL_LIMIT      constraint_N_power_limit_uw: kstrtoull base 10; a=power unit uW,
 *                      b=field bits, c=1 locked or disabled -> ENODATA
 *   SV_RAPL_WINDOW     constraint_N_time_window_us: kstrtoull; a=time unit us, c as above
 *   SV_FREQ_MIN/MAX    scaling_{min,max}_freq: kstrtoul base 0 (EINVAL/ERANGE), clamped into
 *                      [a=cpuinfo_min, b=cpuinfo_max] (min also to the related max's value)
 *   SV_GOVERNOR        scaling_governor: first word, case-insensitive, one of `words`
 *   SV_EPP             energy_performance_preference: a name of `words`; c=1 also takes 0..255
 *                      (intel_pstate: kstrtouint, so past 2^32-1 ERANGE, 256.. EINVAL); EBUSY when the related governor is performance and
 *                      the choice is not performance (d=1: that rule applies)
 *   SV_UINT_CLAMP01    intel_pstate/no_turbo: sscanf("%u") else EINVAL, clamped to 0/1
 *   SV_BOOL01          cpufreq/boost: kstrtobool -> "0"/"1"
 *   SV_UW_CLAMP        hwmon power caps: kstrtoul base 10, clamped into [a, b] uW
 *   SV_SETSPEED        scaling_setspeed: EINVAL unless the related governor is userspace; the
 *                      frequency clamped into the policy's scaling_min_freq..scaling_max_freq
 *                      (the files beside it), what show_speed's policy->cur reads after it
 *   SV_NVML_LIMIT      state/nvml/gpu<i>/power_limit_mw: decimal mW in [a, b] else EINVAL;
 *                      c=1 (the limit holds a token: not supported) -> EOPNOTSUPP
 *   SV_NVML_CLOCKS     locked_{gpu,memory}_clocks: "none", or "<min> <max>" MHz (one value:
 *                      both); max clamped to b (highest supported), min > max or max < a -> EINVAL
 *   SV_AMDGPU_CAP      amdgpu power1_cap: kstrtou32 (ERANGE past 32 bits), truncated to whole
 *                      watts, outside [a, b] uW -> EINVAL; 0 W (0..999999 uW) with a = 0 keeps
 *                      the current cap (smu_set_power_limit), read back unchanged at once
 *   SV_DPM_LEVEL       power_dpm_force_performance_level: the kernel's keywords by prefix (the
 *                      profile's `words` when set), profile_exit outside a profile -> EINVAL
 *   SV_INTEL_PL1       i915/xe powerN_max: kstrtoul0, rounded to 1/8 W; any value is taken
 *                      (the engine clamps it to the hardware's range at the next tick); only
 *                      0 turns the limit off: 1..62499 uW is one 1/8 W step, and values near
 *                      2^64 saturate at the last step instead of wrapping
 *   SV_MAX_MS          powerN_max_interval: kstrtoul0 ms, above a -> EINVAL
 *   SV_TRIGGER         cpufreq/stats/reset: any text is taken (store_reset reads none) and
 *                      stored as "1\n", so every write is a new slot sequence the engine acts on
 */
#ifndef HWEMU_SEG_ATTR_H
#define HWEMU_SEG_ATTR_H
#include "segment.h"

enum seg_validator {
    SV_NONE = 0,
    SV_IGNORE,
    SV_CT_ENABLED,
    SV_ZONE_ENABLED,
    SV_RAPL_LIMIT,
    SV_RAPL_WINDOW,
    SV_FREQ_MIN,
    SV_FREQ_MAX,
    SV_GOVERNOR,
    SV_EPP,
    SV_UINT_CLAMP01,
    SV_BOOL01,
    SV_UW_CLAMP,
    SV_SETSPEED,
    SV_NVML_LIMIT,
    SV_NVML_CLOCKS,
    SV_AMDGPU_CAP,
    SV_DPM_LEVEL,
    SV_INTEL_PL1,
    SV_MAX_MS,
    SV_TRIGGER,
    SV_COUNT /* how many there are (not a validator): seg_attr.c has a store for each */
};

/* Decides one write of buf[0..len) to entry at now_ns. Returns 0 with the normalised text in
 * out (SEG_TEXT_MAX bytes, newline-terminated) and *outlen, or the errno the writer gets.
 * *changes is set to false for writes that are taken but change nothing (SV_IGNORE). */
int seg_attr_store(struct seg *s, uint32_t entry, const char *buf, size_t len, int64_t now_ns, char *out,
                   size_t *outlen, bool *changes);

/* One write call as a writer makes it (the shim, the supervisor, fakesmi): an A file's write is
 * decided by seg_attr_store and, when taken, stored in its slot; R and S files with a write bit
 * take the write and change nothing. Either way one event naming pid. Returns 0 or the errno;
 * while a write-refused fault is on (seg_faults.h), an A file's errno is the fault's. */
int seg_attr_write(struct seg *s, uint32_t entry, const char *buf, size_t len, int pid);

/* The kernel's parsers, exposed for the physics side and the tests. 0 or EINVAL/ERANGE. */
int kstrtoull10(const char *buf, size_t len, unsigned long long *out);
int kstrtoul0(const char *buf, size_t len, unsigned long long *out);
int kstrtobool(const char *buf, size_t len, bool *out);

/* RAPL conversions as the kernel computes them (sysfs-abi §3.4). */
uint64_t rapl_limit_readback(uint64_t uw, uint64_t unit_uw, unsigned bits);
uint64_t rapl_window_readback(uint64_t us, uint64_t unit_us);

#endif
