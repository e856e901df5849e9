/* seg_view: files whose text a reader computes at read time from several snapshot values (a
 * node's /proc files, its cgroups, its jobs' processes, a CPU's temperature, cpuidle and cpufreq
 * stats), for every party that reads a segment (the shim, the seccomp supervisor, `hwemu cat`).
 * Part of the segment contract (segment.h). seg_view.c dispatches a read to the view's family:
 * seg_view_proc.c, seg_view_cpu.c, seg_view_cgroup.c, seg_view_pid.c, seg_view_cpufreq.c.
 *
 * A view is an S file entry whose `validator` holds the view kind (enum seg_view, never 0) and
 * whose `param` names a struct seg_param:
 *   SEG_VIEW_PROC_STAT, SEG_VIEW_PROC_UPTIME
 *       a = value index of the node's elapsed-time counter, b = value index of CPU 0's busy-time
 *       counter, c = number of CPUs (their busy counters are the values b .. b+c-1, CPU numbers
 *       0 .. c-1).
 *   SEG_VIEW_PROC_MEMINFO
 *       a = MemTotal in kB, b = value index of a text value holding the share of it applications
 *       use, in parts per million ("280000\n").
 *   SEG_VIEW_TEMP (a hwmon tempN_input of a core or CCD)
 *       a = value index of the package's temperature text (m°C, "45000\n"), b = m°C below it,
 *       c = step in m°C: shows ⌊(package - b) / c⌋·c, at least 0.
 *   SEG_VIEW_CPUINFO (/proc/cpuinfo with each CPU's running frequency)
 *       words_off = the text with every `cpu MHz` value replaced by "\x01<value index>\x02",
 *       the index of that CPU's scaling_cur_freq value (kHz, "2400000\n"), shown as the kernel
 *       prints kHz: "%u.%03u" (arch/x86/kernel/cpu/proc.c); a = the text's length, b = the number of markers.
 *       A marker "\x01<cur>\x03<min>\x03<busy>\x02" (intel_pstate in active mode) shows the value
 *       <min> (the policy's scaling_min_freq) instead while the CPU's busy-time counter <busy> has
 *       rate 0: an idle CPU has no APERF/MPERF sample younger than 20 ms, so arch_freq_get_on_cpu
 *       (arch/x86/kernel/cpu/aperfmperf.c, 6.12) falls back to cpufreq_quick_get, which returns
 *       policy->cur, and intel_pstate_set_policy keeps policy->cur = policy->min.
 *   SEG_VIEW_IDLE (cpuidle stateK/usage and stateK/time of one CPU)
 *       a = the elapsed counter, b = the CPU's busy counter, c = the state's share of the idle
 *       time in permille, d = 0 for `time` (µs: ⌊idle µs · c / 1000⌋), else the mean µs of one
 *       entry for `usage` (⌊state time / d⌋).
 *   SEG_VIEW_CG_CPU_STAT (a cgroup v2 cpu.stat, docs/interfaces.md "Job cgroups")
 *       a = the elapsed counter (its horizon caps the read time), b = the first time counter,
 *       c = how many are summed (b .. b+c-1), d = 0: each is a CPU's busy counter, capped at
 *       the elapsed time (the root cgroup: every CPU), d = 1: a unit's CPU-time counter (the
 *       sum of its CPUs' busy time, not capped). Shows, from the summed ns U:
 *       usage_usec ⌊U/1000⌋, user_usec ⌊usage·9/10⌋, system_usec usage − user (the /proc/stat
 *       view's split: user 90 %, system + irq + softirq 10 %; the kernel's cgroup base stat
 *       counts irq and softirq as system), then nr_periods, nr_throttled, throttled_usec,
 *       nr_bursts, burst_usec 0 (no cpu.max is set).
 *   SEG_VIEW_CG_MEMORY_STAT (a cgroup v2 memory.stat)
 *       a = the text value of the unit's memory.current (bytes): anon 94 %, file 4 %, kernel
 *       2 % of it (assumed split), in the keys and order of the kernel's memory.stat.
 *   SEG_VIEW_CG_CPUS (cpuset.cpus.effective)
 *       a = the first of b text values holding a CPU mask as raw bytes (SEG_TEXT_MAX each, CPU c
 *       is bit c%8 of byte c/8 of the whole): the kernel's CPU list ("0-3,8\n", "\n" when empty).
 *   SEG_VIEW_PID_STAT, SEG_VIEW_PID_STATUS, SEG_VIEW_PID_STATM (a job's process: /proc/<pid>/stat,
 *   status, statm; docs/interfaces.md "Jobs as processes")
 *       a = the elapsed counter (its horizon caps the read time), b = the unit's CPU-time counter,
 *       c = the text value "<pid> <starttime> <threads> <cpu>\n" (starttime in USER_HZ ticks since
 *       the node's boot, threads >= 1, cpu the lowest CPU it holds), d = the text value of the
 *       unit's memory.current (bytes); words_off = the process's comm. From the CPU time U (ns):
 *       usage_usec u = ⌊U/1000⌋ and user_usec ⌊u·9/10⌋ as cpu.stat shows them, utime = ⌊user_usec
 *       / 10000⌋, stime = ⌊(u − user_usec) / 10000⌋ ticks, so both never decrease and agree with the
 *       cgroup's cpu.stat; state R while its CPUs are busy (the counter's rate > 0), else S; rss =
 *       memory.current in 4 KiB pages, vsize = 5/4 of it plus 16 MiB (assumed). A pid text that
 *       is empty (the slot is free) gives an empty text. fs/proc/array.c (do_task_stat,
 *       proc_pid_status) and fs/proc/array.c proc_pid_statm give the fields and their order.
 *   SEG_VIEW_TEMPLATE (a text with values in it: a process's cmdline, its cgroup file)
 *       words_off = the text with each "\x01<value index>\x02" replaced by that text value without
 *       its trailing newline and each "\x03" by a NUL byte; a = the text's length, b = the number
 *       of markers.
 *   SEG_VIEW_CF_TIME, SEG_VIEW_CF_TOTAL, SEG_VIEW_CF_TRANS (a table-driver policy's
 *   cpufreq/stats time_in_state, total_trans, trans_table; docs/whole-node.md "cpufreq/stats")
 *       a = the elapsed counter (its horizon caps the read time), b = the first of the policy's
 *       c + SEG_CF_COUNT_VALUES(c) stat values (c = table entries, 1..SEG_CF_MAX_STATES): c time
 *       lines (SEG_V_LINE), one per entry in table order (ns; rate 1 ms per substep while it is
 *       the current entry, else 0), each capped at the elapsed time like a busy line, then the
 *       c² transition counts, row `from` major, SEG_COUNTS_PER_VALUE to a SEG_V_COUNTS value
 *       (segment.h; before format 9 one SEG_V_LINE value a count); words_off = the table's
 *       kHz, space-separated, in table order. The current entry is the one whose time line
 *       runs (none: no `*`). Shown as drivers/cpufreq/cpufreq_stats.c (6.x) prints them:
 *       time_in_state "%u %llu\n" per entry (kHz, nsec_to_clock_t: ns / 10^7), total_trans
 *       "%u\n" (the sum of the matrix: each transition adds one to both), trans_table
 *       "   From  :    To\n", "         : ", "%9u " per entry, "\n", then per row "*" (the
 *       current entry) or " ", "%9u: ", "%9u " per count, "\n".
 * Time counters are SEG_V_COUNTER values read as lines (segment.h "Counters") in these units:
 * acc_uj is µs, rem_nj the sub-µs ns, power_uw the ns added per 1 ms substep, start_uj the µs
 * before the engine's start. The elapsed counter (power 1e6: wall time of the node) is
 * republished every tick and its freeze horizon (t0 + nsub substeps) caps the time at which
 * every busy counter is read; a busy counter is republished only when its CPU's utilisation
 * changes (its own nsub is not used). The whole view is taken from one latch generation, so its
 * lines agree with each other.
 *
 * /proc/stat (fs/proc/stat.c show_stat; USER_HZ 100): per CPU, busy ns B and idle ns E − B give
 *   user = ⌊⌊B/100⌋·90/10^7⌋, system ⌊⌊B/100⌋·7/10^7⌋, softirq ⌊⌊B/100⌋·2/10^7⌋,
 *   irq ⌊⌊B/100⌋·1/10^7⌋, idle ⌊(E − B)/10^7⌋, nice iowait steal guest guest_nice 0
 *   (shares assumed: no source splits a server's busy time; each field is monotonic in B);
 *   the `cpu` line sums the CPUs' fields. intr, ctxt, processes, softirq are derived from the
 *   ticks (assumed rates, see seg_view_proc.c); btime = realtime − monotonic + the monotonic time at
 *   which the elapsed counter was 0 (the node's boot); procs_running = max(1, round(Σ busy ns per
 *   substep / 1e6)); procs_blocked 0.
 * /proc/uptime: "%lu.%02lu %lu.%02lu\n" of E and Σ idle (fs/proc/uptime.c).
 * /proc/meminfo: fs/proc/meminfo.c's lines and order (6.12, Debian config), see seg_view_proc.c.
 *
 * Never: allocation, locks or system calls (clocks are the vDSO's); a bad param or value index
 * gives an empty text, never an out-of-bounds read. */
#ifndef HWEMU_SEG_VIEW_H
#define HWEMU_SEG_VIEW_H
#include "segment.h"

enum seg_view {
    SEG_VIEW_NONE = 0,
    SEG_VIEW_PROC_STAT = 1,
    SEG_VIEW_PROC_UPTIME,
    SEG_VIEW_PROC_MEMINFO,
    SEG_VIEW_TEMP,
    SEG_VIEW_CPUINFO,
    SEG_VIEW_IDLE,
    SEG_VIEW_CG_CPU_STAT,
    SEG_VIEW_CG_MEMORY_STAT,
    SEG_VIEW_CG_CPUS,
    SEG_VIEW_PID_STAT,
    SEG_VIEW_PID_STATUS,
    SEG_VIEW_PID_STATM,
    SEG_VIEW_TEMPLATE,
    SEG_VIEW_CF_TIME,
    SEG_VIEW_CF_TOTAL,
    SEG_VIEW_CF_TRANS,
};
#define SEG_VIEW_LAST SEG_VIEW_CF_TRANS
/* The most table entries a policy's cpufreq/stats has here: its trans_table stays within a page
 * (the kernel gives -EFBIG past one); a larger table renders no stats directory. */
#define SEG_CF_MAX_STATES 15
/* The SEG_V_COUNTS values of a policy of k entries: its k² transition counts */
#define SEG_CF_COUNT_VALUES(k) (((k) * (k) + SEG_COUNTS_PER_VALUE - 1) / SEG_COUNTS_PER_VALUE)

/* The longest view text a reader must be able to hold (the shim's large view buffers: a
 * 512-CPU /proc/cpuinfo with the kernel's every field, about 2.6 KB a CPU); a renderer makes no
 * view whose seg_view_bound exceeds it. Every view but /proc/cpuinfo stays within
 * SEG_VIEW_SMALL_TEXT (a 512-CPU /proc/stat), the size of most of a reader's buffers. */
#define SEG_VIEW_MAX_TEXT (2 * 1024 * 1024)
#define SEG_VIEW_SMALL_TEXT (160 * 1024)

/* The view kind of an entry, SEG_VIEW_NONE when it is not a view. */
int seg_view_of(const struct seg *s, uint32_t entry);
/* An upper bound of the view's text length (what a reader's buffer must hold). */
size_t seg_view_bound(const struct seg *s, uint32_t entry);
/* The view's text at now_ns (CLOCK_MONOTONIC) into buf (cap bytes, at least seg_view_bound):
 * its length; 0 when buf is too small or the entry is not a view; SEG_VIEW_EIO when the node
 * cannot answer: an engine killed inside the store of a value left it torn (seg_values_torn),
 * until an engine starts on the file again. The reader answers EIO. */
#define SEG_VIEW_EIO SIZE_MAX
size_t seg_view_render(const struct seg *s, uint32_t entry, int64_t now_ns, char *buf, size_t cap);

#endif
