// seccomp_bench.go: what a Go agent pays under hwemu exec's seccomp supervisor, as Go agents
// read sysfs (the Go runtime makes its system calls itself, so only the supervisor can answer
// them). Standard library only; bench/seccomp_bench.sh builds it with Debian's golang-go. Prints
// the median nanoseconds per operation over BATCHES batches of N:
//
//	orc PATH       os.Open + one Read + Close (what seccomp_bench.c's orc does)
//	readfile PATH  os.ReadFile (open, fstat for the size, reads to EOF, close), as
//	               node_exporter and most Go agents read a sysfs value
//	pread PATH     ReadAt(buf, 0) on one file kept open (libpowercap's way)
//
// Usage: seccomp_bench_go MODE PATH [BATCHES] [N]
package main

import (
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"time"
)

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: seccomp_bench_go orc|readfile|pread PATH [BATCHES] [N]")
		os.Exit(2)
	}
	mode, path := os.Args[1], os.Args[2]
	batches, per := 21, 2000
	if len(os.Args) > 3 {
		batches, _ = strconv.Atoi(os.Args[3])
	}
	if len(os.Args) > 4 {
		per, _ = strconv.Atoi(os.Args[4])
	}
	var kept *os.File
	if mode == "pread" {
		f, err := os.Open(path)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		kept = f
	}
	op := func() (int, error) {
		buf := make([]byte, 128)
		switch mode {
		case "orc":
			f, err := os.Open(path)
			if err != nil {
				return 0, err
			}
			n, err := f.Read(buf)
			f.Close()
			return n, err
		case "readfile":
			b, err := os.ReadFile(path)
			return len(b), err
		case "pread":
			n, err := kept.ReadAt(buf, 0)
			if err == io.EOF {
				err = nil
			}
			return n, err
		}
		return 0, fmt.Errorf("unknown mode %q", mode)
	}
	ns := make([]float64, batches)
	for b := range ns {
		t0 := time.Now()
		for i := 0; i < per; i++ {
			if n, err := op(); err != nil || n == 0 {
				fmt.Fprintf(os.Stderr, "%s %s: %d bytes, %v\n", mode, path, n, err)
				os.Exit(1)
			}
		}
		ns[b] = float64(time.Since(t0).Nanoseconds()) / float64(per)
	}
	sort.Float64s(ns)
	fmt.Printf("%.0f\n", ns[batches/2])
}
