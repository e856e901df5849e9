# The waits with timeouts of tests/cli/test_emutime.sh, each timed on the emulated clock: prints
# "<name> <emulated seconds it took>" for a wait of 5 s that nothing ends, and for one that a ready
# descriptor ends at once.
import os
import select
import threading
import time


def timed(name, fn):
    t = time.monotonic_ns()
    fn()
    print(name, (time.monotonic_ns() - t) / 1e9, flush=True)


r, w = os.pipe()
timed("select-sleep", lambda: select.select([], [], [], 5))
timed("select-pipe", lambda: select.select([r], [], [], 5))
p = select.poll()
p.register(r, select.POLLIN)
timed("poll-pipe", lambda: p.poll(5000))
ep = select.epoll()
ep.register(r, select.EPOLLIN)
timed("epoll-pipe", lambda: ep.poll(5))
timed("event-wait", lambda: threading.Event().wait(5))
lock = threading.Lock()
lock.acquire()
timed("lock-acquire", lambda: lock.acquire(timeout=5))
cond = threading.Condition()
with cond:
    timed("condition-wait", lambda: cond.wait(5))
os.write(w, b"x")
timed("poll-ready", lambda: p.poll(5000))
