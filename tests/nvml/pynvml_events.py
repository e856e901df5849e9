"""Xid events and ECC counts a fault raises, seen by an NVML client on nvidia-ml-py (PyPI,
`import pynvml`): registers GPU INDEX for nvmlEventTypeXidCriticalError, says `ready`, waits
(nvmlEventSetWait, 500 ms at a time, 30 s at most) for an event and 2 s more for a second one,
then prints `key=value` lines: the event's GPU and Xid, the second event's Xid (or
event2=none), and the GPU's ECC counts (nvmlDeviceGetTotalEccErrors, volatile).
Run by tests/cli/test_faults.sh under `hwemu exec`.
Usage: python pynvml_events.py INDEX"""
import sys

import pynvml


def main():
    index = int(sys.argv[1])
    pynvml.nvmlInit()
    h = pynvml.nvmlDeviceGetHandleByIndex(index)
    print(f"supported={pynvml.nvmlDeviceGetSupportedEventTypes(h)}")
    s = pynvml.nvmlEventSetCreate()
    pynvml.nvmlDeviceRegisterEvents(h, pynvml.nvmlEventTypeXidCriticalError, s)
    print("ready", flush=True)
    for _ in range(60):
        try:
            e = pynvml.nvmlEventSetWait(s, 500)
        except pynvml.NVMLError_Timeout:
            continue
        print(f"event_gpu={pynvml.nvmlDeviceGetIndex(e.device)}")
        print(f"event_type={e.eventType}")
        print(f"event_xid={e.eventData}")
        try:
            print(f"event2_xid={pynvml.nvmlEventSetWait(s, 2000).eventData}")
        except pynvml.NVMLError_Timeout:
            print("event2=none")
        break
    else:
        print("event=none")
    for name, kind in (("corrected", pynvml.NVML_MEMORY_ERROR_TYPE_CORRECTED),
                       ("uncorrected", pynvml.NVML_MEMORY_ERROR_TYPE_UNCORRECTED)):
        print(f"ecc_{name}={pynvml.nvmlDeviceGetTotalEccErrors(h, kind, pynvml.NVML_VOLATILE_ECC)}")
    pynvml.nvmlEventSetFree(s)
    pynvml.nvmlShutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
