"""The edges of the two libraries' C ABIs, called as a C client calls them (ctypes with the
prototypes of amdsmi.h and rocm_smi.h), on the node tests/cli/test_amdsmi.sh runs it on (an
MI300X node: power1_input only, cap 0..750 W): the return codes the real libraries give for a
call before init, a foreign handle, a NULL output, a short buffer, a short handle array, a cap
out of range, a reading the GPU does not have, and the status texts.
Usage: abi_edges.py [nonode]   ("nonode": run without an emulated node: init must fail).
Prints "ok ..." / "FAIL: ..." lines."""
import ctypes as C
import sys


def check(cond, what):
    print(("ok " if cond else "FAIL: ") + what, flush=True)


a = C.CDLL("libamd_smi.so")
r = C.CDLL("librocm_smi64.so")
u32, u64, p = C.c_uint32, C.c_uint64, C.c_void_p
a.amdsmi_init.argtypes = [u64]
r.rsmi_init.argtypes = [u64]

if sys.argv[1:] == ["nonode"]:
    # amdsmi: DRIVER_NOT_LOADED (34); rocm_smi: INIT_ERROR (8). The reason goes to stderr.
    check(a.amdsmi_init(2) == 34, "amdsmi_init without a node: DRIVER_NOT_LOADED (34)")
    check(r.rsmi_init(0) == 8, "rsmi_init without a node: INIT_ERROR (8)")
    sys.exit(0)

# ---- AMD SMI ----
n = u32()
check(a.amdsmi_get_socket_handles(C.byref(n), None) == 32, "amdsmi before init: NOT_INIT (32)")
check(a.amdsmi_init(1) == 34, "amdsmi_init for CPUs only: DRIVER_NOT_LOADED (34), the CPU side is not emulated")
check(a.amdsmi_init(2) == 0, "amdsmi_init(AMD_GPUS)")
check(a.amdsmi_init(2) == 0, "a second amdsmi_init: SUCCESS")
check(a.amdsmi_get_socket_handles(C.byref(n), None) == 0 and n.value == 8, f"8 sockets ({n.value})")
socks = (p * 8)()
short = u32(3)
check(a.amdsmi_get_socket_handles(C.byref(short), socks) == 0 and short.value == 3,
      f"a 3-entry array gets 3 sockets ({short.value})")
count = u32(8)
a.amdsmi_get_socket_handles(C.byref(count), socks)
check(all(s and s < 2**31 for s in socks), "handles are non-NULL and below 2^31")
name = C.create_string_buffer(128)
a.amdsmi_get_socket_info.argtypes = [p, C.c_size_t, C.c_char_p]
check(a.amdsmi_get_socket_info(socks[0], 128, name) == 0 and name.value == b"0000:10:00",
      f"socket 0's id {name.value!r} (the BDF without the function)")
h = (p * 1)()
one = u32(1)
a.amdsmi_get_processor_handles.argtypes = [p, C.POINTER(u32), C.POINTER(p)]
check(a.amdsmi_get_processor_handles(socks[0], C.byref(one), h) == 0 and one.value == 1, "one GPU per socket")
gpu = h[0]
check(a.amdsmi_get_processor_handles(p(12345), C.byref(one), h) == 1, "a foreign socket handle: INVAL (1)")

a.amdsmi_get_gpu_device_uuid.argtypes = [p, C.POINTER(u32), C.c_char_p]
ln = u32(37)
buf = C.create_string_buffer(64)
check(a.amdsmi_get_gpu_device_uuid(gpu, C.byref(ln), buf) == 1, "a UUID buffer under 38 bytes: INVAL (1)")
ln.value = 38
check(a.amdsmi_get_gpu_device_uuid(gpu, C.byref(ln), buf) == 0 and len(buf.value) == 36, f"UUID {buf.value!r}")

a.amdsmi_get_energy_count.argtypes = [p, C.POINTER(u64), C.POINTER(C.c_float), C.POINTER(u64)]
e, res, ts = u64(), C.c_float(), u64()
check(a.amdsmi_get_energy_count(p(gpu + 1000), C.byref(e), C.byref(res), C.byref(ts)) == 1, "a foreign GPU handle: INVAL (1)")
check(a.amdsmi_get_energy_count(gpu, None, C.byref(res), C.byref(ts)) == 1, "a NULL output: INVAL (1)")
a.amdsmi_set_power_cap.argtypes = [p, u32, u64]
check(a.amdsmi_set_power_cap(gpu, 0, 751 * 10**6) == 1, "a cap of 751 W above the MI300X's 750 W: INVAL (1)")
check(a.amdsmi_set_power_cap(gpu, 3, 300 * 10**6) == 2, "a cap of a sensor the GPU lacks (power4_cap): NOT_SUPPORTED (2)")
a.amdsmi_get_clock_info.argtypes = [p, u32, C.c_void_p]
info = C.create_string_buffer(32)
check(a.amdsmi_get_clock_info(gpu, 1, info) == 1, "amdsmi_get_clock_info(DF): INVAL (1)")
check(a.amdsmi_get_clock_info(gpu, 6, info) == 7, "amdsmi_get_clock_info(VCLK0) without pp_dpm_vclk: API_FAILED (7)")

a.amdsmi_status_code_to_string.argtypes = [u32, C.POINTER(C.c_char_p)]
a.amdsmi_status_code_to_string.restype = u32
s = C.c_char_p()
check(a.amdsmi_status_code_to_string(2, C.byref(s)) == 0 and s.value.startswith(b"RSMI_STATUS_NOT_SUPPORTED: "),
      f"status 2's text is rocm_smi's: {s.value!r}")
check(a.amdsmi_status_code_to_string(4, C.byref(s)) == 0 and s.value == b"FAIL_LOAD_MODULE: Fail to load module.",
      f"status 4's text: {s.value!r}")
check(a.amdsmi_status_code_to_string(99, C.byref(s)) == 0xFFFFFFFF and s.value == b"An unknown error occurred",
      f"an unknown status: UNKNOWN_ERROR, {s.value!r}")
check(a.amdsmi_shut_down() == 0 and a.amdsmi_get_socket_handles(C.byref(n), None) == 32,
      "after amdsmi_shut_down: NOT_INIT (32)")

# ---- ROCm SMI ----
r.rsmi_dev_power_ave_get.argtypes = [u32, u32, C.POINTER(u64)]
uw = u64()
check(r.rsmi_dev_power_ave_get(0, 0, C.byref(uw)) == 1, "rsmi before init: INVALID_ARGS (1), the device list is empty")
check(r.rsmi_init(0) == 0, "rsmi_init")
r.rsmi_num_monitor_devices.argtypes = [C.POINTER(u32)]
check(r.rsmi_num_monitor_devices(C.byref(n)) == 0 and n.value == 8, f"8 devices ({n.value})")
check(r.rsmi_dev_power_ave_get(0, 0, C.byref(uw)) == 2, "rsmi_dev_power_ave_get on the MI300X: NOT_SUPPORTED (2)")
r.rsmi_dev_current_socket_power_get.argtypes = [u32, C.POINTER(u64)]
check(r.rsmi_dev_current_socket_power_get(0, C.byref(uw)) == 0 and uw.value > 0,
      f"rsmi_dev_current_socket_power_get: {uw.value} uW")
kind = u32(7)
r.rsmi_dev_power_get.argtypes = [u32, C.POINTER(u64), C.POINTER(u32)]
check(r.rsmi_dev_power_get(0, C.byref(uw), C.byref(kind)) == 0 and kind.value == 1, f"rsmi_dev_power_get: CURRENT (1), {uw.value} uW")
check(r.rsmi_dev_power_ave_get(8, 0, C.byref(uw)) == 1, "device 8 of 8: INVALID_ARGS (1)")
r.rsmi_dev_power_cap_set.argtypes = [u32, u32, u64]
check(r.rsmi_dev_power_cap_set(0, 0, 751 * 10**6) == 1, "rsmi cap of 751 W: INVALID_ARGS (1)")
r.rsmi_dev_temp_metric_get.argtypes = [u32, u32, u32, C.POINTER(C.c_int64)]
t = C.c_int64()
check(r.rsmi_dev_temp_metric_get(0, 1, 0, C.byref(t)) == 0 and 1000 < t.value < 150000, f"junction {t.value} m degrees C")
check(r.rsmi_dev_temp_metric_get(0, 3, 0, C.byref(t)) == 2, "HBM_0 temperature: NOT_SUPPORTED (2)")
f = (C.c_ubyte * 280)()
r.rsmi_dev_gpu_clk_freq_get.argtypes = [u32, u32, C.c_void_p]
ok = r.rsmi_dev_gpu_clk_freq_get(0, 0, f) == 0
hz = list((u64 * 33).from_buffer(f, 16))
num = u32.from_buffer(f, 4).value
check(ok and num >= 2 and all(x % 1000000 == 0 and x > 0 for x in hz[:num]), f"sclk levels in Hz: {hz[:num]}")
check(r.rsmi_dev_fan_speed_get(0, 0, C.byref(t)) == 2, "rsmi_dev_fan_speed_get: NOT_SUPPORTED (2)")
check(r.rsmi_shut_down() == 0 and r.rsmi_dev_power_ave_get(0, 0, C.byref(uw)) == 1, "after rsmi_shut_down: INVALID_ARGS (1)")
