// agent: a Go energy agent in miniature, for tests/cli/test_exec_go.sh. Go makes raw system
// calls (no libc), so under `hwemu exec` only the seccomp supervisor can show it the node.
// It does what power cappers and exporters do and prints one line per check:
//   - discovers the RAPL zones (os.ReadDir, os.Readlink, os.Stat, each zone's name)
//   - reads energy_uj twice through one descriptor kept open (pread at offset 0)
//   - writes a PL1 limit (read back floored to the 125000 uW power unit) and an invalid one
//     (syscall.EINVAL), and tries to open energy_uj for writing (EACCES)
//   - walks the cpufreq policies and reads each scaling_cur_freq
//   - reads /proc/cpuinfo and counts its processor blocks
//   - runs a child process (itself) that reads a zone's name and energy
//   - stress: goroutines on many threads opening, reading and pread'ing at once while others
//     spin, so the runtime preempts them with SIGURG in the middle of emulated calls
//
// Other modes: `wait` says "ready" and reads the counter every 10 ms until a signal ends it;
// `orphan FILE` starts `later FILE` and exits at once: the child, orphaned, waits until FILE.go
// exists (the test makes it once hwemu exec has returned), then reads a zone's name and writes it
// to FILE (it must still be emulated).
//
// `gpu` runs nvidia-smi from PATH to list the GPUs and cap one (on a GPU node).
// Usage: agent [child | gpu | wait | orphan FILE | later FILE]
package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

const zone = "/sys/class/powercap/intel-rapl:0"

func readTrim(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "error: " + err.Error()
	}
	return strings.TrimSpace(string(b))
}

func preadUint(f *os.File) (uint64, error) {
	buf := make([]byte, 64)
	n, err := f.ReadAt(buf, 0)
	if n == 0 && err != nil {
		return 0, err
	}
	return strconv.ParseUint(strings.TrimSpace(string(buf[:n])), 10, 64)
}

func child() {
	fmt.Printf("child name %s\n", readTrim(zone+"/name"))
	_, err := strconv.ParseUint(readTrim(zone+"/energy_uj"), 10, 64)
	fmt.Printf("child energy ok %v\n", err == nil)
}

func discover() {
	entries, err := os.ReadDir("/sys/class/powercap")
	if err != nil {
		fmt.Printf("readdir error: %v\n", err)
		return
	}
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), "intel-rapl:") {
			continue
		}
		p := filepath.Join("/sys/class/powercap", e.Name())
		target, err := os.Readlink(p)
		if err != nil {
			target = "error: " + err.Error()
		}
		st, err := os.Stat(p)
		isDir := err == nil && st.IsDir()
		fmt.Printf("zone %s %s link=%v dir=%v -> %s\n", e.Name(), readTrim(p+"/name"),
			e.Type()&os.ModeSymlink != 0, isDir, target)
	}
	st, err := os.Stat(zone + "/energy_uj")
	if err == nil {
		fmt.Printf("energy_uj mode %v size %d\n", st.Mode().Perm(), st.Size())
	}
}

func energy() {
	f, err := os.Open(zone + "/energy_uj")
	if err != nil {
		fmt.Printf("open energy_uj: %v\n", err)
		return
	}
	defer f.Close()
	e1, err1 := preadUint(f)
	time.Sleep(50 * time.Millisecond)
	e2, err2 := preadUint(f)
	fmt.Printf("energy moves %v (errors %v %v)\n", e2 > e1 && err1 == nil && err2 == nil, err1, err2)
	_, err = os.OpenFile(zone+"/energy_uj", os.O_WRONLY, 0)
	fmt.Printf("open energy_uj for writing: %v\n", errors.Is(err, syscall.EACCES))
}

func limits() {
	pl1 := zone + "/constraint_0_power_limit_uw"
	err := os.WriteFile(pl1, []byte("120000001"), 0644)
	fmt.Printf("write pl1 err=%v readback %s\n", err, readTrim(pl1))
	err = os.WriteFile(pl1, []byte("12ab"), 0644)
	var errno syscall.Errno
	fmt.Printf("write invalid EINVAL %v\n", errors.As(err, &errno) && errno == syscall.EINVAL)
	fmt.Printf("readback after invalid %s\n", readTrim(pl1))
}

func cpufreq() {
	policies, err := filepath.Glob("/sys/devices/system/cpu/cpufreq/policy*")
	if err != nil {
		fmt.Printf("glob error: %v\n", err)
	}
	freqs := 0
	for _, p := range policies {
		if v, err := strconv.Atoi(readTrim(p + "/scaling_cur_freq")); err == nil && v > 0 {
			freqs++
		}
	}
	cpus, _ := filepath.Glob("/sys/devices/system/cpu/cpu[0-9]*")
	fmt.Printf("policies %d with a frequency %d; cpu directories %d\n", len(policies), freqs, len(cpus))
	sort.Strings(policies)
	if len(policies) > 0 {
		fmt.Printf("first policy %s driver %s\n", filepath.Base(policies[0]), readTrim(policies[0]+"/scaling_driver"))
	}
}

func cpuinfo() {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		fmt.Printf("cpuinfo error: %v\n", err)
		return
	}
	n := 0
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "processor\t:") {
			n++
		}
	}
	fmt.Printf("cpuinfo processors %d\n", n)
}

// What a GPU agent does: discovers the GPUs with nvidia-smi from PATH (a child the supervisor
// and the shim both serve), caps one, and reads the limit back.
func gpu() {
	query := func() string {
		out, err := exec.Command("nvidia-smi", "--query-gpu=index,power.limit", "--format=csv,noheader").CombinedOutput()
		if err != nil {
			return fmt.Sprintf("nvidia-smi: %v: %s", err, out)
		}
		return strings.TrimSpace(string(out))
	}
	lines := strings.Split(query(), "\n")
	fmt.Printf("gpus %d first %s\n", len(lines), lines[0])
	out, err := exec.Command("nvidia-smi", "-i", "0", "-pl", "300").CombinedOutput()
	fmt.Printf("pl err %v: %s", err, out)
	fmt.Printf("after %s\n", strings.Split(query(), "\n")[0])
}

func runChild() {
	out, err := exec.Command(os.Args[0], "child").CombinedOutput()
	fmt.Print(string(out))
	fmt.Printf("child err %v\n", err)
}

// Many goroutines over many threads open, read and pread the counter while others spin, so
// that asynchronous preemption (SIGURG) lands in the middle of supervised calls.
func stress() {
	var bad, done int64
	var stop int32
	var spin sync.WaitGroup
	for i := 0; i < 4; i++ {
		spin.Add(1)
		go func() {
			defer spin.Done()
			x := 0
			for atomic.LoadInt32(&stop) == 0 {
				x++
			}
			_ = x
		}()
	}
	shared, err := os.Open(zone + "/energy_uj")
	if err != nil {
		fmt.Printf("stress open: %v\n", err)
		return
	}
	var wg sync.WaitGroup
	for g := 0; g < 16; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runtime.LockOSThread() // one OS thread each: many threads in the supervised process
			var last uint64
			for i := 0; i < 150; i++ {
				v, err := strconv.ParseUint(readTrim(zone+"/energy_uj"), 10, 64)
				if err != nil || v < last {
					atomic.AddInt64(&bad, 1)
				}
				last = v
				if _, err := preadUint(shared); err != nil {
					atomic.AddInt64(&bad, 1)
				}
				atomic.AddInt64(&done, 1)
			}
		}()
	}
	wg.Wait()
	atomic.StoreInt32(&stop, 1)
	spin.Wait()
	shared.Close()
	fmt.Printf("stress %d reads, bad %d\n", done, bad)
}

func main() {
	mode := ""
	if len(os.Args) > 1 {
		mode = os.Args[1]
	}
	switch mode {
	case "child":
		child()
		return
	case "gpu":
		gpu()
		return
	case "wait":
		fmt.Println("ready")
		for {
			readTrim(zone + "/energy_uj")
			time.Sleep(10 * time.Millisecond)
		}
	case "orphan":
		cmd := exec.Command(os.Args[0], "later", os.Args[2])
		if err := cmd.Start(); err != nil {
			fmt.Printf("start: %v\n", err)
		}
		return
	case "later":
		for start := time.Now(); time.Since(start) < time.Minute; time.Sleep(10 * time.Millisecond) {
			if _, err := os.Stat(os.Args[2] + ".go"); err == nil {
				break
			}
		}
		os.WriteFile(os.Args[2], []byte(readTrim(zone+"/name")+"\n"), 0644)
		return
	}
	discover()
	energy()
	limits()
	cpufreq()
	cpuinfo()
	runChild()
	stress()
}
