#!/usr/bin/env bash
# A node shows exactly its own devices and GPU driver libraries, whatever the host has
# (shim/emu/emu_hide.h): on an Intel node, a VM, an AMD CPU node, an NVIDIA H100 node and an AMD
# MI300X node, on both routes (the shim, and --intercept=seccomp, where ld.so's own search goes
# through the supervisor), a Python probe lists /dev and globs /dev/nvidia*, stats and opens
# each device path of the emulated classes and loads the NVIDIA and AMD libraries by name and by
# path; and Debian's real nvidia-smi runs on each node. CI runs this test once more with Debian's
# nvidia-smi and libnvidia-ml1 installed on the host (scripts/host-nvidia-check.sh), where the
# host's /usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1 and /usr/bin/nvidia-smi must stay invisible
# on every node but the NVIDIA one; on any host its /dev/cpu/<n>/cpuid (the cpuid driver) and
# librocm_smi64 (Debian's rocm-smi, a test dependency) must.
# Usage: test_host_devices.sh HWEMU_BINARY   (run from the source tree)
#
# Where the expected values come from:
#  - a node's devices: its segment (`hwemu files --node N dev/`, what the renderer made: MSR
#    devices, /dev/ipmi0 of a bare-metal node, /dev/nvidiactl of an NVIDIA node, char 195:255 as
#    the NVIDIA driver makes it); every other name of those classes is absent (ENOENT), and
#    /dev/null (char 1:3) is the host's;
#  - a library the node has: loaded (by path on the NVIDIA node: its NVML, whatever the host has
#    there), its file there as the host has it; one it lacks: absent, and glibc's ld.so message "<name>: cannot open shared object file: No such
#    file or directory" (dlerror, as ctypes reports it);
#  - nvidia-smi without libnvidia-ml: the real program run on this host without the library
#    prints "NVIDIA-SMI couldn't find libnvidia-ml.so library in your system." and exits 12 (the
#    same check as tests/cli/test_nvml.sh); on the H100 node it lists the node's 8 GPUs (its NVML,
#    docs/nvml.md).
set -u
hwemu=$1
. "$(dirname "$0")/lib.sh"
build=$(cd "$(dirname "$hwemu")" && pwd)
tmp=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill $pid 2>/dev/null; rm -rf "$tmp"' EXIT
scripts/fetch-nvidia-smi.sh "$build/nvidia-tools" || { bad "cannot fetch Debian's nvidia-smi (scripts/fetch-nvidia-smi.sh)"; finish; }
smi=$build/nvidia-tools/nvidia-smi/usr/lib/nvidia/current/nvidia-smi
cat >"$tmp/spec.yaml" <<'EOF'
apiVersion: sim.joulie.io/v1alpha1
kind: ClusterSpec
metadata: {name: host-devices}
spec:
  pools:
  - {name: intel, profile: intel-xeon-2s-rapl, count: 1}
  - {name: vm, profile: vm-no-powercap, count: 1}
  - {name: epyc, profile: amd-epyc-2s-hsmp, count: 1}
  - {name: h100, profile: nvidia-h100-sxm-8gpu, count: 1}
  - {name: mi300x, profile: amd-instinct-mi300x-8gpu, count: 1}
EOF
port=$(free_port)
serve_start http://127.0.0.1:$port "$tmp/err" --spec "$tmp/spec.yaml" --root "$tmp/r" --addr 127.0.0.1:$port --tick 500ms ||
    { bad "serve: $(cat "$tmp/err")"; finish; }
py=/usr/bin/python3
rocm=$(ls /usr/lib/librocm_smi64.so.1 /usr/lib/x86_64-linux-gnu/librocm_smi64.so.1 2>/dev/null | head -1)
[ -n "$rocm" ] || bad "no librocm_smi64.so.1 on the host (Debian's rocm-smi, scripts/install-deps.sh)"
echo "host: $(ls -d /dev/nvidia* /dev/dri /dev/kfd /dev/cpu/0/* /dev/ipmi* /dev/hsmp 2>/dev/null | tr '\n' ' ')" \
    "$(ls /usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1 2>/dev/null) $(command -v nvidia-smi)"

cat >"$tmp/probe.py" <<'EOF'
import ctypes, glob, json, os, stat, sys
classes = lambda n: n.startswith(("nvidia", "ipmi")) or n in ("dri", "kfd", "cpu", "hsmp")
def state(p):
    try:
        st = os.stat(p)
    except OSError as e:
        return os.strerror(e.errno)
    if stat.S_ISCHR(st.st_mode):
        return "chr %d:%d" % (os.major(st.st_rdev), os.minor(st.st_rdev))
    return "dir" if stat.S_ISDIR(st.st_mode) else "file"
def opened(p):
    try:
        os.close(os.open(p, os.O_RDONLY | os.O_NONBLOCK))
        return "ok"
    except OSError as e:
        return os.strerror(e.errno)
def load(name):
    try:
        ctypes.CDLL(name)
        return "loaded"
    except OSError as e:
        return str(e)
out = {"dev": sorted(n for n in os.listdir("/dev") if classes(n)),
       "glob": sorted(glob.glob("/dev/nvidia*") + glob.glob("/dev/dri/*") + glob.glob("/dev/ipmi*")),
       "cpu0": sorted(os.listdir("/dev/cpu/0")) if os.path.isdir("/dev/cpu/0") else None,
       "stat": {p: state(p) for p in sys.argv[1].split()},
       "open": {p: opened(p) for p in sys.argv[1].split() if not p.endswith("msr")},
       "lib": {n: load(n) for n in sys.argv[2].split()},
       "libfile": {n: os.path.exists(n) for n in sys.argv[2].split() if n.startswith("/")}}
print(json.dumps(out, sort_keys=True))
EOF
devs="/dev/null /dev/nvidiactl /dev/nvidia0 /dev/nvidia-uvm /dev/dri /dev/dri/card0 /dev/kfd /dev/hsmp /dev/ipmi0 /dev/cpu/0/msr /dev/cpu/0/cpuid"
libs="libnvidia-ml.so.1 /usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1 libcuda.so.1 librocm_smi64.so.1 ${rocm:-/usr/lib/librocm_smi64.so.1}"

# expect NODE: the probe's answers the node's segment predicts, as JSON (see the top).
expect() {
    "$hwemu" files --root "$tmp/r" --node "$1" dev/ | "$py" -c '
import json, os, sys
node, devs, libs = sys.argv[1], sys.argv[2].split(), sys.argv[3].split()
kinds = {}
for line in sys.stdin:
    f = line.split()
    kinds["/" + f[3]] = f[1]
nvidia, amd = node.startswith("h100"), node.startswith("mi300x")
def state(p):
    if p == "/dev/null":
        return "chr 1:3"
    if p not in kinds:
        return "No such file or directory"
    if kinds[p] == "dir":
        return "dir"
    return {"/dev/nvidiactl": "chr 195:255", "/dev/ipmi0": "chr %d:0" % 239}.get(p, "chr 202:0")
missing = "%s: cannot open shared object file: No such file or directory"
def lib(n):
    ok = ("libnvidia-ml" in n and nvidia) or ("rocm_smi" in n and amd)
    return "loaded" if ok else missing % n
top = sorted({p.split("/")[2] for p in kinds})
out = {"dev": top,
       "glob": sorted(p for p in kinds if p.startswith(("/dev/nvidia", "/dev/dri/", "/dev/ipmi"))),
       "cpu0": sorted(p.split("/")[-1] for p in kinds if p.startswith("/dev/cpu/0/")) if "/dev/cpu/0" in kinds else None,
       "stat": {p: state(p) for p in devs},
       "open": {p: "ok" if state(p) != "No such file or directory" else state(p) for p in devs if not p.endswith("msr")},
       "lib": {n: lib(n) for n in libs},
       "libfile": {n: lib(n) == "loaded" and os.path.exists(n) for n in libs if n.startswith("/")}}
print(json.dumps(out, sort_keys=True))' "$1" "$devs" "$libs"
}

for node in intel-0 vm-0 epyc-0 h100-0 mi300x-0; do
    want=$(expect $node)
    # the shim; the seccomp route; the supervisor alone (no shim in the process: ld.so's own
    # search and every file call go through the supervisor)
    for how in preload seccomp supervisor; do
        case $how in
        preload) run=("$hwemu" exec --root "$tmp/r" --node $node --) ;;
        seccomp) run=("$hwemu" exec --root "$tmp/r" --node $node --intercept=seccomp --) ;;
        supervisor) run=("$hwemu" exec --root "$tmp/r" --node $node --intercept=seccomp -- env -u LD_PRELOAD) ;;
        esac
        got=$("${run[@]}" "$py" "$tmp/probe.py" "$devs" "$libs" 2>&1)
        if [ "$got" = "$want" ]; then ok; else
            bad "$node $how: the probe differs from the node's devices and libraries:"
            "$py" -c '
import json, sys
g, w = sys.argv[1], json.loads(sys.argv[2])
try:
    g = json.loads(g)
except ValueError:
    print("   ", g); sys.exit()
for k in sorted(w):
    for sub in (sorted(w[k]) if isinstance(w[k], dict) else [None]):
        gv, wv = (g.get(k, {}).get(sub), w[k][sub]) if sub else (g.get(k), w[k])
        if gv != wv:
            print("    %s %s: got %r, want %r" % (k, sub or "", gv, wv))' "$got" "$want"
        fi
    done
done

# A program linked against a driver library (DT_NEEDED, loaded by ld.so before any code of the
# program's runs): on the seccomp route ld.so's search goes through the supervisor and fails with
# its own message and exit 127 on a node without AMD GPUs, and finds the host's library on the
# MI300X node. (On the preload route the shim cannot see ld.so's search: docs/interfaces.md.)
if [ -n "$rocm" ] && printf 'int rsmi_init(unsigned long);\nint main(void) { return rsmi_init(0) ? 3 : 0; }\n' >"$tmp/dt.c" &&
    gcc "$tmp/dt.c" -o "$tmp/dt" "$rocm"; then
    out=$("$hwemu" exec --root "$tmp/r" --node intel-0 --intercept=seccomp -- "$tmp/dt" 2>&1); rc=$?
    [ $rc = 127 ] && grep -q "error while loading shared libraries: librocm_smi64.so.1: cannot open shared object file: No such file or directory" <<<"$out" &&
        ok || bad "DT_NEEDED librocm_smi64 on intel-0 (seccomp): rc=$rc $out"
    out=$("$hwemu" exec --root "$tmp/r" --node mi300x-0 --intercept=seccomp -- "$tmp/dt" 2>&1); rc=$?
    [ $rc != 127 ] && ! grep -q "error while loading" <<<"$out" && ok || bad "DT_NEEDED librocm_smi64 on mi300x-0 (seccomp): rc=$rc $out"
else
    bad "cannot build a program linked against $rocm"
fi

# Debian's real nvidia-smi: no NVIDIA library on the nodes without NVIDIA GPUs, whatever the host
# has (its own message and exit 12, the seccomp route too); the node's 8 GPUs on the H100 node.
# The host's own nvidia-smi (CI's second run) is found by name on PATH and must say the same.
host_smi=$(command -v nvidia-smi)
for node in intel-0 vm-0 epyc-0 mi300x-0; do
    for how in "" "--intercept=seccomp"; do
        for tool in "$smi" ${host_smi:+nvidia-smi}; do
            out=$("$hwemu" exec --root "$tmp/r" --node $node $how -- "$tool" -L 2>&1); rc=$?
            [ $rc = 12 ] && grep -q "^NVIDIA-SMI couldn't find libnvidia-ml.so library in your system." <<<"$out" && ok ||
                bad "$node $how $tool -L: rc=$rc $out"
        done
    done
done
out=$("$hwemu" exec --root "$tmp/r" --node h100-0 -- "$smi" -L 2>&1); rc=$?
[ $rc = 0 ] && [ "$(grep -c '^GPU [0-7]: NVIDIA H100' <<<"$out")" = 8 ] && ok || bad "h100-0 nvidia-smi -L: rc=$rc $out"
finish
