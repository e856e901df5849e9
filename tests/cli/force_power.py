# gdb script (tests/cli/test_nvml.sh): the program sees a power of FORCE_MW milliwatts, so a test
# compares how the real nvidia-smi and fakesmi print a chosen power.
#   real nvidia-smi: every nvmlDeviceGetPowerUsage returns FORCE_MW
#   fakesmi:         every nv_watts (its mW -> "W.ww" formatter) is called with FORCE_MW
import os

import gdb

FORCE_MW = int(os.environ["FORCE_MW"])


class Returned(gdb.FinishBreakpoint):
    def __init__(self, out):
        super().__init__(gdb.newest_frame(), internal=True)
        self.out = out

    def stop(self):
        gdb.execute("set *(unsigned int *)%d = %d" % (self.out, FORCE_MW))
        return False


class NvmlCalled(gdb.Breakpoint):
    def stop(self):
        Returned(int(gdb.parse_and_eval("$rsi")))
        return False


class FormatterCalled(gdb.Breakpoint):
    def stop(self):
        gdb.execute("set $rdi = %d" % FORCE_MW)
        return False


gdb.execute("set pagination off")
gdb.execute("set breakpoint pending on")
NvmlCalled("nvmlDeviceGetPowerUsage")
try:  # fakesmi only: its first instruction, where rdi still holds the argument at any -O
    FormatterCalled("*nv_watts")
except gdb.error:
    pass  # another program (the real nvidia-smi) has no nv_watts
gdb.execute("run")
