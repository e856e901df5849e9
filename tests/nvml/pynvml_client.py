"""An NVML client on nvidia-ml-py (PyPI, `import pynvml`): reads one GPU's power, energy and
limits and optionally sets limits, printing one `key=value` line each: a value, or the
pynvml exception's class (`err:NVMLError_NoPermission`). Run by tests/cli/test_nvml_clients.sh
in a venv under the build tree.
Usage: python pynvml_client.py INDEX [LIMIT_MW...]"""
import sys

import pynvml


def show(key, fn, *args):
    try:
        print(f"{key}={fn(*args)}")
    except pynvml.NVMLError as e:
        print(f"{key}=err:{type(e).__name__}")


def main():
    index = int(sys.argv[1]) if len(sys.argv) > 1 else 0
    try:
        pynvml.nvmlInit()
    except pynvml.NVMLError as e:
        print(f"init=err:{type(e).__name__}")
        return 1
    show("count", pynvml.nvmlDeviceGetCount)
    h = pynvml.nvmlDeviceGetHandleByIndex(index)
    show("name", pynvml.nvmlDeviceGetName, h)
    show("power_usage_mw", pynvml.nvmlDeviceGetPowerUsage, h)
    show("energy_mj", pynvml.nvmlDeviceGetTotalEnergyConsumption, h)
    show("limit_mw", pynvml.nvmlDeviceGetPowerManagementLimit, h)
    show("enforced_mw", pynvml.nvmlDeviceGetEnforcedPowerLimit, h)
    show("default_mw", pynvml.nvmlDeviceGetPowerManagementDefaultLimit, h)
    try:
        lo, hi = pynvml.nvmlDeviceGetPowerManagementLimitConstraints(h)
        print(f"constraints_mw={lo},{hi}")
    except pynvml.NVMLError as e:
        print(f"constraints_mw=err:{type(e).__name__}")
    for arg in sys.argv[2:]:
        mw = int(arg)
        try:
            pynvml.nvmlDeviceSetPowerManagementLimit(h, mw)
            print(f"set_{mw}=ok")
        except pynvml.NVMLError as e:
            print(f"set_{mw}=err:{type(e).__name__}")
    show("limit_after_mw", pynvml.nvmlDeviceGetPowerManagementLimit, h)
    mem = pynvml.nvmlDeviceGetMemoryInfo(h)
    print(f"memory_total_mib={mem.total // (1 << 20)}")
    show("clock_sm_mhz", pynvml.nvmlDeviceGetClockInfo, h, pynvml.NVML_CLOCK_SM)
    show("processes", pynvml.nvmlDeviceGetComputeRunningProcesses, h)
    show("error_string_4", pynvml.nvmlErrorString, 4)
    pynvml.nvmlShutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
