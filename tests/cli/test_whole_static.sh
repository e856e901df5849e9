#!/usr/bin/env bash
# The emulated machine's structure, read by Debian's own tools through both routes (preload and
# seccomp): lscpu (summary, -e, -C), numactl --hardware and --show, hwloc's lstopo-no-graphics
# (without --whole-system), a static program's /proc/self/status and raw sched_getaffinity
# (tests/exec/machine_probe.c, seccomp), lspci -nn -vk, Debian's rocm-smi 5.2.3 with librocm_smi64 (reads, and --setpoweroverdrive on the MI300X
# and the W7900), a cd into an emulated directory under dash, and stat times.
# Where each expectation comes from:
#  - CPU counts, caches, NUMA lists: the profiles' sourced facts (Intel ARK and support article
#    000027820 for the 8260; AMD's EPYC 9004 architecture paper for the 9654), turned into the
#    numbers lscpu 2.38.1 prints by its own rules (sys-utils/lscpu.c: a cache's total is its size
#    times its distinct ids) and the kernel's CPU numbering (arch/x86/kernel/cpu/topology.c:
#    first threads socket by socket, then the second threads), e.g. "L3 cache: 768 MiB (24
#    instances)" for two 9654 and node0 = 0-95,192-287.
#  - numactl 2.0.16's layout (numactl.c print_distances: "node " then "% 3d " columns) and the
#    SLITs: 10/21 on two-socket Xeons (ACPI SLIT), 10/32 on two EPYC sockets in NPS1
#    (github.com/egandro/proxmox-cpu-affinity issue 58).
#  - /proc/self/status: fs/proc/array.c task_cpus_allowed and kernel/cgroup/cpuset.c
#    cpuset_task_status_allowed print "%*pb" (lib/vsprintf.c bitmap_string: 32-bit groups, most
#    significant first) over nr_cpu_ids bits (384 here: 12 groups of ffffffff) and MAX_NUMNODES
#    bits (1024: 31 groups of 00000000, then 00000003), and "%*pbl" lists; numactl 2.0.16
#    (numactl.c show(), print_node_cpus) prints every CPU of node 0 (0-95 and 192-287 on two
#    9654 in NPS1) once libnuma's masks are as wide as the node's: what a real 2x9654 prints for
#    an unrestricted process; hwloc drops the PUs outside the cgroup's cpuset, which is the
#    whole node on a machine where no one restricted the agent.
#  - lspci: Debian 12's pci.ids names (1a03:2000 "ASPEED Graphics Family", 10de:2330
#    "GH100[H100 SXM5 80GB]", no name for 1002:74a1), pciutils 3.9 lspci.c formats.
#  - rocm-smi 5.2.3 (rocm_smi.py 1.4.1): the MI300X (SMU 13.0.6) has no power1_average, so
#    --showpower says N/A as on the real node (Linux 6.12 amdgpu_pm.c); the W7900 shows it; the
#    W7900's cap is pinned at 241 W (its min and max), so 200 W is refused with "Value cannot be
#    less than: 241W".
# Usage: test_whole_static.sh HWEMU_BINARY   (run from the source tree)
set -u
hwemu=$1
. "$(dirname "$0")/lib.sh"
tmp=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill -9 $pid 2>/dev/null; rm -rf "$tmp"' EXIT
for t in lscpu numactl lstopo-no-graphics lspci dash /usr/bin/rocm-smi gcc; do
    command -v "$t" >/dev/null || { bad "$t is not installed (scripts/install-deps.sh)"; finish; }
done
gcc -static -O2 -o "$tmp/probe" tests/exec/machine_probe.c 2>"$tmp/ccerr" || { bad "machine_probe: $(cat "$tmp/ccerr")"; finish; }
port=$(free_port)
url=http://127.0.0.1:$port
serve_start "$url" "$tmp/err" --spec tests/specs/whole-static.yaml --root "$tmp/r" --addr 127.0.0.1:$port --tick 200ms ||
    { bad "serve did not come up: $(cat "$tmp/err")"; finish; }
X() { local node=$1; shift; "$hwemu" exec --root "$tmp/r" --node "$node-0" ${route:+--intercept $route} -- "$@"; }
# has TEXT LINE...: every LINE is a line of TEXT (fixed strings, whole lines)
has() { local text=$1 l; shift; for l in "$@"; do grep -qxF -- "$l" <<<"$text" || return 1; done; }
norm() { sed 's/  */ /g'; }   # lscpu pads its columns to the longest name

for route in preload seccomp; do
    out=$(X clx lscpu 2>&1 | norm)
    has "$out" "Vendor ID: GenuineIntel" "Model name: Intel(R) Xeon(R) Platinum 8260 CPU @ 2.40GHz" \
        "Thread(s) per core: 2" "Core(s) per socket: 24" "Socket(s): 2" "L1d cache: 1.5 MiB (48 instances)" \
        "L1i cache: 1.5 MiB (48 instances)" "L2 cache: 48 MiB (48 instances)" "L3 cache: 71.5 MiB (2 instances)" \
        "NUMA node(s): 2" "NUMA node0 CPU(s): 0-23,48-71" "NUMA node1 CPU(s): 24-47,72-95" &&
        ok || bad "$route: lscpu on the 8260 node: $out"
    out=$(X genoa lscpu 2>&1 | norm)
    has "$out" "Model name: AMD EPYC 9654 96-Core Processor" "Thread(s) per core: 2" "Core(s) per socket: 96" \
        "Socket(s): 2" "L1d cache: 6 MiB (192 instances)" "L2 cache: 192 MiB (192 instances)" \
        "L3 cache: 768 MiB (24 instances)" "NUMA node0 CPU(s): 0-95,192-287" "NUMA node1 CPU(s): 96-191,288-383" &&
        ok || bad "$route: lscpu on the 9654 node: $out"
    out=$(X genoa lscpu -C 2>&1 | norm)
    has "$out" "L1d 32K 6M 8 Data 1 64 1 64" "L2 1M 192M 8 Unified 2 2048 1 64" "L3 32M 768M 16 Unified 3 32768 1 64" &&
        ok || bad "$route: lscpu -C on the 9654 node: $out"
    # CPU 16 is the first of the third CCX; CPU 288 the second thread of CPU 96 (socket 1, core 0)
    out=$(X genoa lscpu -e=CPU,NODE,SOCKET,CORE,CACHE 2>&1 | norm)
    has "$out" " 16 0 0 16 16:16:16:2" "288 1 1 96 128:128:128:16" && ok || bad "$route: lscpu -e: $(head -3 <<<"$out")"
    out=$(X vm lscpu 2>&1 | norm)
    has "$out" "Socket(s): 8" "Core(s) per socket: 1" "L3 cache: 176 MiB (8 instances)" "NUMA node0 CPU(s): 0-7" &&
        ok || bad "$route: lscpu on the VM: $out"
    out=$(X clx numactl --hardware 2>&1)
    has "$out" "available: 2 nodes (0-1)" "node 0 size: 386678 MB" "node distances:" "node   0   1 " "  0:  10  21 " \
        "  1:  21  10 " && ok || bad "$route: numactl on the 8260 node: $out"
    # the 384-CPU node: libnuma's masks are sized from the raw sched_getaffinity and
    # /proc/self/status, so every cpus line is complete and nothing warns "Cannot parse cpumap"
    out=$(X genoa numactl --hardware 2>&1)
    has "$out" "available: 2 nodes (0-1)" "node 0 cpus: $(seq -s' ' 0 95) $(seq -s' ' 192 287)" \
        "node 1 cpus: $(seq -s' ' 96 191) $(seq -s' ' 288 383)" "  0:  10  32 " "  1:  32  10 " &&
        ! grep -q "Cannot parse" <<<"$out" && ok || bad "$route: numactl on the 9654 node: $out"
    out=$(X genoa numactl --show 2>&1)
    has "$out" "physcpubind: $(seq -s' ' 0 383) " "cpubind: 0 1 " "nodebind: 0 1 " "membind: 0 1 " &&
        ok || bad "$route: numactl --show on the 9654 node: $out"
    out=$(X genoa grep _allowed /proc/self/status 2>&1)
    has "$out" "Cpus_allowed:	$(printf 'ffffffff,%.0s' {1..11})ffffffff" "Cpus_allowed_list:	0-383" \
        "Mems_allowed:	$(printf '00000000,%.0s' {1..31})00000003" "Mems_allowed_list:	0-1" &&
        ok || bad "$route: /proc/self/status on the 9654 node: $out"
    # hwloc: two packages, 24 L3 (one per CCX), 192 cores, 384 PUs, whatever the host has; every
    # PU shows without --whole-system (the cgroup cpuset hwloc reads is the node's)
    out=$(X genoa lstopo-no-graphics --of console 2>&1)
    [ "$(grep -c 'Package L#' <<<"$out")" = 2 ] && [ "$(grep -c ' L3 L#' <<<"$out")" = 24 ] &&
        [ "$(grep -c 'PU L#' <<<"$out")" = 384 ] && grep -q 'NUMANode L#1 (P#1' <<<"$out" && ok ||
        bad "$route: lstopo on the 9654 node: $(head -20 <<<"$out")"
    out=$(X mi300x lspci -nn 2>&1)
    [ "$(wc -l <<<"$out")" = 9 ] &&
        has "$out" "02:00.0 VGA compatible controller [0300]: ASPEED Technology, Inc. ASPEED Graphics Family [1a03:2000] (rev 52)" \
            "10:00.0 Processing accelerators [1200]: Advanced Micro Devices, Inc. [AMD/ATI] Device [1002:74a1]" &&
        ok || bad "$route: lspci -nn on the MI300X node: $out"
    out=$(X mi300x lspci -nn -vk -s 17:00.0 2>&1)
    has "$out" $'\tSubsystem: Advanced Micro Devices, Inc. [AMD/ATI] Device [1002:74a1]' \
        $'\tFlags: bus master, fast devsel, latency 0, IRQ 39, NUMA node 1' $'\tKernel driver in use: amdgpu' &&
        grep -q $'^\tMemory at [0-9a-f]* (64-bit, prefetchable) \\[size=256G\\]$' <<<"$out" &&
        grep -q $'^\tCapabilities: \\[50\\] Express Endpoint, MSI 00$' <<<"$out" && ok || bad "$route: lspci -vk MI300X: $out"
    out=$(X sxm lspci -vk -s 10:00.0 2>&1)
    has "$out" "10:00.0 3D controller: NVIDIA Corporation GH100[H100 SXM5 80GB] (rev a1)" \
        $'\tSubsystem: NVIDIA Corporation Device 16c1' $'\tKernel driver in use: nvidia' && ok || bad "$route: lspci H100: $out"
    # the 8260 node: the BMC's Matrox, then each socket's 26 memory controller functions on buses
    # 0x36 and 0xae (docs/whole-node.md "The uncore's PCI functions"; their ids are checked against
    # the DL380 Gen10 listing by test_msr_tools.sh), named by Debian's pci.ids
    out=$(X clx lspci -nn 2>&1)
    [ "$(head -1 <<<"$out")" = "02:00.0 VGA compatible controller [0300]: Matrox Electronics Systems Ltd. Integrated Matrox G200eW3 Graphics Controller [102b:0536] (rev 04)" ] &&
        [ "$(grep -c '^36:' <<<"$out")" = 26 ] && [ "$(grep -c '^ae:' <<<"$out")" = 26 ] && [ "$(wc -l <<<"$out")" = 53 ] &&
        has "$out" "36:0a.2 System peripheral [0880]: Intel Corporation Sky Lake-E Integrated Memory Controller [8086:2042] (rev 07)" &&
        ok || bad "$route: lspci on the CPU-only 8260 node: $out"
    out=$(X clx lspci -vk -s ae:0d.2 2>&1)
    has "$out" $'\tSubsystem: Hewlett Packard Enterprise Device 00ea' $'\tFlags: fast devsel, NUMA node 1' \
        $'\tCapabilities: [40] Express Root Complex Integrated Endpoint, MSI 00' $'\tKernel driver in use: skx_uncore' &&
        ok || bad "$route: lspci -vk ae:0d.2 on the 8260 node: $out"
    # hwloc puts each socket's uncore functions under its package (their local_cpus)
    # (lstopo folds identical neighbours: "2 x { PCI 36:08.0-09.0 (SystemPeripheral) }")
    out=$(X clx lstopo-no-graphics --whole-io -p 2>&1)
    [ "$(awk '/Package P#/ { p = $2 } /PCI (36|ae):/ { n = $2 == "x" ? $1 : 1; c[p, $0 ~ /PCI 36:/ ? "36" : "ae"] += n }
        END { print c["P#0", "36"] + 0, c["P#1", "ae"] + 0 }' <<<"$out")" = "26 26" ] &&
        ok || bad "$route: lstopo --whole-io on the 8260 node, uncore functions not 26 under each package: $(grep -E 'Package|PCI' <<<"$out" | head -12)"
    out=$(X clx dash -c 'cd /sys/class/powercap/intel-rapl:1 && cat name && cd ../intel-rapl:0 && cat name' 2>&1)
    [ "$out" = $'package-1\npackage-0' ] && ok || bad "$route: cd under dash: $out"
    # openat relative to a real descriptor of the host's /proc and /sys (what lscpu and libudev do)
    out=$(X clx /usr/bin/python3 -c 'import os
p = os.open("/proc", os.O_RDONLY | os.O_DIRECTORY)
print(os.read(os.open("cpuinfo", os.O_RDONLY, dir_fd=p), 200).decode().split("\n")[1])
s = os.open("/sys", os.O_RDONLY | os.O_DIRECTORY)
print(os.read(os.open("devices/system/cpu/cpu95/topology/core_siblings_list", os.O_RDONLY, dir_fd=s), 99).decode().strip())' 2>&1)
    [ "$out" = $'vendor_id\t: GenuineIntel\n24-47,72-95' ] && ok || bad "$route: openat relative to /proc and /sys: $out"
    # lm-sensors names the two HSMP sockets apart (a platform device per socket)
    out=$(X turin sensors 2>&1)
    has "$out" "amd_hsmp_hwmon-isa-0000" "amd_hsmp_hwmon-isa-0001" && ok || bad "$route: sensors HSMP: $out"
    out=$(X mi300x sensors -j amdgpu-pci-1000 2>&1)
    grep -q '"temp2_crit": 110.000' <<<"$out" && grep -q '"in0_input": 0.800' <<<"$out" && ok || bad "$route: sensors amdgpu: $out"
    out=$(X clx stat -c %Y /sys/devices/system/cpu/cpu0/topology/core_id 2>&1)
    [ "$out" -gt 1500000000 ] 2>/dev/null && ok || bad "$route: stat time of an emulated file: $out"
done
route=

# A static program under the supervisor alone (no shim in it): its own status file, a cgroup's
# cpuset and the raw sched_getaffinity are the node's.
out=$("$hwemu" exec --root "$tmp/r" --node clx-0 --intercept seccomp -- "$tmp/probe" /sys/fs/cgroup/cpuset.cpus.effective \
    /sys/fs/cgroup/x/cpuset.mems 2>&1)
has "$out" "Name:	probe" "Cpus_allowed:	ffffffff,ffffffff,ffffffff" "Cpus_allowed_list:	0-95" \
    "Mems_allowed:	$(printf '00000000,%.0s' {1..31})00000003" "Mems_allowed_list:	0-1" \
    "/sys/fs/cgroup/cpuset.cpus.effective: 0-95" "/sys/fs/cgroup/x/cpuset.mems: 0-1" \
    "sched_getaffinity: 16 bytes, 96 CPUs" && ok || bad "seccomp: a static program's machine: $out"

# Debian's rocm-smi 5.2.3 (a Python script over librocm_smi64): the MI300X and the W7900.
R() { local node=$1; shift; X "$node" /usr/bin/rocm-smi "$@" 2>&1; }
out=$(R mi300x --showuse --showmaxpower --showtemp --showclocks -d 0)
grep -qx $'GPU\\[0\\]\t\t: GPU use (%): [0-9]*' <<<"$out" && has "$out" $'GPU[0]\t\t: Max Graphics Package Power (W): 750.0' &&
    grep -qx $'GPU\\[0\\]\t\t: Temperature (Sensor junction) (C): [0-9.]*' <<<"$out" &&
    grep -qx $'GPU\\[0\\]\t\t: sclk clock level: [0-9]*: ([0-9]*Mhz)' <<<"$out" && ok || bad "rocm-smi MI300X reads: $out"
out=$(R mi300x --showpower -d 0)
has "$out" $'GPU[0]\t\t: Average Graphics Package Power (W): N/A' && ok || bad "rocm-smi MI300X power: $out"
out=$(R w7900 --showpower -d 0)
grep -qx $'GPU\\[0\\]\t\t: Average Graphics Package Power (W): [0-9.]*' <<<"$out" && ok || bad "rocm-smi W7900 power: $out"
out=$(R mi300x --setpoweroverdrive 500 -d 0 --autorespond y)
has "$out" $'GPU[0]\t\t: Successfully set power to: 500W' &&
    [ "$("$hwemu" cat --root "$tmp/r" --node mi300x-0 /sys/class/drm/card1/device/hwmon/hwmon2/power1_cap)" = 500000000 ] &&
    ok || bad "rocm-smi MI300X cap: $out"
out=$(R w7900 --setpoweroverdrive 200 -d 0 --autorespond y)
grep -q 'Value cannot be less than: 241W' <<<"$out" && ok || bad "rocm-smi W7900 200 W: $out"
out=$(R w7900 --setpoweroverdrive 241 -d 0 --autorespond y)
has "$out" $'GPU[0]\t\t: Successfully set power to: 241W' && ok || bad "rocm-smi W7900 241 W: $out"
finish
