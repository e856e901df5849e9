#!/usr/bin/env bash
# /proc/cpuinfo as the kernel prints it (arch/x86/kernel/cpu/proc.c show_cpuinfo) and the
# cpufreq transition latency, read by Debian's own tools through both routes (preload and
# seccomp): lscpu 2.38.1 (Flags, BogoMIPS, Address sizes, Virtualization), cpupower 6.1
# frequency-info (maximum transition latency), python3-psutil 5.9.4 (cpu_freq per CPU, which
# needs one `cpu MHz` line per policy), and the file itself (the kernel's keys in order on a
# 384-CPU node, which takes a large view buffer).
# Where each expectation comes from (typed from the captures, not from the profiles):
#  - Flags lines: the /proc/cpuinfo captures the profiles cite, github.com/archspec/archspec-json
#    @90b453f4 tests/targets/linux-centos7-cascadelake (Xeon Platinum 8260M),
#    tests/targets/linux-rocky8.5-zen4 (EPYC 9654) and @a1e9ed31 tests/targets/
#    linux-rhel9-graniterapids (Xeon 6972P); lscpu prints the flags line as it is
#    (sys-utils/lscpu-cputype.c reads the "flags" key).
#  - BogoMIPS 4792.38 (9654) and 4800.00 (6972P): the same captures; 4800.00 on the 8260: its
#    2.40 GHz TSC / 500 (the kernel's bogomips from the TSC, arch/x86/kernel/tsc.c).
#  - Address sizes: 52/57 bits on the 9654 and 6972P (captures), 46/48 on Cascade Lake (the
#    8272CL capture of github.com/cutepig123/gitblog the profile cites).
#  - Virtualization: lscpu prints "AMD-V" for an svm flag and "VT-x" for vmx (lscpu.c).
#  - Transition latency: cpupower's frequency-info prints "%.1f us"-style durations and
#    "Cannot determine or is not supported." for 0 (what linrunner/TLP issue 764 shows for
#    amd-pstate-epp, and intel_pstate active sets no latency: the prometheus/procfs fixture's 0);
#    acpi-cpufreq on the EPYC profiles: 20000 ns, the driver's cap for FFH _PCT (assumed, the
#    profile says why), printed "20.0 us".
# Usage: test_cpuinfo.sh HWEMU_BINARY   (run from the source tree)
set -u
hwemu=$1
. "$(dirname "$0")/lib.sh"
tmp=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill -9 $pid 2>/dev/null; rm -rf "$tmp"' EXIT
for t in lscpu cpupower; do
    command -v "$t" >/dev/null || { bad "$t is not installed (scripts/install-deps.sh)"; finish; }
done
/usr/bin/python3 -c 'import psutil' 2>/dev/null || { bad "python3-psutil is not installed"; finish; }
port=$(free_port)
url=http://127.0.0.1:$port
serve_start "$url" "$tmp/err" --spec tests/specs/whole-static.yaml --root "$tmp/r" --addr 127.0.0.1:$port --tick 200ms ||
    { bad "serve did not come up: $(cat "$tmp/err")"; finish; }
X() { local node=$1; shift; "$hwemu" exec --root "$tmp/r" --node "$node-0" ${route:+--intercept $route} -- "$@"; }
# has TEXT LINE...: every LINE is a line of TEXT (fixed strings, whole lines)
has() { local text=$1 l; shift; for l in "$@"; do grep -qxF -- "$l" <<<"$text" || return 1; done; }
norm() { sed 's/  */ /g'; }   # lscpu pads its columns to the longest name

clx_flags='fpu vme de pse tsc msr pae mce cx8 apic sep mtrr pge mca cmov pat pse36 clflush dts acpi mmx fxsr sse sse2 ss ht tm pbe syscall nx pdpe1gb rdtscp lm constant_tsc art arch_perfmon pebs bts rep_good nopl xtopology nonstop_tsc aperfmperf eagerfpu pni pclmulqdq dtes64 monitor ds_cpl vmx smx est tm2 ssse3 sdbg fma cx16 xtpr pdcm pcid dca sse4_1 sse4_2 x2apic movbe popcnt tsc_deadline_timer aes xsave avx f16c rdrand lahf_lm abm 3dnowprefetch epb cat_l3 cdp_l3 intel_ppin intel_pt ssbd mba ibrs ibpb stibp ibrs_enhanced tpr_shadow vnmi flexpriority ept vpid fsgsbase tsc_adjust bmi1 hle avx2 smep bmi2 erms invpcid rtm cqm mpx rdt_a avx512f avx512dq rdseed adx smap clflushopt clwb avx512cd avx512bw avx512vl xsaveopt xsavec xgetbv1 cqm_llc cqm_occup_llc cqm_mbm_total cqm_mbm_local dtherm ida arat pln pts hwp hwp_act_window hwp_epp hwp_pkg_req pku ospke avx512_vnni md_clear spec_ctrl intel_stibp flush_l1d arch_capabilities'
genoa_flags='fpu vme de pse tsc msr pae mce cx8 apic sep mtrr pge mca cmov pat pse36 clflush mmx fxsr sse sse2 ht syscall nx mmxext fxsr_opt pdpe1gb rdtscp lm constant_tsc rep_good nopl nonstop_tsc cpuid extd_apicid aperfmperf pni pclmulqdq monitor ssse3 fma cx16 pcid sse4_1 sse4_2 x2apic movbe popcnt aes xsave avx f16c rdrand lahf_lm cmp_legacy svm extapic cr8_legacy abm sse4a misalignsse 3dnowprefetch osvw ibs skinit wdt tce topoext perfctr_core perfctr_nb bpext perfctr_llc mwaitx cpb cat_l3 cdp_l3 invpcid_single hw_pstate ssbd mba ibrs ibpb stibp vmmcall fsgsbase bmi1 avx2 smep bmi2 erms invpcid cqm rdt_a avx512f avx512dq rdseed adx smap avx512ifma clflushopt clwb avx512cd sha_ni avx512bw avx512vl xsaveopt xsavec xgetbv1 xsaves cqm_llc cqm_occup_llc cqm_mbm_total cqm_mbm_local avx512_bf16 clzero irperf xsaveerptr wbnoinvd amd_ppin arat npt lbrv svm_lock nrip_save tsc_scale vmcb_clean flushbyasid decodeassists pausefilter pfthreshold avic v_vmsave_vmload vgif v_spec_ctrl avx512vbmi umip pku ospke avx512_vbmi2 gfni vaes vpclmulqdq avx512_vnni avx512_bitalg avx512_vpopcntdq la57 rdpid overflow_recov succor smca fsrm flush_l1d sme sev sev_es'
gnr_flags='fpu vme de pse tsc msr pae mce cx8 apic sep mtrr pge mca cmov pat pse36 clflush dts acpi mmx fxsr sse sse2 ss ht tm pbe syscall nx pdpe1gb rdtscp lm constant_tsc art arch_perfmon pebs bts rep_good nopl xtopology nonstop_tsc cpuid aperfmperf tsc_known_freq pni pclmulqdq dtes64 monitor ds_cpl vmx smx est tm2 ssse3 sdbg fma cx16 xtpr pdcm pcid dca sse4_1 sse4_2 x2apic movbe popcnt tsc_deadline_timer aes xsave avx f16c rdrand lahf_lm abm 3dnowprefetch cpuid_fault epb cat_l3 cat_l2 cdp_l3 intel_ppin cdp_l2 ssbd mba ibrs ibpb stibp ibrs_enhanced tpr_shadow flexpriority ept vpid ept_ad fsgsbase tsc_adjust bmi1 avx2 smep bmi2 erms invpcid cqm rdt_a avx512f avx512dq rdseed adx smap avx512ifma clflushopt clwb intel_pt avx512cd sha_ni avx512bw avx512vl xsaveopt xsavec xgetbv1 xsaves cqm_llc cqm_occup_llc cqm_mbm_total cqm_mbm_local split_lock_detect avx_vnni avx512_bf16 wbnoinvd dtherm ida arat pln pts hwp hwp_act_window hwp_epp hwp_pkg_req hfi vnmi avx512vbmi umip pku ospke waitpkg avx512_vbmi2 gfni vaes vpclmulqdq avx512_vnni avx512_bitalg tme avx512_vpopcntdq la57 rdpid bus_lock_detect cldemote movdiri movdir64b enqcmd fsrm md_clear serialize tsxldtrk pconfig arch_lbr ibt amx_bf16 avx512_fp16 amx_tile amx_int8 flush_l1d arch_capabilities'
# The keys of one block, in show_cpuinfo's order (AMD: TLB size; Intel with VMX: vmx flags).
amd_keys="processor vendor_id cpu_family model model_name stepping microcode cpu_MHz cache_size physical_id siblings core_id cpu_cores apicid initial_apicid fpu fpu_exception cpuid_level wp flags bugs bogomips TLB_size clflush_size cache_alignment address_sizes power_management"
gnr_keys="processor vendor_id cpu_family model model_name stepping microcode cpu_MHz cache_size physical_id siblings core_id cpu_cores apicid initial_apicid fpu fpu_exception cpuid_level wp flags vmx_flags bugs bogomips clflush_size cache_alignment address_sizes power_management"
keys() { awk -F: 'NF == 0 || $0 == "" { exit } { k = $1; sub(/[ \t]+$/, "", k); gsub(/ /, "_", k); printf "%s%s", sep, k; sep = " " }'; }

for route in preload seccomp; do
    out=$(X clx lscpu 2>&1 | norm)
    has "$out" "Flags: $clx_flags" "BogoMIPS: 4800.00" "Address sizes: 46 bits physical, 48 bits virtual" \
        "Virtualization: VT-x" && ok || bad "$route: lscpu on the 8260 node: $(grep -E 'Flags|BogoMIPS|Address|Virtualization:' <<<"$out")"
    out=$(X genoa lscpu 2>&1 | norm)
    has "$out" "Flags: $genoa_flags" "BogoMIPS: 4792.38" "Address sizes: 52 bits physical, 57 bits virtual" \
        "Virtualization: AMD-V" && ok || bad "$route: lscpu on the 9654 node: $(grep -E 'Flags|BogoMIPS|Address|Virtualization:' <<<"$out")"
    out=$(X gnr lscpu 2>&1 | norm)
    has "$out" "Flags: $gnr_flags" "BogoMIPS: 4800.00" "Address sizes: 52 bits physical, 57 bits virtual" &&
        ok || bad "$route: lscpu on the 6972P node: $(grep -E 'Flags|BogoMIPS|Address' <<<"$out")"
    out=$(X vm lscpu 2>&1 | norm)
    grep -q "^Flags: .* hypervisor " <<<"$out" && ok || bad "$route: lscpu on the VM has no hypervisor flag: $(grep Flags <<<"$out")"

    # the whole file of the 384-CPU node (about 675 KB: a large view buffer) and its keys
    X genoa cat /proc/cpuinfo >"$tmp/ci" 2>&1
    n=$(grep -c '^processor' "$tmp/ci")
    [ "$n" = 384 ] && [ "$(wc -c <"$tmp/ci")" -gt 163840 ] && ok ||
        bad "$route: /proc/cpuinfo of the 9654 node: $n blocks, $(wc -c <"$tmp/ci") bytes: $(head -c 300 "$tmp/ci")"
    [ "$(keys <"$tmp/ci")" = "$amd_keys" ] && ok || bad "$route: 9654 cpuinfo keys: $(keys <"$tmp/ci")"
    [ "$(X gnr cat /proc/cpuinfo | keys)" = "$gnr_keys" ] && ok || bad "$route: 6972P cpuinfo keys: $(X gnr cat /proc/cpuinfo | keys)"

    for n in genoa:"maximum transition latency: 20.0 us" clx:"maximum transition latency: Cannot determine or is not supported." \
             turin:"maximum transition latency: Cannot determine or is not supported."; do
        out=$(X "${n%%:*}" cpupower -c 0 frequency-info 2>&1 | norm)
        grep -qF " ${n#*:}" <<<"$out" && ok || bad "$route: cpupower frequency-info on ${n%%:*}: $(grep latency <<<"$out")"
    done

    # psutil reads cpu MHz per CPU when there are as many lines as policies (psutil/_pslinux.py
    # cpu_freq): 384 of them, each within the policy's limits
    X genoa /usr/bin/python3 -c '
import psutil
f = psutil.cpu_freq(percpu=True)
assert len(f) == 384, len(f)
assert all(1500 <= x.current <= 3708 and x.min == 1500 and abs(x.max - 3707.812) < 0.01 for x in f), f[:3]
print("ok")' 2>&1 | grep -qx ok && ok || bad "$route: psutil cpu_freq on the 9654 node: $(X genoa /usr/bin/python3 -c 'import psutil; print(psutil.cpu_freq(percpu=True)[:2])' 2>&1)"
done
finish
