package wave

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Each runs the calls at once: three calls that each wait (up to 20 s)
// for the other two to have started all end met; one after another, the
// first would wait alone.
func TestEachAtOnce(t *testing.T) {
	var started sync.WaitGroup
	started.Add(3)
	all := make(chan struct{})
	go func() { started.Wait(); close(all) }()
	met := make([]bool, 3)
	Each(context.Background(), 3, 3, func(i int) {
		started.Done()
		select {
		case <-all:
			met[i] = true
		case <-time.After(20 * time.Second):
		}
	})
	for i, ok := range met {
		if !ok {
			t.Fatalf("call %d waited alone: the calls ran one after another", i)
		}
	}
}

// No more than workers calls run at once, every index is called once,
// and a done context starts none.
func TestEachBound(t *testing.T) {
	var in, peak atomic.Int32
	calls := make([]atomic.Int32, 7)
	Each(context.Background(), len(calls), 2, func(i int) {
		n := in.Add(1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		calls[i].Add(1)
		in.Add(-1)
	})
	if p := peak.Load(); p > 2 {
		t.Fatalf("%d calls at once, the bound is 2", p)
	}
	for i := range calls {
		if n := calls[i].Load(); n != 1 {
			t.Fatalf("index %d called %d times", i, n)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	ran := false
	Each(ctx, 3, 2, func(int) { ran = true })
	Each(ctx, 3, 1, func(int) { ran = true })
	if ran {
		t.Fatal("a call started after the context was done")
	}
	var order []int
	Each(context.Background(), 4, 1, func(i int) { order = append(order, i) })
	if len(order) != 4 || order[0] != 0 || order[3] != 3 {
		t.Fatalf("one worker: calls in order %v, want 0 1 2 3", order)
	}
}
