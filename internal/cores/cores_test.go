package cores

import (
	"runtime"
	"sync/atomic"
	"testing"
)

// Every index is visited exactly once, whatever the list's length and the
// number of CPUs.
func TestEachVisitsEveryIndexOnce(t *testing.T) {
	for _, procs := range []int{1, 2, 4} {
		old := runtime.GOMAXPROCS(procs)
		for _, n := range []int{0, 1, chunk - 1, chunk, chunk + 1, 5*chunk + 3, 1000} {
			seen := make([]atomic.Int32, n)
			Each(n, func(i int) { seen[i].Add(1) })
			for i := range seen {
				if c := seen[i].Load(); c != 1 {
					t.Fatalf("GOMAXPROCS %d, n %d: index %d visited %d times", procs, n, i, c)
				}
			}
		}
		runtime.GOMAXPROCS(old)
	}
}
