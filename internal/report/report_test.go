package report

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/looprinter/looprinter/internal/histgen"
	"github.com/looprinter/looprinter/internal/termtext"
	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/record"
)

// report --since reads, per loop, what its window holds: at ten times the
// history it reads about as many bytes, and finds what reading every
// record finds.
func TestReportReadsOnlyTheWindow(t *testing.T) {
	now := time.Now()
	read := map[int]int64{}
	for _, n := range []int{1000, 10000} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			t.Setenv("LOOPRINTER_STATE_DIR", t.TempDir())
			dir := t.TempDir()
			if err := histgen.Write(dir, histgen.Options{Name: "h", Iterations: n, End: now, PerFile: 400}); err != nil {
				t.Fatal(err)
			}
			for _, window := range []time.Duration{24 * time.Hour, 7 * 24 * time.Hour} {
				since := now.Add(-window)
				before := record.BytesRead.Load()
				r, err := Build(since, now)
				if err != nil {
					t.Fatal(err)
				}
				got := record.BytesRead.Load() - before
				if window == 24*time.Hour {
					read[n] = got
				}
				if len(r.Loops) != 1 {
					t.Fatalf("%d loops", len(r.Loops))
				}
				// What reading every record finds.
				evs, _ := loopdir.Dir(dir).ReadRecordsInOrder()
				var rollbacks, landings []string
				for _, ev := range evs {
					if ev.TS.Before(since) {
						continue
					}
					switch ev.Event {
					case record.Rollback:
						rollbacks = append(rollbacks, termtext.Line(ev.Message))
					case record.Land:
						landings = append(landings, termtext.Line(ev.Message))
					}
				}
				l := r.Loops[0]
				if !slices.Equal(l.Rollbacks, rollbacks) || !slices.Equal(l.Landings, landings) {
					t.Errorf("%v: rollbacks %v landings %v, want %v %v", window, l.Rollbacks, l.Landings, rollbacks, landings)
				}
				t.Logf("%d iterations, --since %v: %d bytes read, %d rollbacks, %d landings", n, window, got, len(rollbacks), len(landings))
			}
		})
	}
	if read[10000] > 2*read[1000]+64<<10 {
		t.Errorf("at 10,000 iterations the report read %d bytes, at 1,000 %d: it grows with the history", read[10000], read[1000])
	}
}
