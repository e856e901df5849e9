// A Go agent in emulated time for tests/cli/test_emutime.sh (docs/time.md "Go agents"): reads
// package 0's energy_uj, sleeps 20 s with time.Sleep, reads again, waits one 20 s tick of a
// time.Ticker, reads again, and prints for each wait the time.Now() deltas (monotonic and wall
// clock, in ns) and the energy delta (uJ). With -cat it also runs cat on energy_uj after each
// read (a dynamically linked libc program: the preload route's answer at the same emulated
// instant, time standing still while the Go agent waits for its child).
// Usage: emutime_agent [-cat]
package main

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

const zone = "/sys/class/powercap/intel-rapl:0/energy_uj"

func energy() int64 {
	b, err := os.ReadFile(zone)
	if err != nil {
		fmt.Println("read:", err)
		os.Exit(1)
	}
	v, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		fmt.Println("parse:", err)
		os.Exit(1)
	}
	return v
}

func main() {
	withCat := len(os.Args) > 1 && os.Args[1] == "-cat"
	type point struct {
		t time.Time
		e int64
	}
	read := func(name string) point {
		p := point{time.Now(), energy()}
		if withCat {
			out, err := exec.Command("cat", zone).Output()
			c := strings.TrimSpace(string(out))
			if c == strconv.FormatInt(p.e, 10) {
				fmt.Printf("%s same-as-cat true\n", name)
			} else {
				fmt.Printf("%s same-as-cat false: go %d, cat %q (%v)\n", name, p.e, c, err)
			}
		}
		return p
	}
	say := func(name string, a, b point) {
		fmt.Printf("%s mono %d wall %d energy %d\n", name, b.t.Sub(a.t).Nanoseconds(),
			b.t.UnixNano()-a.t.UnixNano(), b.e-a.e)
	}
	p0 := read("start")
	time.Sleep(20 * time.Second)
	p1 := read("sleep")
	say("sleep", p0, p1)
	tk := time.NewTicker(20 * time.Second)
	<-tk.C
	tk.Stop()
	p2 := read("ticker")
	say("ticker", p1, p2)
}
