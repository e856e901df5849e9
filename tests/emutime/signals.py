# The signal timers of tests/cli/test_emutime.sh in Python, run under `hwemu exec --time emulated`:
# prints "<name> <values>", times in emulated seconds since the case began (time.monotonic, which
# the shim answers with the engine's clock), so the expected values are the timers' settings:
# signal.setitimer(ITIMER_REAL, 2.5) during time.sleep(10): the handler at 2.5 s and the sleep
# still 10 s (PEP 475 resumes it); signal.alarm(4) and signal.pause(): the handler at 4 s; an
# interval timer of 1.5 s over a sleep of 5 s: handlers at 1.5, 3 and 4.5 s, getitimer 1.0 s left
# and the interval; signal.alarm's answer is the seconds left of the one before.
import signal
import time

hits = []
t0 = 0.0


def handler(sig, frame):
    hits.append(round(time.monotonic() - t0, 3))


signal.signal(signal.SIGALRM, handler)

t0 = time.monotonic()
signal.setitimer(signal.ITIMER_REAL, 2.5)
time.sleep(10)
print("setitimer-sleep", hits, round(time.monotonic() - t0, 3), flush=True)

hits.clear()
t0 = time.monotonic()
signal.alarm(4)
signal.pause()
print("alarm-pause", hits, round(time.monotonic() - t0, 3), flush=True)

hits.clear()
t0 = time.monotonic()
signal.setitimer(signal.ITIMER_REAL, 1.5, 1.5)
time.sleep(5)
left, interval = signal.getitimer(signal.ITIMER_REAL)
signal.setitimer(signal.ITIMER_REAL, 0)
print("setitimer-interval", hits, round(left, 3), round(interval, 3), flush=True)

t0 = time.monotonic()
signal.alarm(30)
time.sleep(12)
print("alarm-left", signal.alarm(0), flush=True)
