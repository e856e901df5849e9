# A power-capping agent for tests/cli/test_emutime.sh: reads package 0's energy_uj every 20 s of
# its clock (time.sleep to absolute deadlines on time.monotonic_ns), logs each read's time, the
# counter and the power since the last read (times from its start), and caps the package once at 80 % of LIMIT_W when
# its power passes LIMIT_W. Usage: agent.py LOG LIMIT_W
import sys
import time

ZONE = "/sys/class/powercap/intel-rapl:0/"
PERIOD_NS = 20 * 10**9


def energy():
    with open(ZONE + "energy_uj") as f:
        return int(f.read())


log = open(sys.argv[1], "w")
limit_w = float(sys.argv[2])
t_prev, e_prev = time.monotonic_ns(), energy()
t_start = t_prev  # times are logged from here: the engine's clock starts where the host's was
log.write(f"start 0 {e_prev}\n")
log.flush()
next_t = t_prev + PERIOD_NS
capped = False
while True:
    time.sleep((next_t - time.monotonic_ns()) / 1e9)
    t, e = time.monotonic_ns(), energy()
    watts = (e - e_prev) / ((t - t_prev) / 1e3)
    log.write(f"read {t - t_start} {e} {watts:.3f}\n")
    if watts > limit_w and not capped:
        with open(ZONE + "constraint_0_power_limit_uw", "w") as f:
            f.write(str(int(limit_w * 0.8 * 1e6)))
        capped = True
        log.write(f"cap {time.monotonic_ns() - t_start} {int(limit_w * 0.8)}\n")
    log.flush()
    t_prev, e_prev = t, e
    next_t += PERIOD_NS
