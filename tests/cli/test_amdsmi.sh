#!/usr/bin/env bash
# The node's AMD SMI libraries (fakesmi/amdsmi: libamd_smi.so, librocm_smi64.so) under the PyPI
# clients nobody here wrote, against a running `hwemu serve` of tests/specs/gpu.yaml:
# - amdsmi 7.0.2 (AMD's Python bindings; tests/amdsmi/amdsmi_client.py) on the MI300X and the
#   W7900 node: identity, power, the energy counter against the engine's (bracketed by two reads
#   of its counter file, and over 3 s within 1 %),
#   caps read, set (read back from hwmon, taken by the engine: /telemetry limitWatts, and the
#   GPU's power settling under it), refused above the maximum and without root, temperatures,
#   clocks, activity, memory, the NOT_SUPPORTED and NOT_INIT errors, the struct sizes;
# - pyrsmi 1.1.0 (on the amdsmi package, and on its own ctypes calls of libamd_smi.so) and 0.2.0
#   (on librocm_smi64.so), the last two through ROCM_PATH=<root>/<node>.lib, on both nodes
#   (tests/amdsmi/pyrsmi_client.py);
# - the ABIs' edges as a C client calls them (tests/amdsmi/abi_edges.py): return codes before
#   init, for foreign handles, NULL outputs, short buffers and arrays, caps out of range, readings
#   the GPU lacks, status texts; init without a node;
# - where the libraries are found: by name (LD_LIBRARY_PATH), by path (/opt/rocm/lib/...,
#   through the shim's dlopen), Debian's librocm_smi64.so.1 left the real one, and nothing on an
#   NVIDIA node (`import amdsmi` fails as on a machine without ROCm);
# - the exported names: exactly the 184 the amdsmi wrapper binds; rsmi_status_string's texts
#   equal those of Debian's librocm_smi64 5.2.3 (the real library on this machine).
# The clients come from PyPI through scripts/fetch-amdsmi-clients.sh (a venv in the build tree).
# Usage: test_amdsmi.sh HWEMU_BINARY   (run from the source tree)
set -u
hwemu=$1
build=$(cd "$(dirname "$hwemu")" && pwd)
. "$(dirname "$0")/lib.sh"
root=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill -9 $pid 2>/dev/null; rm -rf "$root"' EXIT
port=$(free_port)
url=http://127.0.0.1:$port
R=$root/r
venv=$build/amdsmi-venv
amdlib=$build/libhwemu-amdsmi.so rocmlib=$build/libhwemu-rocmsmi.so

[ -f "$amdlib" ] && [ -f "$rocmlib" ] || { bad "no $amdlib or $rocmlib: build the targets hwemu-amdsmi, hwemu-rocmsmi"; finish; }
if ! scripts/fetch-amdsmi-clients.sh "$venv" >"$root/pip.log" 2>&1; then
    bad "cannot install amdsmi and pyrsmi into $venv: $(tail -5 "$root/pip.log")"
    finish
fi
py=$venv/bin/python
serve_start "$url" "$root/serve.err" --spec tests/specs/gpu.yaml --root "$R" --addr 127.0.0.1:$port --tick 200ms ||
    { bad "serve did not come up: $(cat "$root/serve.err")"; finish; }

# count FILE: adds FILE's "ok"/"FAIL:" lines to the totals, prints the failures and any traceback.
count() {
    local n
    n=$(grep -c '^ok ' "$1")
    pass=$((pass + n))
    if grep -q '^FAIL: ' "$1" || grep -q '^Traceback' "$1" || [ "$n" -eq 0 ]; then
        bad "$2: $(grep -v '^ok ' "$1")"
    fi
}
X() { "$hwemu" exec --root "$R" --node "$@"; }

# amdsmi on an MI300X and a W7900 node, then without root.
for node in mi300x-0 w7900-0; do
    X $node -- "$py" tests/amdsmi/amdsmi_client.py $node "$url" fakesmi/amdsmi/amdsmi_abi.h "$hwemu" >"$root/$node.out" 2>&1
    count "$root/$node.out" "amdsmi on $node"
done
HWEMU_UNPRIVILEGED=1 X mi300x-0 -- "$py" tests/amdsmi/amdsmi_client.py mi300x-0 "$url" fakesmi/amdsmi/amdsmi_abi.h \
    "$hwemu" unprivileged >"$root/unpriv.out" 2>&1
count "$root/unpriv.out" "amdsmi on mi300x-0 without root"

# pyrsmi 1.1.0 (amdsmi package), 0.2.0 (librocm_smi64.so under $ROCM_PATH/lib) and 1.1.0 in its ctypes
# mode (libamd_smi.so under $ROCM_PATH/lib; handles passed as C ints reach their GPU).
for node in mi300x-0 w7900-0; do
    X $node -- "$py" tests/amdsmi/pyrsmi_client.py >"$root/p11.out" 2>&1
    count "$root/p11.out" "pyrsmi 1.1.0 on $node"
    ROCM_PATH=$R/$node.lib PYTHONPATH=$venv/pyrsmi02 X $node -- "$py" tests/amdsmi/pyrsmi_client.py >"$root/p02.out" 2>&1
    count "$root/p02.out" "pyrsmi 0.2.0 on $node"
    ROCM_PATH=$R/$node.lib X $node -- "$py" tests/amdsmi/pyrsmi_client.py ctypes >"$root/p11c.out" 2>&1
    count "$root/p11c.out" "pyrsmi 1.1.0 (ctypes, \$ROCM_PATH/lib/libamd_smi.so) on $node"
done

# The ABIs' edges as a C client meets them (tests/amdsmi/abi_edges.py), and init without a node.
X mi300x-0 -- "$py" tests/amdsmi/abi_edges.py >"$root/edges.out" 2>&1
count "$root/edges.out" "the ABIs' edges on mi300x-0"
env -u HWEMU_NODE -u HWEMU_SEGMENT LD_LIBRARY_PATH=$R/mi300x-0.lib "$py" tests/amdsmi/abi_edges.py nonode >"$root/nonode.out" 2>&1
count "$root/nonode.out" "init without a node"
grep -q '^hwemu-amdsmi: no emulated node: set HWEMU_NODE' "$root/nonode.out" && ok ||
    bad "no reason on stderr for an init without a node: $(cat "$root/nonode.out")"

# By path: /opt/rocm/lib/... does not exist on this machine; the shim's dlopen gives the node's
# libraries. Debian's /usr/lib/librocm_smi64.so.1 (loaded by Debian's rocm-smi by that path) stays
# Debian's: it has no rsmi_dev_current_socket_power_get, which ours exports.
out=$(X mi300x-0 -- "$py" -c '
import ctypes, os
a = ctypes.CDLL("/opt/rocm/lib/libamd_smi.so")
n = ctypes.c_uint32()
print("amdsmi", a.amdsmi_init(ctypes.c_uint64(2)), a.amdsmi_get_socket_handles(ctypes.byref(n), None), n.value)
r = ctypes.CDLL("/opt/rocm-6.2.0/lib/librocm_smi64.so.7")
print("rocmsmi", r.rsmi_init(ctypes.c_uint64(0)), r.rsmi_num_monitor_devices(ctypes.byref(n)), n.value)
if os.path.exists("/usr/lib/librocm_smi64.so.1"):
    d = ctypes.CDLL("/usr/lib/librocm_smi64.so.1")
    print("debian", hasattr(d, "rsmi_dev_current_socket_power_get"))
else:
    print("debian", False)
' 2>&1)
[ "$(sed -n 1p <<<"$out")" = "amdsmi 0 0 8" ] && ok || bad "/opt/rocm/lib/libamd_smi.so on mi300x-0: $out"
[ "$(sed -n 2p <<<"$out")" = "rocmsmi 0 0 8" ] && ok || bad "librocm_smi64.so.7 by path on mi300x-0: $out"
[ "$(sed -n 3p <<<"$out")" = "debian False" ] && ok || bad "Debian's librocm_smi64.so.1 replaced: $out"

# On a node without AMD GPUs nothing is found, as on a machine without ROCm: the amdsmi package
# prints its hint and its import raises KeyError; a dlopen by path fails.
out=$(X sxm-0 -- "$py" -c '
import ctypes
try:
    ctypes.CDLL("/opt/rocm/lib/libamd_smi.so")
    print("loaded")
except OSError:
    print("OSError")
try:
    import amdsmi
    print("imported")
except KeyError as e:
    print("KeyError", e)
' 2>&1)
grep -qx "OSError" <<<"$out" && grep -qx "KeyError 'libamd_smi.so'" <<<"$out" &&
    grep -q "Unable to find libamd_smi.so library" <<<"$out" && ok || bad "libamd_smi.so on the NVIDIA node sxm-0: $out"
[ ! -e "$R/sxm-0.lib/libamd_smi.so" ] && [ ! -e "$R/sxm-0.lib/lib" ] && ok || bad "AMD links in $R/sxm-0.lib: $(ls "$R/sxm-0.lib")"

# The exported names: exactly those the wrapper binds at import.
"$py" -c '
import re, sys
src = open(sys.argv[1]).read()
print("\n".join(sorted(set(re.findall(r"^(\w+) = _libraries\[.libamd_smi.so.\]\.\w+", src, re.M)))))
' "$(ls "$venv"/lib/python3*/site-packages/amdsmi/amdsmi_wrapper.py)" >"$root/want.txt"
nm -D --defined-only "$amdlib" | awk '{print $3}' | sort >"$root/have.txt"
[ "$(wc -l <"$root/want.txt")" -eq 184 ] && cmp -s "$root/want.txt" "$root/have.txt" && ok ||
    bad "libhwemu-amdsmi.so exports other names than the wrapper binds: $(diff "$root/want.txt" "$root/have.txt" | head)"

# rsmi_status_string: the texts of Debian's librocm_smi64 5.2.3, code by code.
if [ -e /usr/lib/librocm_smi64.so.1 ]; then
    out=$("$py" -c '
import ctypes, sys
libs = [ctypes.CDLL(p) for p in sys.argv[1:]]
for code in list(range(19)) + [0xFFFFFFFF]:
    got = []
    for l in libs:
        s = ctypes.c_char_p()
        got.append((l.rsmi_status_string(ctypes.c_uint32(code), ctypes.byref(s)), s.value))
    if got[0] != got[1]:
        print(code, got)
' /usr/lib/librocm_smi64.so.1 "$rocmlib" 2>&1)
    [ -z "$out" ] && ok || bad "rsmi_status_string differs from Debian's librocm_smi64 5.2.3: $out"
else
    bad "no /usr/lib/librocm_smi64.so.1 (Debian's librocm-smi64-1, installed with rocm-smi by scripts/install-deps.sh)"
fi

finish
