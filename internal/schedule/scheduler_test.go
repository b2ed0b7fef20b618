package schedule

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/spec"
)

// A firing while a run holds the loop is refused, recorded, and reported
// as data; the loop is never started twice.
func TestSchedulerRefusesWhileLocked(t *testing.T) {
	dir := t.TempDir()
	l := &spec.Loop{Name: "s", Path: filepath.Join(dir, "loop.yaml"), Dir: dir}
	lock, err := loopdir.AcquireLock(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Release()
	sch, _ := Parse(20*time.Millisecond, "")
	var got []Firing
	s := &Scheduler{Loop: l, Schedule: sch, Log: filepath.Join(dir, "log"), Count: 2, OnFire: func(f Firing) { got = append(got, f) }}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a guard against a hang only
	defer cancel()
	if n := s.Run(ctx); n != 2 {
		t.Fatalf("%d firings", n)
	}
	for _, f := range got {
		if !f.Refused || f.Started || f.PID != os.Getpid() || !strings.Contains(f.Message, "refused") {
			t.Errorf("%+v", f)
		}
	}
	evs, _ := loopdir.Dir(dir).ReadRecords()
	n := 0
	for _, e := range evs {
		if e.Event == record.ScheduleFire && e.Status == "refused" {
			n++
		}
	}
	if n != 2 {
		t.Errorf("%d refusals recorded, want 2", n)
	}
	if o := DecideOnce(l, "every 20ms"); !o.Locked || o.PID != os.Getpid() || o.Refusal.Event != record.ScheduleFire {
		t.Errorf("once: %+v", o)
	}
}

func TestFireCommandQuotes(t *testing.T) {
	l := &spec.Loop{Name: "s", Path: "/a b/loop.yaml", Dir: "/a b"}
	got := FireCommand(l, "/usr/bin/looprinter", "/l og")
	if got != `cd '/a b' && '/usr/bin/looprinter' schedule --once -f '/a b/loop.yaml' >> '/l og' 2>&1` {
		t.Error(got)
	}
}
