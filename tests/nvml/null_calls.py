"""Calls every nvml* name the library exports, after nvmlInit_v2, with four NULL arguments,
and prints how many returned each NVML code, then the names whose code is none of SUCCESS (0),
INVALID_ARGUMENT (2) and NOT_SUPPORTED (3). A crash ends the run (tests/cli/test_nvml.sh sees
no output). Usage: null_calls.py LIBRARY   (HWEMU_NODE set to an NVIDIA node)"""
import ctypes
import subprocess
import sys

path = sys.argv[1]
lib = ctypes.CDLL(path)
out = subprocess.check_output(["nm", "-D", "--defined-only", path], text=True)
names = [line.split()[-1] for line in out.splitlines() if line.split()[-1].startswith("nvml")]
if lib.nvmlInit_v2() != 0:
    sys.exit("nvmlInit_v2 failed")
skip = {"nvmlInit", "nvmlInit_v2", "nvmlInitWithFlags", "nvmlShutdown", "nvmlErrorString"}
codes = {}
for name in names:
    if name not in skip:
        codes.setdefault(getattr(lib, name)(None, None, None, None), []).append(name)
print(len(names), "names;", " ".join(f"{c}:{len(v)}" for c, v in sorted(codes.items())))
odd = [n for c, v in codes.items() if c not in (0, 2, 3) for n in v]
print("unexpected:", " ".join(odd) if odd else "none")
