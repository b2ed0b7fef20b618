package wave

import (
	"context"
	"sync"
)

// Each calls f(0)…f(n-1), up to workers at once, and returns once every
// call returned. The calls start in index order; once ctx is done no more
// start. With fewer than 2 workers (or n 1) they run one after another on
// the caller's goroutine.
// What f writes, it writes at its own index: the caller reads the results
// in index order, whatever order the calls ended in.
func Each(ctx context.Context, n, workers int, f func(i int)) {
	if workers <= 1 || n <= 1 {
		for i := 0; i < n && ctx.Err() == nil; i++ {
			f(i)
		}
		return
	}
	sem := make(chan struct{}, workers)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		sem <- struct{}{}
		if ctx.Err() != nil {
			<-sem
			break
		}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			f(i)
		}()
	}
	wg.Wait()
}
