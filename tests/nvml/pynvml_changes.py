"""A power-measurement client as many are written, on nvidia-ml-py (PyPI, `import pynvml`): it
polls nvmlDeviceGetPowerUsage every 20 ms for SECONDS, keeps only the samples whose value changed
(a new measurement), and integrates them sample-and-hold from the first kept one to the last.
It prints the kept samples, its energy and the GPU's energy counter's increase over the same
span (nvmlDeviceGetTotalEnergyConsumption, read with each sample): `key=value` lines. Run by
tests/cli/test_faults.sh under `hwemu exec`.
Usage: python pynvml_changes.py INDEX SECONDS"""
import sys
import time

import pynvml


def main():
    index, seconds = int(sys.argv[1]), float(sys.argv[2])
    pynvml.nvmlInit()
    h = pynvml.nvmlDeviceGetHandleByIndex(index)
    kept = []  # (time s, power mW, energy mJ) of each changed sample
    last = None
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        p = pynvml.nvmlDeviceGetPowerUsage(h)
        e = pynvml.nvmlDeviceGetTotalEnergyConsumption(h)
        t = time.monotonic()
        if p != last:
            kept.append((t, p, e))
            last = p
        time.sleep(0.02)
    measured = sum(kept[i][1] * (kept[i + 1][0] - kept[i][0]) for i in range(len(kept) - 1)) / 1000
    truth = (kept[-1][2] - kept[0][2]) / 1000 if len(kept) > 1 else 0
    print(f"samples={len(kept)}")
    print(f"measured_j={measured:.3f}")
    print(f"truth_j={truth:.3f}")
    pynvml.nvmlShutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
