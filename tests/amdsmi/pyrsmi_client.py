"""pyrsmi (PyPI, unmodified) on one emulated AMD node, run by tests/cli/test_amdsmi.sh under
`hwemu exec`: pyrsmi 1.1.0 reads through the amdsmi package (libamd_smi.so), pyrsmi 0.2.0 through
librocm_smi64.so (found as $ROCM_PATH/lib/librocm_smi64.so). Each answer is compared with the
node's amdgpu files read through the shim at the same moment (the engine's segment).
pyrsmi 1.1.0 falls back to its own ctypes calls of libamd_smi.so ($ROCM_PATH/lib/libamd_smi.so)
when the amdsmi package cannot be imported: argument "ctypes" hides the package.
Usage: pyrsmi_client.py [ctypes]  (pyrsmi on sys.path). Prints "ok ..." / "FAIL: ..." lines."""
import os
import re
import sys

if sys.argv[1:] == ["ctypes"]:
    sys.modules["amdsmi"] = None  # import amdsmi raises ImportError: pyrsmi uses ctypes
from pyrsmi import rocml


def check(cond, what):
    print(("ok " if cond else "FAIL: ") + what, flush=True)


def sysfs(path):
    with open(path) as f:
        return f.read().strip()


cards = sorted(int(c[4:]) for c in os.listdir("/sys/class/drm") if re.fullmatch(r"card\d+", c)
               and sysfs(f"/sys/class/drm/{c}/device/vendor") == "0x1002")
dev = f"/sys/class/drm/card{cards[0]}/device"
hwmon = f"{dev}/hwmon/" + os.listdir(f"{dev}/hwmon")[0]
version = rocml.__version__ if hasattr(rocml, "__version__") else ""
rocml.smi_initialize()
n = rocml.smi_get_device_count()
check(n == len(cards), f"pyrsmi: {n} devices, the node's AMD cards {cards}")
name = rocml.smi_get_device_name(0)
check(name == sysfs(f"{dev}/product_name"), f"pyrsmi: name {name!r}")
total = rocml.smi_get_device_memory_total(0)
check(total == int(sysfs(f"{dev}/mem_info_vram_total")), f"pyrsmi: VRAM {total} B")
for _ in range(20):
    busy = int(sysfs(f"{dev}/gpu_busy_percent"))
    u = rocml.smi_get_device_utilization(0)
    if busy == int(sysfs(f"{dev}/gpu_busy_percent")):
        break
check(u == busy, f"pyrsmi: utilization {u} % is gpu_busy_percent {busy}")
# Power. pyrsmi 0.2.0 reads rsmi_dev_power_ave_get (power1_average, uW): on an MI300X, which has
# only power1_input, the library answers NOT_SUPPORTED and pyrsmi -1, as on the real GPU.
# pyrsmi 1.1.0 takes the first of current_socket_power, average_socket_power that is a number
# above 0 (W); an "N/A" current makes its comparison fail and it returns -1 (the W7900).
for _ in range(20):
    files = {f: int(sysfs(f"{hwmon}/{f}")) for f in ("power1_input", "power1_average") if os.path.exists(f"{hwmon}/{f}")}
    p = rocml.smi_get_device_average_power(0)
    if files == {f: int(sysfs(f"{hwmon}/{f}")) for f in files}:
        break
# pyrsmi 1.1.0 without the amdsmi package (its ctypes mode on libamd_smi.so) reads the raw struct:
# a current_socket_power of 0xFFFF ("not supported") is above 0 and becomes 65535 W, as it does on
# the real library.
if rocml.LIBROCM_NAME == "librocm_smi64.so":
    want = files["power1_average"] * 1e-6 if "power1_average" in files else -1
elif rocml._using_amdsmi_package:
    want = files["power1_input"] // 1000000 if "power1_input" in files else -1
else:
    want = files["power1_input"] // 1000000 if "power1_input" in files else 0xFFFF
mode = "ctypes" if sys.argv[1:] == ["ctypes"] else "package" if rocml.LIBROCM_NAME == "libamd_smi.so" else "rsmi"
check(not hasattr(rocml, "_using_amdsmi_package") or rocml._using_amdsmi_package == (mode == "package"),
      f"pyrsmi's mode is {mode}")
check(abs(p - want) < 1e-6, f"pyrsmi ({rocml.LIBROCM_NAME}, {mode}): average power {p}, expected {want} from {files}")
rocml.smi_shutdown()
