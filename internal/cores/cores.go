// Package cores spreads independent work over the machine's CPUs.
package cores

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// chunk is how many items a goroutine takes at a time.
const chunk = 64

// Each calls fn for 0..n-1, in chunks on as many goroutines as there are
// CPUs; a list of one chunk or less stays on the calling goroutine. fn
// must be safe to call concurrently for different i.
func Each(n int, fn func(i int)) {
	workers := min(runtime.GOMAXPROCS(0), (n+chunk-1)/chunk)
	if workers <= 1 {
		for i := 0; i < n; i++ {
			fn(i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				start := int(next.Add(chunk)) - chunk
				if start >= n {
					return
				}
				for i := start; i < min(start+chunk, n); i++ {
					fn(i)
				}
			}
		}()
	}
	wg.Wait()
}
