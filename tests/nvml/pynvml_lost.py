"""A GPU that falls off the bus under an NVML client on nvidia-ml-py (PyPI, `import pynvml`):
takes every GPU's handle, says `ready`, waits until the file named by its second argument exists
(the test injects the fault meanwhile), then reads power through the handle it kept and asks
for the handle again, printing `key=value` lines: a value, or the exception's class and text
(`err:NVMLError_GpuIsLost:GPU is lost`). Run by tests/cli/test_faults.sh.
Usage: python pynvml_lost.py INDEX GO_FILE"""
import os
import sys
import time

import pynvml


def show(key, fn, *args):
    try:
        print(f"{key}={fn(*args)}")
    except pynvml.NVMLError as e:
        print(f"{key}=err:{type(e).__name__}:{e}")


def main():
    index, go = int(sys.argv[1]), sys.argv[2]
    pynvml.nvmlInit()
    handles = [pynvml.nvmlDeviceGetHandleByIndex(i) for i in range(pynvml.nvmlDeviceGetCount())]
    print("ready", flush=True)
    for _ in range(600):
        if os.path.exists(go):
            break
        time.sleep(0.1)
    show("count", pynvml.nvmlDeviceGetCount)
    show("kept_power_mw", pynvml.nvmlDeviceGetPowerUsage, handles[index])
    show("kept_energy_mj", pynvml.nvmlDeviceGetTotalEnergyConsumption, handles[index])
    show("handle", lambda i: pynvml.nvmlDeviceGetName(pynvml.nvmlDeviceGetHandleByIndex(i)), index)
    other = (index + 1) % len(handles)
    show("other_power_mw", pynvml.nvmlDeviceGetPowerUsage, handles[other])
    pynvml.nvmlShutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
