//go:build woprofile

package main

import (
	"os"
	"runtime"
	"runtime/pprof"
)

// In profiling builds (go build -tags woprofile), WO_CPUPROFILE=FILE writes
// a CPU profile of the whole process and WO_MEMPROFILE=FILE a heap profile
// at exit, for go tool pprof. The CPU profile samples at 1 kHz, since one
// run of a few steps lasts only tens of milliseconds.
func init() {
	startProfile = func() func() {
		var cpu *os.File
		if p := os.Getenv("WO_CPUPROFILE"); p != "" {
			if f, err := os.Create(p); err == nil {
				runtime.SetCPUProfileRate(1000)
				if pprof.StartCPUProfile(f) == nil {
					cpu = f
				}
			}
		}
		return func() {
			if cpu != nil {
				pprof.StopCPUProfile()
				cpu.Close()
			}
			if p := os.Getenv("WO_MEMPROFILE"); p != "" {
				if f, err := os.Create(p); err == nil {
					pprof.Lookup("allocs").WriteTo(f, 0)
					f.Close()
				}
			}
		}
	}
}
