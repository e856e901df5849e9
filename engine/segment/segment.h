/* segment: the per-node shared-memory file that the engine publishes and agents read.
 *
 * This is the contract between the engine (writer of snapshots, reader of agent writes), the
 * shim and fakesmi (readers of snapshots, writers of agent writes). It is dependency-free C
 * (libc only, no allocation on the read path, no locks, no syscalls on the read path) so the
 * shim can link it. Everything in a segment that an agent can write (write slots, the event
 * ring, the high-water marks) is untrusted input to the engine: bounds-checked, never a pointer.
 *
 * Files. A node is two files, both under the root, both mapped MAP_SHARED by every party:
 *   <root>/<node>.seg           the node's own: its header and everything that changes at run time
 *   <root>/<layout hash>.static the static part (entries, paths, static texts, params), shared by
 *                               every node rendered with that layout (a pool's nodes, and the
 *                               nodes of other pools with the same profile values): 16 lowercase
 *                               hex digits of the node header's layout_hash, in the directory
 *                               of the node's file (seg_static_path)
 * Sharing the static part is what keeps thousands of nodes cheap: on a 96-CPU node it is about
 * 92 % of the bytes (1.6 MB of 1.8 MB, segment format 10), written once per layout instead of
 * once per node. The node file is created with its slots, hwm and ring as holes
 * (seg_image_write): they read as zeros, what they hold before any write, and take memory only
 * once an agent stores into them.
 * Layout of the node file, all offsets from its start, every section 64-byte aligned:
 *
 *   struct seg_header                        version, sizes, offsets, node and profile names,
 *                                            layout hash, publication generation, heartbeat
 *   struct seg_journal  journal              the value being published, whole ("Snapshot
 *                                            publication" below)
 *   _Atomic uint64_t    qbits[]              one bit per quiet value: the node has its own copy
 *                                            ("Quiet values" below)
 *   _Atomic uint64_t    sbits[]              one bit per slot: it was stored into ("Slots' bits")
 *   struct seg_value    values[n_values]     the snapshot: one copy of every value; the quiet
 *                                            ones (first_quiet and after) are holes until written
 *   struct seg_slot     slots[n_slots]       one write slot per agent-writable attribute
 *   _Atomic uint64_t    hwm[n_values]        read high-water mark of each counter value
 *   struct seg_event    ring[ring_cap]       agent write events, multi-producer ring
 *   struct seg_ledger   ledger[2]            the engine's energy ledger, written each tick
 *
 * and of the static file (nothing in it changes while the engine runs, nobody but the engine
 * writes it; its counts equal the node header's, its hash the node header's layout_hash):
 *
 *   struct seg_static_header                 version, size, offsets, layout hash, profile
 *   struct seg_entry    entries[n_entries]   sorted by path (byte order): binary search
 *   char                strings[]            NUL-terminated paths, link targets, static text
 *   struct seg_param    params[n_params]     per-attribute constants for validators
 *   struct seg_value    quiet[n_quiet]       the template's quiet values (values first_quiet..)
 *
 * Quiet values (format 11). Most of a node's values are settings only an agent's write changes
 * (the A files' values: governors, frequency limits, EPP, power limits, 1,536 of a 384-CPU
 * node's 3,414 values), and A and S texts no tick publishes (layout.h layout_quiet_kind). The
 * builder gives them the last indices (first_quiet .. n_values - 1: a layout is rendered twice,
 * seg_build.h segb_quiet_split), the static file holds their template copy, and a node's file
 * leaves their pages as holes (seg_image_write writes the values up to first_quiet). A hole
 * read through a shared mapping of a tmpfs file allocates a page, so nobody reads one: bit i of
 * qbits says the node holds its own copy of value first_quiet + i. A reader takes the template's
 * copy while the bit is clear, the node's once set (seg_value_at; seg_value_load and seg_read
 * under the journal rule below, which takes the journal's copy first when it names the value).
 * The engine sets the bit (release) in seg_publish_value after the value's store, so a reader
 * that sees the bit sees the value whole; between the store and the bit the journal names the
 * value. An engine killed between them leaves the journal naming the value whole: the next
 * engine's seg_journal_heal puts it in place (if needed) and sets the bit. The bits live on the
 * header's page, which readers map writable (its atomics): a process that clears or sets a bit
 * misleads readers of that value (the template's text, or the hole's zeros: an empty text) until
 * the engine publishes the value again, as a forged journal does. Views never read quiet values
 * through their values array (they read lines, counters and texts the ticks publish); the text
 * values they read go through seg_value_load.
 * Slots' bits (format 11). Bit i of sbits is set (seq_cst) by a slot store before the store
 * completes; seg_slot_load answers "never written" while it is clear without touching the slot,
 * whose page is a hole until an agent writes: a reader of an A file, the engine's drain of the
 * slots and its resume read no slot page no agent wrote. A process that clears a bit hides that
 * slot's write from readers and from the engine (as zeroing the slot does).
 *
 * Entries. Paths are relative to the node root: "sys/class/powercap/intel-rapl:0/energy_uj",
 * "cpuinfo", "state/...". Every directory on the way is an entry of its own. A file is one
 * of three classes, as the seed names them: R (rendered, read-only, its text is static in the
 * string pool), S (written by the emulator: its text is a snapshot value) or A (writable by the
 * agent: a snapshot value plus a write slot; a write is validated by its validator, and on
 * success the normalised text goes to the slot, where readers see it at once).
 *
 * Snapshot publication (format 10: one copy of the values, a sequence lock and a one-value
 * journal; formats up to 9 kept two copies of every value, 64 B a value more, and a reader took
 * the copy the generation's low bit named). The engine publishes a node's changes as
 *     gen += 1 (now odd); for each changed value v: journal = v's new value, then values[v] =
 *     the same (seg_publish_value); gen += 1 (now even), heartbeat (seg_publish_end)
 * and writes one value's journal as: journal.seq += 1 (odd), journal.value = v and journal.v =
 * the value, journal.seq += 1 (even), then values[v]. So at any instant at most one value of
 * the copy is being written, and it is the one the journal names whole: a value store cut short
 * (an engine killed with SIGKILL in the middle of its 64 bytes) leaves the journal holding the
 * whole new value, and a journal store cut short leaves every value of the copy whole.
 *   One value (seg_read, seg_value_load): load journal.seq q, copy values[v] and journal.value,
 *     and when q is even and non-zero and journal.value is v, copy journal.v instead; if
 *     journal.seq is still q the copy is whole (the only value written meanwhile was the one
 *     the journal names), else read again. No wait on the engine, which may be dead: a reader
 *     retries only while the engine moves on to another value, SEG_LATCH_TRIES times at most.
 *   Several values that belong together (the views, seg_view_common.h view_latched): load gen g;
 *     when it is even, read them and check gen is still g: one publication, whole. While gen is
 *     odd (a publication under way, or an engine killed during one) a reader spins
 *     SEG_LATCH_TRIES times, then waits on its clock for the publication to end, at most
 *     SEG_PUBLISH_WAIT_NS (an engine descheduled in the middle of a node), and only then reads
 *     the values as they stand, each whole by the journal rule (seg_values_read): some of the
 *     publication under way, the rest of the one before. A generation it waited out is taken
 *     as an engine's that stopped: the same reader reads the values as they stand at once while
 *     gen stays there (struct seg's stuck_gen).
 *     The engine publishes a node's elapsed counter (which caps every line a view reads) after
 *     every other value, so such a read sees old lines up to their horizon and new ones at their
 *     start, which is at or after it: no line goes back.
 *     The one state no read can get a whole answer from is an engine killed inside a value's
 *     64-byte store (gen odd, journal.seq even, values[journal.value] differs from journal.v):
 *     seg_values_torn says so and the views answer EIO (seg_view_render) until an engine starts
 *     on the file, which first writes the journal's value into its place (seg_journal_heal).
 * Readers never block; the engine never waits for a reader.
 *
 * Counters (energy): the power of a counter's zone is held constant over each published
 * interval (physics_cpu.h, "Reads between ticks"), so a counter is a straight line on the 1 ms
 * substep grid. A counter value publishes, at the grid boundary t0: the accumulator acc_uj
 * (uJ since the engine's start) and rem_nj (0..999), the held power power_uw (= nJ per
 * substep), start_uj (the total before the engine's start), the register's unit_nj and
 * seed_raw, and nsub, the freeze horizon in substeps. A read at time t takes
 *     n = clamp(floor((t - t0) / substep), 0, nsub)
 *     nj = rem_nj + n * power_uw;  acc = acc_uj + nj / 1000;  rem = nj % 1000
 *     raw = seed + floor((acc * 1000 + rem) / unit_nj)      seed = seed_raw_hi << 32 | seed_raw
 *     energy_uj = ((raw mod 2^wrap_bits) * unit_nj) / 1000
 * and the file shows energy_uj, or (raw mod 2^wrap_bits) itself when shows_count is set.
 * which is what stepping the physics to t gives, bit for bit: on the grid, never decreasing
 * (until the register wraps, as hardware does), equal at the next tick to what the tick
 * computes, and frozen at the horizon if the engine stops. Before returning, a reader raises
 * hwm[value] to start_uj + acc (the total energy it revealed).
 * The horizon is never after the next tick's time (docs/robustness.md, "Between two ticks"):
 * the engine loop sleeps to absolute deadlines and the next tick never takes its time before
 * the next deadline, so each tick's lines end there (a tick that woke d late: tick - d after
 * its own time), and a tick the engine runs on its own (no loop) ends them one tick ahead.
 * The next tick restarts every line from its own time, node after node; a reader of a node
 * it has not published yet sees the old line frozen at or below that restart, never the old
 * power extrapolated past it (which, after a cap, is above what the next read shows). A node's
 * first publication, at its start, stands still (nsub 0) until the engine's first tick.
 *
 * Resume (the rule that keeps counters from ever going back across crashes, seg_resume_total):
 * a dead engine's last snapshot keeps advancing until its horizon, and readers may read it at
 * any instant until the new engine publishes, so the new engine resumes every counter from
 *     H = start_uj + acc_uj + (rem_nj + nsub * power_uw) / 1000   of the visible value (the
 *         journal's when it names the value, else the copy's: what a reader reads, seg_value_load),
 * the largest value that snapshot can ever show, which is >= every read of it, before or after
 * the restart read the segment. (The ledger and the high-water marks alone are not enough: a
 * read between the restart's look at them and its first publication can be above both.) The
 * visible value is believed only when it is a plausible counter (type counter, power_uw <=
 * SEG_POWER_MAX_UW, nsub within two ticks of the engine's own tick) and H is within one step
 * (SEG_POWER_MAX_UW over three of the engine's ticks) above the newest whole ledger copy L.
 * Otherwise the node resumes from max(L, min(hwm, L + step)): a high-water mark is what agents
 * write, so it can never move a counter by more than one step past the ledger (a mark of 2^62
 * moves nothing past that), and with a plausible snapshot it is bounded by H (what a reader
 * could really have revealed). Every resumed total is at most SEG_TOTAL_MAX (2^50 uJ, 35 years
 * at 1 kW), so a node's sum of counters can never wrap a uint64. The ledger's checksum catches
 * torn writes, not forgery: whoever can write the file can set the ledger, as they can delete
 * the file; such a value is still capped by SEG_TOTAL_MAX.
 *
 * Ledger: each tick the engine writes every counter's total energy (uJ, start_uj + acc at
 * the tick; one entry per SEG_V_COUNTER value, in value order) into the older of two copies,
 * with a sequence and a checksum, sequence last. Some counter values have no entry: the
 * energy of a zone no file shows (DRAM on AMD nodes, psys on most), kept in the ledger so a
 * restart carries it on like the others; they are never published (their snapshot stays the
 * template's, so the resume rule takes their ledger value). A kill at any instant leaves at least one whole copy: the newest valid one is the last
 * whole tick. Because the file is shared memory, the ledger survives the engine's death with
 * the page cache (and reaches the disk when the root is on one).
 *
 * Trust (docs/robustness.md): every party validates the node header and the static file's
 * header once (seg_check, seg_check_static) and keeps private copies of the counts, sizes and
 * section pointers (struct seg); nothing after that is re-read from a shared header but the
 * atomics (gen, heartbeat, ring_head, slot_writes). Every index read from shared memory (an
 * entry's value, slot, param, parent, string offsets; an event's entry; a ring position) is
 * bounded by the private counts before use, and every mapping a reader makes is followed by one
 * zero page, so a string whose NUL was overwritten ends there instead of running off the map (the
 * engine's node files are not: it reads no string there, and one map a node is what lets
 * vm.max_map_count, 65,530 by default, hold 65,000 nodes). The engine goes
 * further: its entries, strings and params are the template image it rendered (private
 * memory), its geometry is the image's, it never reads the static file, and it checks each
 * node's header every tick and one 4 KiB chunk of each static file every tick (node_repair.c). Readers
 * map the static file whole and the node's snapshot values read-only (the pages after the
 * header's: the journal and the first values share the header's page, which holds atomics
 * readers store into), so a stray store of an agent cannot damage them (a process that maps a
 * file itself still can: the engine repairs it; a forged journal misleads readers of one value
 * until the engine's next publication, and the engine takes it only for a value of the same
 * type, seg_journal_heal). A file that shrinks under a mapping would raise SIGBUS on the next touch of a lost page:
 * seg_guard_install() catches it for the pages of a registered segment (both files), puts a
 * zero page in place so the access completes, and marks the segment faulted; seg_read then
 * answers NULL (the caller's EIO) until seg_revalidate finds both files whole again (the
 * engine restores them).
 *
 * Devices (class M and I files, under dev/). Two character devices are not text files and get
 * classes of their own; both are kind SEG_FILE, mode 0600, root-owned, as the kernel makes them:
 *   M  /dev/cpu/<n>/msr (c 202:<n>, arch/x86/kernel/msr.c): a read or write at file offset =
 *      MSR address, 8 bytes a register (u32 lo, u32 hi, little-endian). The entry's param is
 *      the first of its CPU's register params (struct seg_param, read as below), which follow
 *      one another and end with a param of b = SEG_MSR_END which, when its d is 1, continues
 *      in its package's list at param c; that list ends with an END in turn (not followed
 *      again); every CPU of a package continues in the same list, so package registers read
 *      the same on all of them:
 *        a = MSR address, b = enum seg_msr_kind, c and d per kind, words = paths for LIMIT:
 *        CONST   the register holds c
 *        ENERGY  the count of counter value c (a SEG_V_COUNTER: the count a read of its file
 *                would reveal, raising its high-water mark), divided by d (d > 1: a per-core
 *                share of a package counter), modulo 2^32: the energy_uj file and the MSR show
 *                one counter, so raw * unit_nj / 1000 == energy_uj, as the kernel computes it
 *        RATIO   the text value c (kHz) over d kHz, in bits 15:8 (IA32_PERF_STATUS)
 *        LIMIT   MSR_PKG_POWER_LIMIT composed from the powercap files (slot or snapshot) named
 *                in words, space-separated, "-" when absent: PL1 limit, PL1 window, PL2 limit,
 *                PL2 window, zone enabled; c = power unit uW, d = time unit us. A write is
 *                decoded and stored through those files' validators (seg_attr.h), so it is the
 *                same store, and the same event, as a write of constraint_N_power_limit_uw
 *        TIME    a time counter at a clock: c = E | L << 32 (value indices); the ns of line L
 *                (a seg_view.h time counter: the elapsed counter for the TSC, a CPU's busy
 *                counter for MPERF) at the elapsed counter E's capped time, times d kHz / 10^6
 *                (cycles of a d kHz clock that runs while the line does); d = 0: the reader's
 *                TSC rate (seg_msr_tsc_khz), the clock the TSC and MPERF share
 *        CYCLES  c = E | L << 32: the count of cycle line L (a BK_CPU_CYCLES counter: start +
 *                acc in thousands, rem the rest) at E's capped time (APERF); d = 1..31: the
 *                line counts ns, shown in units of 2^-d s modulo 2^32 (MSR_PKG_PERF_STATUS's
 *                throttled time in the RAPL time unit)
 *        IDLE    a C-state residency, c = E | B << 32: the idle ns the CPUs named in words
 *                (their positions: busy counter B + position, seg_view.h) all share, taken as
 *                the least idle time among them (their idle periods assumed to overlap as far
 *                as they can), times (d & 0xFFFF) / 1000 (the state's share of idle time), in
 *                cycles of a (d >> 16) kHz clock (0: the reader's TSC rate, as TIME)
 *        THERM   IA32_(PACKAGE_)THERM_STATUS of the package temperature text (c & 0xFFFFFFFF,
 *                m°C): bit 31 valid, 30:27 resolution 1 °C, 22:16 the degrees below TjMax
 *                (d & 0xFF) of the temperature less ((d >> 8) & 0xFFFF) m°C (a core's spread
 *                below its package), in whole degrees as the coretemp view shows it; bit 0
 *                (PROCHOT active) while the text value (d >> 32) - 1 (d >> 32 = 0: none) reads
 *                above 0: the package is throttled at TjMax; bit 1 (its log, sticky): with
 *                c >> 32 = 0, as bit 0; else set while bit 0 is or while the episode count, text
 *                value (c >> 32) - 1, exceeds the number in the A file words names (a path: the
 *                count at the log's last clear). A write with bit 1 clear stores there the
 *                episodes ended by then (the count, less one still going), through the file's
 *                validator; any other write changes nothing
 *      seg_msr.h's seg_msr_read / seg_msr_write are its readers; any other address is EIO.
 *   I  /dev/ipmi0 (the OpenIPMI device): no content of its own. The shim answers its ioctls from
 *      state/platform/power (node power "<current> <min> <max> <avg> <period_ms>\n", W with one
 *      decimal, statistics since the engine opened the node; an S value the engine publishes
 *      each tick, the same figure as /telemetry's nodePowerWatts).
 * A reader that does not know a class treats the file as unreadable (EIO).
 *
 * Slots (directories whose name and presence change while the layout stays fixed: the job
 * cgroups of docs/interfaces.md "Job cgroups"). A slot directory is a SEG_DIR entry with
 * SEG_F_SLOT whose path ends in a placeholder component: SEG_SLOT_MARK ('\x01') followed by the
 * slot number in decimal ("...slurmstepd.scope/\x01" "3"); its parent carries SEG_F_SLOTS and its
 * slots are numbered 0, 1, ... without gaps. Its `value` is an S text value, the slot's id (no
 * newline; empty: the slot is absent), and its text (text_off, text_len) is the name pattern:
 * every SEG_SLOT_MARK byte in it stands for the id ("job_\x01" with id "4217" names the
 * directory job_4217). A present slot is listed under that name (never the placeholder) and a
 * path walk resolves that name to it (seg_resolve: a component missing under a SEG_F_SLOTS
 * directory is compared with the current name of each of its slots, read under the latch). An
 * absent slot, and everything under it, does not exist, by any name. Everything under a slot
 * is rendered once under the placeholder path; descendants may be slots themselves (their
 * ids are their own values). The engine changes a slot's id at a tick, in the same
 * publication as the files under it; a reader holding a descriptor of a file under a slot
 * answers ENODEV while the slot is absent (seg_entry_present; kernfs does so for a removed
 * cgroup), and the new holder's file once the slot holds another id.
 * The placeholder itself also resolves while the slot is present (the emulator's own
 * descriptor paths use it); it is never listed. The same slots carry the jobs' processes:
 * proc/<SEG_SLOT_MARK>k (pattern SEG_SLOT_MARK alone: the directory is named by the pid its value
 * holds) with its own task/<SEG_SLOT_MARK>0 holding the same value.
 *
 * Turbo (a policy's cpufreq limits as the driver shows them the moment the turbo switch moves,
 * docs/whole-node.md "cpufreq"): two file flags that seg_read applies, so every reader sees them
 * at once, not at the engine's next tick.
 *   SEG_F_TURBO on an S file (cpuinfo_max_freq): shows the decimal param a (kHz, turbo on) or b
 *     (turbo off) and a newline, by the current text of the switch, param's `related` (an A file,
 *     its slot if newer: cpufreq/boost where c = 0, "1" = on; intel_pstate/no_turbo where c = 1,
 *     "1" = off); a switch that is not a number reads as on.
 *   SEG_F_CEIL on an A file (scaling_max_freq, scaling_min_freq): shows the smaller of its own
 *     number and the number its param's `related` entry shows (the policy's cpuinfo_max_freq,
 *     its scaling_max_freq), at most SEG_CEIL_HOPS entries deep. The text stored stays the
 *     written request (seg_read_stored), as the kernel keeps a frequency QoS request and clamps
 *     policy->max into cpuinfo_min..cpuinfo_max at every update: turbo back on, the request
 *     shows again.
 *
 * Views: an S file whose `validator` is non-zero is computed at read time from several values
 * (/proc/stat, /proc/meminfo, cpuidle times, per-core temperatures, cpuinfo's MHz): its kind and
 * inputs are in seg_view.h; seg_read does not compute it (its text is seg_view_render's).
 *
 * Agent writes: a slot holds the last accepted text with a sequence number (odd while being
 * written). A reader of an A attribute shows the slot's text when the slot's sequence is newer
 * than the sequence the snapshot says it applied, else the snapshot's text. The engine drains
 * slots each tick, re-validates the text, applies it to the physics and records the applied
 * sequence in the snapshot. Each write call (accepted or refused) appends one event to the
 * ring; the engine turns events into joulie.sim.write.* events of the next tick.
 */
#ifndef HWEMU_SEGMENT_H
#define HWEMU_SEGMENT_H
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SEG_MAGIC "HWEMUSEG"
/* 5: the job slots' processes (proc/<pid>, slot directories under proc: docs/interfaces.md "Jobs
 * as processes") and the views SEG_VIEW_PID_* and SEG_VIEW_TEMPLATE (seg_view.h); a reader of 4
 * would show those files empty. */
/* 6: the views SEG_VIEW_CF_TIME, _TOTAL and _TRANS (cpufreq/stats of table-driver policies,
 * seg_view.h) and their SEG_V_LINE values; a reader of 5 would show those files empty. */
/* 7: the static part moved out of the node's file into a static file per layout ("Files" above);
 * the header lost its entries, strings and params offsets (they are the static header's). */
/* 8: the file flags SEG_F_TURBO and SEG_F_CEIL ("Turbo" above); a reader of 7 would show a
 * policy's limits at turbo on whatever the switch says. */
/* 9: a table-driver policy's k² cpufreq/stats transition counts packed SEG_COUNTS_PER_VALUE to a
 * SEG_V_COUNTS value instead of one SEG_V_LINE value each (seg_view.h SEG_VIEW_CF_*): 3,072 fewer
 * values, 400 KiB less, in a 384-CPU node's file; a reader of 8 would show those files wrong. */
/* 10: one copy of the values under a sequence lock with a one-value journal ("Snapshot
 * publication" above) instead of two copies under a latch: 64 B a value less (161 KiB of a node
 * of the 5,000-node mix); the header's values_off[2] became values_off and journal_off. A reader
 * of 9 would read half its values from the journal's place. */
/* 11: quiet values ("Quiet values" above): the values only an agent's write changes at the end
 * of the values, their template copy in the static file and a bitmap of those the node has a
 * copy of; and a bitmap of the slots ever stored into. A reader of 10 would read the quiet
 * values' holes as empty texts. */
#define SEG_VERSION 11u
#define SEG_QUIET_WORDS(n) (((n) + 63u) / 64u) /* uint64_t words of a bitmap of n quiet values */
#define SEG_TEXT_MAX 48         /* longest text of a snapshot value, newline included */
#define SEG_READ_MAX 4096       /* sysfs shows at most a page */
#define SEG_NONE UINT32_MAX

enum seg_kind { SEG_DIR = 1, SEG_FILE = 2, SEG_LINK = 3 };
enum seg_class { SEG_R = 'R', SEG_S = 'S', SEG_A = 'A', SEG_M = 'M', SEG_I = 'I' };
/* Register kinds of an M file's params (see "Devices" above). */
enum seg_msr_kind {
    SEG_MSR_END = 0, SEG_MSR_CONST, SEG_MSR_ENERGY, SEG_MSR_RATIO, SEG_MSR_LIMIT,
    SEG_MSR_TIME, SEG_MSR_CYCLES, SEG_MSR_IDLE, SEG_MSR_THERM,
};
#define SEG_MSR_MAJOR 202 /* Documentation/admin-guide/devices.txt: "202 char CPU model-specific registers" */
/* SEG_V_LINE: a time line (seg_view.h units, read only by views) that no ledger holds: the
 * engine resumes it from the visible snapshot, bounded by the elapsed counter it resumed
 * (cpufreq/stats, engine/runtime/node_cfstats.c), so a tick writes nothing for it. */
/* SEG_V_COUNTS: up to SEG_COUNTS_PER_VALUE uint32 counts (little-endian, in text) that no ledger
 * holds, read only by views (the cpufreq/stats transition counts), resumed like SEG_V_LINE. */
enum seg_vtype { SEG_V_TEXT = 1, SEG_V_COUNTER = 2, SEG_V_LINE = 3, SEG_V_COUNTS = 4 };
#define SEG_COUNTS_PER_VALUE 12 /* SEG_TEXT_MAX / 4 */
/* A directory the node owns whole: a path under it that the node does not render does not
 * exist (it is not the host's). Other directories of the tree overlay the host's. */
#define SEG_F_OWNED 1
/* A name the host may have but the node does not (an intel_pstate directory on an AMD node):
 * it does not exist, nor anything under it, and listings do not show it. Always OWNED too. */
#define SEG_F_ABSENT 2
/* A slot directory ("Slots" above): its name is its pattern with its value's id, absent when empty. */
#define SEG_F_SLOT 4
/* A directory with slot children, named SEG_SLOT_MARK "0", SEG_SLOT_MARK "1", ... */
#define SEG_F_SLOTS 8
#define SEG_SLOT_MARK '\x01'
/* A file that follows a turbo switch, or is capped by another file ("Turbo" above). */
#define SEG_F_TURBO 16
#define SEG_F_CEIL 32
#define SEG_CEIL_HOPS 4
#define SEG_SLOT_NAME_MAX 200 /* longest name a pattern expands to */

struct seg_header {
    char magic[8];              /* SEG_MAGIC */
    uint32_t version;           /* SEG_VERSION */
    uint32_t header_size;       /* sizeof(struct seg_header) */
    uint64_t file_size;
    char node[64];
    char profile[64];
    uint64_t layout_hash;       /* of the rendered entries and profile values: names the static file */
    uint32_t n_entries, strings_size, n_params; /* the static file's counts */
    uint32_t n_values, values_off, journal_off; /* the snapshot's values, and its journal */
    uint32_t n_slots, slots_off;
    uint32_t hwm_off;
    uint32_t ring_cap, ring_off;   /* ring_cap is a power of two */
    uint32_t ledger_off, ledger_size; /* two struct seg_ledger of ledger_size bytes each */
    uint32_t n_counters;        /* SEG_V_COUNTER values: entries of a ledger copy */
    uint32_t first_quiet;       /* values from here on are quiet ("Quiet values"); n_values: none */
    uint32_t quiet_off;         /* the quiet values' bitmap: (n_values - first_quiet) bits, in
                                 * _Atomic uint64_t words */
    uint32_t slot_bits_off;     /* the slots' bitmap: n_slots bits, set by a slot's first store */
    uint32_t pad1;
    _Atomic uint64_t slot_writes; /* bumped by every slot store: the engine drains slots when it moved */
    int64_t substep_ns;         /* 1 ms */
    int64_t tick_ns;
    uint32_t engine_pid;
    uint32_t pad0;
    _Atomic uint64_t gen;       /* publication generation: odd while the engine publishes */
    _Atomic int64_t heartbeat_ns; /* CLOCK_MONOTONIC of the last publication */
    _Atomic uint64_t ring_head; /* next event sequence to be claimed by a producer */
    _Atomic uint64_t writes_refused_unsafely; /* slot writes abandoned (a writer died mid-write) */
    uint8_t reserved[64];
};

/* The static file's header ("Files" above). */
#define SEG_STATIC_MAGIC "HWEMUSTA"
struct seg_static_header {
    char magic[8];              /* SEG_STATIC_MAGIC */
    uint32_t version;           /* SEG_VERSION */
    uint32_t header_size;       /* sizeof(struct seg_static_header) */
    uint64_t file_size;
    uint64_t layout_hash;       /* the file's name; equal to every node header that uses it */
    char profile[64];           /* the profile it was rendered from (for a person reading the root) */
    uint32_t n_entries, entries_off;
    uint32_t strings_size, strings_off;
    uint32_t n_params, params_off;
    uint32_t n_quiet, quiet_off; /* the template's quiet values ("Quiet values"): n_values - first_quiet */
    uint8_t reserved[32];
};

struct seg_entry {
    uint32_t path_off;          /* into strings */
    uint32_t parent;            /* entry index of the directory holding it (SEG_NONE: at the root) */
    uint32_t text_off, text_len;/* R files: static text; links: the target (relative) */
    uint32_t value;             /* S and A files: index of the snapshot value */
    uint32_t slot;              /* A files: write slot, else SEG_NONE */
    uint32_t param;             /* A files: validator constants, else SEG_NONE */
    uint16_t validator;         /* A files: enum seg_validator (seg_attr.h) */
    uint16_t mode;              /* permission bits, e.g. 0444, 0644, 0755, 0777 */
    uint8_t kind;               /* enum seg_kind */
    uint8_t cls;                /* enum seg_class for files, 0 otherwise */
    uint8_t flags;              /* SEG_F_* */
    uint8_t pad[5];
};

/* Constants a validator needs (units, limits, word lists); meaning per validator. */
struct seg_param {
    int64_t a, b, c, d;
    uint32_t words_off;         /* a space-separated word list in strings, or SEG_NONE */
    uint32_t related;           /* another entry the validator consults (e.g. the governor) */
};

struct seg_value {
    uint8_t type;               /* enum seg_vtype */
    uint8_t len;                /* SEG_V_TEXT: length of text */
    uint8_t wrap_bits;          /* SEG_V_COUNTER: register width (32; 64 never wraps) */
    uint8_t shows_count;        /* SEG_V_COUNTER: 1 = the file shows the register count (an NVML
                                 * mJ counter: unit_nj 1000000), 0 = the count in uJ */
    uint32_t nsub;              /* SEG_V_COUNTER: freeze horizon, substeps after t0 */
    union {
        char text[SEG_TEXT_MAX];
        struct {
            uint64_t acc_uj;        /* uJ accumulated since the engine's start, at t0 */
            uint64_t power_uw;      /* held power of the interval: nJ per substep */
            int64_t t0_ns;          /* CLOCK_MONOTONIC of the grid boundary */
            uint64_t start_uj;      /* total energy before the engine's start */
            uint32_t rem_nj;        /* sub-uJ remainder at t0, 0..999 */
            uint32_t unit_nj;       /* register unit */
            uint32_t seed_raw;      /* register count at acc 0 (low 32 bits) */
            uint32_t seed_raw_hi;   /* its high 32 bits (64-bit counters) */
        } ctr;
        struct {
            char text[SEG_TEXT_MAX - 8];
            uint64_t applied;       /* A values: slot sequence applied into this snapshot */
        } a;
    };
    uint8_t pad2[8];
};

/* The value being published ("Snapshot publication" above): 128 bytes, 64-byte aligned. */
struct seg_journal {
    _Atomic uint64_t seq;       /* odd while the engine writes value and v; 0: never written */
    uint32_t value;             /* the index of the value v holds */
    uint8_t pad[52];
    struct seg_value v;
};

struct seg_slot {
    _Atomic uint64_t seq;       /* even: stable; odd: a writer is filling text */
    int64_t time_ns;
    uint32_t len;
    uint32_t pad;
    char text[SEG_TEXT_MAX];
};

struct seg_event {
    _Atomic uint64_t seq;       /* claimed sequence + 1 once complete */
    int64_t time_ns;            /* CLOCK_MONOTONIC of the write */
    uint32_t entry;
    int32_t err;                /* 0: accepted; else the errno the writer got */
    uint32_t len;
    int32_t pid;
    char text[SEG_TEXT_MAX];    /* what was written, truncated */
};

struct seg_ledger {
    uint64_t seq;               /* 0: never written */
    uint64_t check;             /* checksum of seq and totals */
    int64_t wall_ns;            /* CLOCK_REALTIME of the tick */
    uint64_t pad;
    uint64_t total_uj[];        /* per counter value, in value order */
};

_Static_assert(sizeof(struct seg_value) == 64, "seg_value is one cache line");
_Static_assert(sizeof(struct seg_entry) == 40, "seg_entry layout is part of the contract");
_Static_assert(sizeof(struct seg_journal) == 128, "seg_journal layout is part of the contract");

/* Bounds of the resume rule (see "Resume" above). */
#define SEG_POWER_MAX_UW UINT64_C(20000000000) /* 20 kW: above any zone hwemu renders */
#define SEG_TOTAL_MAX (UINT64_C(1) << 50)     /* uJ */

/* A mapped segment, as any party holds it. The section pointers and the counts below are
 * private: set once from a checked header (seg_bind) and never re-read from shared memory. */
/* How many times a reader retries a read whose sequence keeps moving (the engine publishing, or
 * an agent storing into it) before it takes what it read last: segment.c's value loads, and the
 * views' spin on an odd generation (view_latched) and their reads of values as they stand. */
#define SEG_LATCH_TRIES 1000
/* How long a view waits for a publication under way to end before it reads the values as they
 * stand ("Snapshot publication"): 20 ms of the reader's clock, once per stopped generation. */
#define SEG_PUBLISH_WAIT_NS 20000000

struct seg {
    uint8_t *base;
    size_t size;
    struct seg_header *h;
    const struct seg_entry *entries;
    const char *strings;
    const struct seg_param *params;
    struct seg_value *values;   /* the snapshot (read-only to readers) */
    const struct seg_value *quiet; /* the template's quiet values (the static file's, or the engine's image) */
    _Atomic uint64_t *qbits;    /* the node's bitmap: quiet value first_quiet + i has a copy of its own */
    _Atomic uint64_t *sbits;    /* the slots' bitmap: slot i was stored into */
    uint32_t first_quiet;       /* <= n_values */
    struct seg_journal *journal;
    struct seg_slot *slots;
    _Atomic uint64_t *hwm;
    struct seg_event *ring;
    struct seg_ledger *ledger[2];
    int fd;
    uint32_t n_entries, strings_size, n_params, n_values, n_slots, ring_cap, n_counters, ledger_size;
    uint32_t static_end;        /* the values' end: what agents never write in the node file ends here */
    int64_t substep_ns;         /* > 0 */
    size_t map_size;            /* size plus the zero guard page */
    int guard;                  /* seg_guard registry slot, or -1 */
    bool rw;                    /* mapped writable whole (the engine) */
    /* The static file, as a reader maps it (st_base NULL: none mapped, and st_fd and st_guard
     * mean nothing; so in the engine, whose entries, strings and params are its template's
     * private image). */
    uint8_t *st_base;
    size_t st_size, st_map_size;
    int st_fd;
    int st_guard;
    uint64_t pub_gen;           /* the engine's own publication generation (never read back) */
    uint64_t pub_jseq;          /* the engine's own journal sequence (read back once: seg_journal_heal) */
    _Atomic uint64_t stuck_gen; /* a reader's: the odd generation it waited out (seg_values_read) */
};

/* --- any party ----------------------------------------------------------------------------- */

/* The segment a process of an emulated node uses, from its environment: HWEMU_SEGMENT, else
 * HWEMU_NODE under HWEMU_ROOT (default /dev/shm/hwemu), into path. Returns false when neither is
 * set (no node: the process is not emulated). */
bool seg_path_from_env(char *path, size_t len);
/* Maps path as a reader (the shim, the supervisor, fakesmi, the CLI): the node file with its
 * snapshot values read-only and its slots, high-water marks and ring writable, then its static
 * file (seg_attach_static); checks both headers and registers both mappings with the SIGBUS
 * guard. Returns 0, or an errno with a message in err (what is wrong and what to do). */
int seg_open(struct seg *s, const char *path, char *err, size_t errlen);
void seg_close(struct seg *s);
/* The static file of the segment at seg_path with layout hash h ("Files" above): 0, or
 * ENAMETOOLONG when it does not fit in len. */
int seg_static_path(const char *seg_path, uint64_t layout_hash, char *out, size_t len);
/* The same in directory dir (dirlen bytes of it). */
int seg_static_path_in(const char *dir, size_t dirlen, uint64_t layout_hash, char *out, size_t len);
/* Maps the static file of the segment at seg_path (s mapped, checked and bound) read-only with
 * its zero page, checks it against s's header (seg_check_static) and points s's entries,
 * strings and params into it. 0, or an errno with a message in err; s keeps what it mapped
 * either way (seg_close frees it). */
int seg_attach_static(struct seg *s, const char *seg_path, char *err, size_t errlen);
/* Maps size bytes of fd shared into s->base, s->size, s->map_size: writable whole when rw (the
 * engine: one memory map, nothing after it), else the snapshot values read-only and one zero
 * page after them. 0 or an errno. */
int seg_map(struct seg *s, int fd, size_t size, bool rw);
/* Checks every offset and size in a mapped node header against the file; 0 or EINVAL. */
int seg_check(const struct seg *s, char *err, size_t errlen);
/* Checks a mapped static file (size bytes at base) against s's checked header: its own
 * offsets and sizes, its hash and counts equal to the header's, every entry's indexes bounded
 * by both files' counts. 0 or EINVAL. */
int seg_check_static(const struct seg *s, const uint8_t *base, size_t size, char *err, size_t errlen);
/* Sets the section pointers and the private counts of a mapped segment from header h (the
 * segment's own once checked, or the engine's image header). */
void seg_bind(struct seg *s, const struct seg_header *h);
/* Points s's entries, strings and params into a static file's image at base (checked, or the
 * engine's own). */
void seg_bind_static(struct seg *s, const uint8_t *base);

/* The SIGBUS guard (see "Trust" above). Install once per process (idempotent); register each
 * mapping (seg_open does; the engine for its own). seg_faulted: a lost page of s (either file)
 * was touched. seg_revalidate: when both files are whole again (their sizes are s->size and
 * s->st_size), maps them afresh over the same addresses and clears the fault: 0, else EIO.
 * The seg_guard_* calls guard any other range (the engine's static files): a slot, or -1. */
void seg_guard_install(void);
void seg_guard_register(struct seg *s);
void seg_guard_unregister(struct seg *s);
bool seg_faulted(const struct seg *s);
int seg_revalidate(struct seg *s);
int seg_guard_add(const void *base, size_t size);
void seg_guard_remove(int *slot);
bool seg_guard_faulted(int slot);
void seg_guard_clear(int slot);

/* Entry index of a node-relative path ("sys/class/powercap"), or SEG_NONE. No allocation. */
uint32_t seg_lookup(const struct seg *s, const char *path, size_t len);
const char *seg_path(const struct seg *s, uint32_t entry);
/* Resolves a node-relative path as the kernel's path walk would: "." and ".." components,
 * and symbolic links (relative targets, at most 40) in every component, the last one only
 * when follow is true. Returns 0 with the entry, or ENOENT, ENOTDIR, ELOOP or ENAMETOOLONG.
 * No allocation; the work buffer is on the stack (SEG_PATH_MAX). */
#define SEG_PATH_MAX 1024
int seg_resolve(const struct seg *s, const char *path, size_t len, bool follow, uint32_t *entry);
/* seg_resolve, and on ENOENT the deepest directory the walk reached (SEG_NONE: none). */
int seg_resolve_ex(const struct seg *s, const char *path, size_t len, bool follow, uint32_t *entry,
                   uint32_t *last_dir);

/* The current name of slot directory entry (SEG_F_SLOT) into buf (cap >= SEG_SLOT_NAME_MAX + 1,
 * NUL-terminated): its length, 0 when the slot is absent or entry is not a slot. No allocation. */
size_t seg_slot_name(const struct seg *s, uint32_t entry, char *buf, size_t cap);
/* Is entry present: false when it or a directory above it is an absent slot. */
bool seg_entry_present(const struct seg *s, uint32_t entry);

/* The text a read of a file shows at time now_ns (CLOCK_MONOTONIC). Returns a pointer to the
 * text (static text in the segment, or tmp) and its length; raises the high-water mark of a
 * counter before returning. tmp must hold SEG_TEXT_MAX bytes. Returns NULL (length 0) when the
 * segment lost pages under the reader (truncated): the caller answers EIO. */
const char *seg_read(struct seg *s, uint32_t entry, int64_t now_ns, char *tmp, size_t *len);
/* seg_read without the SEG_F_CEIL caps: an A file's text as stored (its slot if newer, else the
 * snapshot), the request the engine re-applies when it resumes a node. */
const char *seg_read_stored(struct seg *s, uint32_t entry, int64_t now_ns, char *tmp, size_t *len);
/* A counter value at time now_ns: (start_uj + acc) in uJ, and its shown count or uJ in *shown.
 * now_ns = INT64_MAX gives its horizon. */
uint64_t seg_counter_total(const struct seg_value *v, int64_t substep_ns, int64_t now_ns, uint64_t *shown);
/* The resume rule ("Resume" above): the total a counter resumes from, given the newest whole
 * ledger copy's total (have_ledger false: none), the visible snapshot value, the high-water mark
 * and the engine's own tick. */
uint64_t seg_resume_total(bool have_ledger, uint64_t ledger_uj, const struct seg_value *visible, uint64_t hwm,
                          int64_t substep_ns, int64_t tick_ns);

/* The register count of counter value v at now_ns, before the wrap (seed + energy / unit), as a
 * read of its file computes it (raising its high-water mark); *wrap_bits and *unit_nj say how
 * the file shows it. Class M readers use it (seg_msr.h). */
uint64_t seg_counter_raw(struct seg *s, uint32_t v, int64_t now_ns, uint8_t *wrap_bits, uint32_t *unit_nj);
/* One whole copy of snapshot value v (the journal read, "Snapshot publication" above): false
 * when v is out of range. */
bool seg_value_load(const struct seg *s, uint32_t v, struct seg_value *out);
/* Quiet values ("Quiet values" above): does the node hold its own copy of quiet value v
 * (first_quiet <= v < n_values), by its bit, loaded with acquire. */
bool seg_quiet_own(const struct seg *s, uint32_t v);
/* Where value v (< n_values) stands now: its place in the node's copy, or, for a quiet value
 * whose bit is clear, the template's copy in the static file. Not the journal rule: the engine
 * reads its own values through it (it is their only writer), readers through seg_value_load. */
const struct seg_value *seg_value_at(const struct seg *s, uint32_t v);
/* The views' fallback while a publication does not end (seg_view_common.h view_latched): waits
 * up to SEG_PUBLISH_WAIT_NS for it to end and then calls read(values, ctx) with one publication;
 * past that (or at once for a generation this reader already waited out), with the snapshot's
 * values as they stand, each whole (the journal rule: again while the engine writes a value of
 * the copy). true, or false when one value stayed torn for SEG_LATCH_TRIES reads (an engine
 * killed in the middle of its store, seg_values_torn); read was then called with it anyway.
 * Writes only s->stuck_gen, the reader's own. */
bool seg_values_read(const struct seg *s, void (*read)(const struct seg_value *values, void *ctx), void *ctx);
/* Is a value of the copy torn and left so: a publication that does not end (gen odd) and the
 * journal's value, whole, not in its place (an engine killed inside its 64-byte store). Views
 * answer EIO then, until an engine starts on the file (seg_journal_heal). */
bool seg_values_torn(const struct seg *s);

/* --- agent side ---------------------------------------------------------------------------- */

/* Stores an already validated, normalised text in an A entry's slot (one store per call). */
void seg_slot_store(struct seg *s, uint32_t entry, const char *text, size_t len, int64_t now_ns);
/* Appends one write event (err 0 for accepted). Never blocks; a full ring overwrites. */
void seg_event_push(struct seg *s, uint32_t entry, int err, const char *text, size_t len, int64_t now_ns,
                    int pid);

/* --- engine side --------------------------------------------------------------------------- */

/* Publication ("Snapshot publication" above): begin (gen odd), seg_publish_value for each
 * changed value (through the journal), end (gen even, heartbeat now_ns). A value index out of
 * range is ignored. The engine reads its own values back from s->values (it is their only
 * writer). */
void seg_publish_begin(struct seg *s);
void seg_publish_value(struct seg *s, uint32_t v, const struct seg_value *val);
void seg_publish_end(struct seg *s, int64_t now_ns);
/* An engine taking over an existing file, before it publishes: puts the journal's value into its
 * place when a killed engine left it there whole and the copy's differs (a store cut short), if
 * the value's type is tmpl[v]'s (the template's values: an agent's forgery of another kind is
 * not taken), and continues the journal's sequence. */
void seg_journal_heal(struct seg *s, const struct seg_value *tmpl);

/* Reads one slot consistently: its sequence and text. Returns false when the slot has never
 * been written or a writer is mid-store. */
bool seg_slot_load(const struct seg *s, uint32_t slot, uint64_t *seq, char *text, size_t *len);
/* Consumes the next complete event after *tail; false when none. Counts lost events (a
 * producer lapped the ring) in *lost. A ring head behind *tail (the ring was reset) moves
 * *tail back to it. The event's entry is not checked here: the caller bounds it. */
bool seg_event_pop(struct seg *s, uint64_t *tail, struct seg_event *out, uint64_t *lost);

/* Writes the totals (n_counters entries) as ledger copy number seq (the last one plus 1). */
void seg_ledger_write(struct seg *s, uint64_t seq, const uint64_t *total_uj, int64_t wall_ns);
/* Copies the newest whole ledger copy (its n_counters totals, checked on the copy) into
 * total_uj and its sequence into *seq: true, or false when none is whole. */
bool seg_ledger_read(const struct seg *s, uint64_t *seq, uint64_t *total_uj);

/* Monotonic clock in ns (vDSO, no syscall). */
int64_t seg_now_ns(void);

#endif
