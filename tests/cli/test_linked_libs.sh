#!/usr/bin/env bash
# Programs LINKED against a GPU vendor's management library (DT_NEEDED, loaded by ld.so's own
# search, which no LD_PRELOAD wrapper sees) load the node's library on a node that has it and
# none where it lacks it, whatever the program's RPATH or the host's ld.so.cache say
# (shim/preload/audit.c, the LD_AUDIT module `hwemu exec` sets; docs/shim.md "Linked libraries").
# Three tiny programs are built here, each linked against one library name as a vendor's SDK
# would link it: libnvidia-ml.so.1 (NVML), librocm_smi64.so.7 (ROCm SMI 7), libamd_smi.so.26
# (AMD SMI 26). Each is linked against a stand-in "host" copy of its library (built here, the
# vendor's SONAME, answering a device count of 77) through DT_RPATH, which ld.so searches before
# LD_LIBRARY_PATH: the host's copy a GPU workstation has, which this host need not have. Each
# program prints the file the library was loaded from (dl_iterate_phdr, resolved) and NVML's
# device count. Then Debian's real nvidia-smi, which dlopens its library, on the same nodes.
# CI runs this test again with Debian's nvidia-smi and libnvidia-ml1 installed on the host
# (scripts/host-nvidia-check.sh), where the host's libnvidia-ml.so.1 is in ld.so.cache.
# Where the expected values come from:
#  - a node's library: the build's libhwemu-nvml.so, libhwemu-rocmsmi.so, libhwemu-amdsmi.so
#    (`hwemu exec` links <root>/<node>.lib's names to them); the H100 node's device count: its
#    /telemetry gpu.count (the profile's 8 GPUs);
#  - a library the node lacks: glibc's ld.so message "error while loading shared libraries:
#    <name>: cannot open shared object file: No such file or directory" and exit 127, as on a
#    machine without the library;
#  - the MI300X node's GPU count for ROCm SMI: its /telemetry gpu.count (8, as the H100's);
#  - nvidia-smi: on the H100 node the node's 8 GPUs (`-L`); on the Intel node what the real
#    program prints without its library, "NVIDIA-SMI couldn't find libnvidia-ml.so library in
#    your system." and exit 12 (tests/cli/test_host_devices.sh).
# Usage: test_linked_libs.sh HWEMU_BINARY   (run from the source tree)
set -u
hwemu=$1
. "$(dirname "$0")/lib.sh"
build=$(cd "$(dirname "$hwemu")" && pwd)
tmp=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill $pid 2>/dev/null; rm -rf "$tmp"' EXIT
command -v gcc >/dev/null || { bad "gcc is missing (scripts/install-deps.sh)"; finish; }
scripts/fetch-nvidia-smi.sh "$build/nvidia-tools" || { bad "cannot fetch Debian's nvidia-smi (scripts/fetch-nvidia-smi.sh)"; finish; }
smi=$build/nvidia-tools/nvidia-smi/usr/lib/nvidia/current/nvidia-smi
cat >"$tmp/spec.yaml" <<'EOF'
apiVersion: sim.joulie.io/v1alpha1
kind: ClusterSpec
metadata: {name: linked-libs}
spec:
  pools:
  - {name: intel, profile: intel-xeon-2s-rapl, count: 1}
  - {name: h100, profile: nvidia-h100-sxm-8gpu, count: 1}
  - {name: mi300x, profile: amd-instinct-mi300x-8gpu, count: 1}
EOF
port=$(free_port)
serve_start http://127.0.0.1:$port "$tmp/err" --spec "$tmp/spec.yaml" --root "$tmp/r" --addr 127.0.0.1:$port --tick 500ms ||
    { bad "serve: $(cat "$tmp/err")"; finish; }

# the stand-in host libraries: the vendor's SONAME, every entry point the programs call
mkdir -p "$tmp/host"
cat >"$tmp/host.c" <<'C'
int nvmlInit_v2(void) { return 0; }
int nvmlDeviceGetCount_v2(unsigned *n) { *n = 77; return 0; }
int nvmlShutdown(void) { return 0; }
int rsmi_init(unsigned long flags) { (void)flags; return 0; }
int amdsmi_init(unsigned long flags) { (void)flags; return 0; }
C
for so in libnvidia-ml.so.1 librocm_smi64.so.7 libamd_smi.so.26; do
    gcc -shared -fPIC -Wl,-soname,$so -o "$tmp/host/$so" "$tmp/host.c" && ln -sf $so "$tmp/host/${so%.so.*}.so" ||
        bad "building the stand-in $so"
done
# prog.c: the loaded file of the library whose name has LIB in it, and NVML's device count
cat >"$tmp/prog.c" <<'C'
#define _GNU_SOURCE
#include <link.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int nvmlInit_v2(void);
int nvmlDeviceGetCount_v2(unsigned *);
int rsmi_init(unsigned long);
int amdsmi_init(unsigned long);
static int found(struct dl_phdr_info *i, size_t size, void *lib)
{
    (void)size;
    char real[PATH_MAX];
    if (strstr(i->dlpi_name, lib))
        printf("loaded %s\n", realpath(i->dlpi_name, real) ? real : i->dlpi_name);
    return 0;
}
int main(void)
{
#if defined NVML
    unsigned n = 0;
    nvmlInit_v2();
    nvmlDeviceGetCount_v2(&n);
    printf("count %u\n", n);
    dl_iterate_phdr(found, "libnvidia-ml");
#elif defined ROCM
    rsmi_init(0);
    dl_iterate_phdr(found, "librocm_smi64");
#else
    amdsmi_init(0);
    dl_iterate_phdr(found, "libamd_smi");
#endif
    return 0;
}
C
rp="-Wl,--disable-new-dtags,-rpath,$tmp/host -L$tmp/host"
gcc -DNVML -o "$tmp/nvml" "$tmp/prog.c" $rp -lnvidia-ml &&
    gcc -DROCM -o "$tmp/rocm" "$tmp/prog.c" $rp -lrocm_smi64 &&
    gcc -o "$tmp/amdsmi" "$tmp/prog.c" $rp -lamd_smi || { bad "building the linked programs"; finish; }
# the stand-in is what the programs load outside a node (the test's premise)
[ "$("$tmp/nvml" | head -1)" = "count 77" ] && ok || bad "outside a node: $("$tmp/nvml" 2>&1)"

X() { "$hwemu" exec --root "$tmp/r" --node "$@"; }
gpus=$(curl -sf http://127.0.0.1:$port/telemetry/h100-0 | python3 -c 'import json, sys; print(json.load(sys.stdin)["gpu"]["count"])')
[ "$gpus" = 8 ] && ok || bad "the H100 node's gpu.count: $gpus"
# expect NODE PROG WANT: WANT is the node's library (the loaded file and, for NVML, its count)
# or "missing SONAME" (ld.so's message, exit 127); ARGS before PROG run it under env -i or
# --intercept seccomp
expect() {
    local node=$1 prog=$2 want=$3 out rc
    shift 3
    out=$(X $node "$@" -- "$tmp/$prog" 2>&1)
    rc=$?
    case $want in
    missing*)
        [ $rc = 127 ] && grep -qF "error while loading shared libraries: ${want#missing }: cannot open shared object file: No such file or directory" <<<"$out" &&
            ok || bad "$node $* $prog: want ${want#missing } missing (127), got $rc: $out" ;;
    *)
        [ $rc = 0 ] && grep -qx "loaded $build/$want" <<<"$out" && { [ $prog != nvml ] || grep -qx "count $gpus" <<<"$out"; } &&
            ok || bad "$node $* $prog: want $want, got $rc: $out" ;;
    esac
}
expect h100-0 nvml libhwemu-nvml.so
expect h100-0 rocm "missing librocm_smi64.so.7"
expect h100-0 amdsmi "missing libamd_smi.so.26"
expect mi300x-0 nvml "missing libnvidia-ml.so.1"
expect mi300x-0 rocm libhwemu-rocmsmi.so
expect mi300x-0 amdsmi libhwemu-amdsmi.so
expect intel-0 nvml "missing libnvidia-ml.so.1"
expect intel-0 rocm "missing librocm_smi64.so.7"
expect intel-0 amdsmi "missing libamd_smi.so.26"
# a program started with an emptied environment (LD_LIBRARY_PATH gone too: the shim's exec
# wrappers put HWEMU_*, LD_PRELOAD and LD_AUDIT back), and the seccomp route
X h100-0 -- env -i "$tmp/nvml" >"$tmp/envi" 2>&1 && grep -qx "loaded $build/libhwemu-nvml.so" "$tmp/envi" &&
    grep -qx "count $gpus" "$tmp/envi" && ok || bad "env -i on h100-0: $(cat "$tmp/envi")"
X intel-0 -- env -i "$tmp/nvml" >"$tmp/envi" 2>&1
[ $? = 127 ] && grep -qF "libnvidia-ml.so.1: cannot open shared object file" "$tmp/envi" && ok || bad "env -i on intel-0: $(cat "$tmp/envi")"
expect h100-0 nvml libhwemu-nvml.so --intercept seccomp
expect intel-0 nvml "missing libnvidia-ml.so.1" --intercept seccomp

# The seccomp route alone (the shim and the audit module dropped: ld.so's opens reach the
# supervisor): a dlopen of AMD's libraries by the paths AMD's clients use, /opt/rocm/lib/..., on
# the MI300X node maps the node's (shim/supervisor/sv_answer.c node_library_open), whose
# rsmi_num_monitor_devices counts the node's GPUs; on the Intel node they are absent (ENOENT,
# ld.so's message naming the path)
cat >"$tmp/bypath.py" <<'EOF'
import ctypes, sys
try:
    lib = ctypes.CDLL(sys.argv[1])
except OSError as e:
    print("error", e)
    sys.exit(0)
maps = [l.split()[-1] for l in open("/proc/self/maps") if "libhwemu-" in l]
print("mapped", sorted(set(maps)))
if hasattr(lib, "rsmi_init"):
    n = ctypes.c_uint32()
    lib.rsmi_init(ctypes.c_uint64(0)); lib.rsmi_num_monitor_devices(ctypes.byref(n))
    print("count", n.value)
EOF
for so in libamd_smi.so librocm_smi64.so.7; do
    f=libhwemu-amdsmi.so; [ $so = libamd_smi.so ] || f=libhwemu-rocmsmi.so
    out=$(X mi300x-0 --intercept seccomp -- env -u LD_PRELOAD -u LD_AUDIT python3 "$tmp/bypath.py" /opt/rocm/lib/$so 2>&1)
    grep -qF "mapped ['$build/$f']" <<<"$out" && { [ $so = libamd_smi.so ] || grep -qx "count $gpus" <<<"$out"; } && ok ||
        bad "seccomp route, mi300x-0, dlopen /opt/rocm/lib/$so: $out"
    out=$(X intel-0 --intercept seccomp -- env -u LD_PRELOAD -u LD_AUDIT python3 "$tmp/bypath.py" /opt/rocm/lib/$so 2>&1)
    grep -qF "error /opt/rocm/lib/$so: cannot open shared object file: No such file or directory" <<<"$out" && ok ||
        bad "seccomp route, intel-0, dlopen /opt/rocm/lib/$so: $out"
done

# Debian's nvidia-smi (dlopens libnvidia-ml.so.1 by name, then by its fallback paths)
out=$(X h100-0 -- "$smi" -L 2>&1)
[ "$(grep -c '^GPU [0-9]*: NVIDIA H100' <<<"$out")" = "$gpus" ] && ok || bad "nvidia-smi -L on h100-0: $out"
out=$(X intel-0 -- "$smi" 2>&1)
rc=$?
[ $rc = 12 ] && grep -qF "NVIDIA-SMI couldn't find libnvidia-ml.so library in your system." <<<"$out" && ok ||
    bad "nvidia-smi on intel-0: exit $rc: $out"
finish
