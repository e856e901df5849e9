/* emu_hide: what of the host a node hides, so that a tool on it finds exactly the node's devices
 * and GPU driver libraries, whatever the host has installed (a GPU workstation's
 * /dev/nvidiactl and libnvidia-ml.so.1 on an emulated AMD node or VM would be found by the real
 * nvidia-smi, NVML clients, ipmitool, turbostat, ...).
 *
 * Devices. Under /dev, every name of a class of device the nodes emulate is the node's alone:
 * it resolves in the segment (dev/nvidiactl of an NVIDIA node, dev/cpu/<n>/msr, dev/ipmi0 of a
 * bare-metal node) or is absent (ENOENT), and /dev's listing leaves the host's out:
 *     nvidia*   the NVIDIA driver's (nvidiactl, nvidia<N>, nvidia-uvm, nvidia-modeset, nvidia-caps)
 *     dri       DRM cards and render nodes
 *     kfd       amdkfd, the ROCm compute device
 *     cpu       /dev/cpu/<n>/msr and cpuid (the msr and cpuid drivers)
 *     ipmi*     OpenIPMI (ipmi<N>, the older ipmi/<N> and ipmidev/<N>)
 *     hsmp      AMD's HSMP mailbox
 * Every other /dev name (null, shm, pts, ...) is the host's.
 *
 * Driver libraries. A GPU vendor's user-space driver libraries that the node does not have are
 * absent by name and by path, wherever they lie (open, stat, access, dlopen, and ld.so's own
 * search on the seccomp route), as on a machine without that vendor's driver:
 *     NVIDIA  libnvidia-*.so*, libcuda.so*, libcudadebugger.so*, libnvcuvid.so*, libnvoptix.so*:
 *             all of them on a node without NVIDIA GPUs; on an NVIDIA node all but NVML
 *             (libnvidia-ml.so*, which is the node's: hwemu exec puts libhwemu-nvml.so first on
 *             LD_LIBRARY_PATH, and the shim loads it for a dlopen by path)
 *     AMD     librocm_smi64.so*, libamd_smi.so*, libhsa-runtime64.so*, libamdhip64.so*: on a node
 *             without AMD GPUs (on an AMD GPU node the SMI libraries are the node's, the shim's
 *             dlopen loading them by path, and Debian's librocm_smi64.so.1 reads the node's sysfs)
 * A node has NVIDIA GPUs when its segment has state/nvml, AMD ones when it has sys/class/kfd/kfd.
 * What it must never do: allocate, lock, make a system call or touch errno. */
#ifndef HWEMU_SHIM_EMU_HIDE_H
#define HWEMU_SHIM_EMU_HIDE_H
#include "segment.h"

#include <stdbool.h>
#include <stddef.h>

/* Is the first component of a path under /dev (name, len bytes) one of the classes above? */
bool emu_dev_class(const char *name, size_t len);
/* Is path (a name or a path) a GPU driver library node s does not have? false without a node. */
bool emu_lib_hidden(const struct seg *s, const char *path);
/* The same for a node that has NVIDIA GPUs (nvidia) and AMD ones (amd), without its segment. */
bool emu_lib_hidden_on(bool nvidia, bool amd, const char *path);
/* The variable `hwemu exec` sets to the node's copy of the management library path names
 * (a name or a path), where the node has one: HWEMU_NVML for libnvidia-ml.so*, HWEMU_AMDSMI for
 * libamd_smi.so*, HWEMU_ROCMSMI for librocm_smi64.so* but .so.1 (Debian's librocm_smi64 5.2.3,
 * which reads the node's sysfs, stays the real one); NULL for any other library. */
const char *emu_lib_node_var(const char *path);
/* Does path name NVIDIA's NVML (libnvidia-ml.so*) on a node with NVIDIA GPUs, whose NVML is the
 * node's (libhwemu-nvml.so, HWEMU_NVML): the routes load that one instead, wherever the path
 * points (the shim's dlopen by path, the supervisor's open for ld.so)? */
bool emu_lib_nvml(const struct seg *s, const char *path);

#endif
