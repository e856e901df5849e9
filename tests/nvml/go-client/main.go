// An NVML client on NVIDIA's go-nvml (the binding Kepler and the k8s device plugin use): reads
// one GPU's power, energy and limits and optionally sets limits, printing one key=value line
// each: a value, or the go-nvml error's string (err:Insufficient Permissions).
// Usage: go-client INDEX [LIMIT_MW...]
package main

import (
	"fmt"
	"os"
	"strconv"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

func show(key string, v any, ret nvml.Return) {
	if ret != nvml.SUCCESS {
		fmt.Printf("%s=err:%s\n", key, nvml.ErrorString(ret))
		return
	}
	fmt.Printf("%s=%v\n", key, v)
}

func main() {
	index := 0
	if len(os.Args) > 1 {
		index, _ = strconv.Atoi(os.Args[1])
	}
	if ret := nvml.Init(); ret != nvml.SUCCESS {
		fmt.Printf("init=err:%s\n", nvml.ErrorString(ret))
		os.Exit(1)
	}
	defer nvml.Shutdown()
	n, ret := nvml.DeviceGetCount()
	show("count", n, ret)
	dev, ret := nvml.DeviceGetHandleByIndex(index)
	if ret != nvml.SUCCESS {
		fmt.Printf("device=err:%s\n", nvml.ErrorString(ret))
		os.Exit(1)
	}
	name, ret := dev.GetName()
	show("name", name, ret)
	p, ret := dev.GetPowerUsage()
	show("power_usage_mw", p, ret)
	e, ret := dev.GetTotalEnergyConsumption()
	show("energy_mj", e, ret)
	l, ret := dev.GetPowerManagementLimit()
	show("limit_mw", l, ret)
	en, ret := dev.GetEnforcedPowerLimit()
	show("enforced_mw", en, ret)
	d, ret := dev.GetPowerManagementDefaultLimit()
	show("default_mw", d, ret)
	lo, hi, ret := dev.GetPowerManagementLimitConstraints()
	show("constraints_mw", fmt.Sprintf("%d,%d", lo, hi), ret)
	limits := []string{}
	if len(os.Args) > 2 {
		limits = os.Args[2:]
	}
	for _, a := range limits {
		mw, _ := strconv.Atoi(a)
		if ret := dev.SetPowerManagementLimit(uint32(mw)); ret != nvml.SUCCESS {
			fmt.Printf("set_%d=err:%s\n", mw, nvml.ErrorString(ret))
		} else {
			fmt.Printf("set_%d=ok\n", mw)
		}
	}
	l, ret = dev.GetPowerManagementLimit()
	show("limit_after_mw", l, ret)
	procs, ret := dev.GetComputeRunningProcesses()
	show("processes", len(procs), ret)
}
