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

// report --since reads each loop's summary (brought up to date as the
// engine does when a run ends), not its records: at ten times the history,
// and with the whole history inside the window (an iteration a second),
// it reads no more records than at a tenth of it, for 24 hours as for 7
// days; and it finds what reading every record finds.
func TestReportReadsOnlyTheSummary(t *testing.T) {
	now := time.Now()
	read := map[string]int64{}
	for _, c := range []struct {
		n     int
		every time.Duration
	}{{1000, 10 * time.Minute}, {10000, 10 * time.Minute}, {10000, time.Second}} {
		t.Run(fmt.Sprint(c.n, "x", c.every), func(t *testing.T) {
			t.Setenv("LOOPRINTER_STATE_DIR", t.TempDir())
			dir := t.TempDir()
			if err := histgen.Write(dir, histgen.Options{Name: "h", Iterations: c.n, Every: c.every, End: now, PerFile: 400}); err != nil {
				t.Fatal(err)
			}
			if _, err := loopdir.Dir(dir).Summary(); err != nil { // what the engine does after each run
				t.Fatal(err)
			}
			evs, _ := loopdir.Dir(dir).ReadRecordsInOrder()
			for _, window := range []time.Duration{24 * time.Hour, 7 * 24 * time.Hour} {
				since := now.Add(-window)
				before := record.BytesRead.Load()
				r, err := Build(since, now)
				if err != nil {
					t.Fatal(err)
				}
				got := record.BytesRead.Load() - before
				read[fmt.Sprint(c.n, c.every, window)] = got
				if len(r.Loops) != 1 {
					t.Fatalf("%d loops", len(r.Loops))
				}
				// What reading every record finds.
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
				t.Logf("%d iterations every %v, --since %v: %d bytes of records read, %d rollbacks, %d landings", c.n, c.every, window, got, len(rollbacks), len(landings))
			}
		})
	}
	for _, window := range []time.Duration{24 * time.Hour, 7 * 24 * time.Hour} {
		small := read[fmt.Sprint(1000, 10*time.Minute, window)]
		for _, every := range []time.Duration{10 * time.Minute, time.Second} {
			if got := read[fmt.Sprint(10000, every, window)]; got > small+16<<10 {
				t.Errorf("--since %v at 10,000 iterations every %v read %d bytes of records, at 1,000 %d: it grows with the history", window, every, got, small)
			}
		}
	}
}

// --since takes Go durations, days and weeks, and refuses the rest.
func TestParseSince(t *testing.T) {
	day := 24 * time.Hour
	for in, want := range map[string]time.Duration{"12h": 12 * time.Hour, "90m": 90 * time.Minute, "7d": 7 * day, "2w": 14 * day,
		"1.5d": 36 * time.Hour, "1w2d": 9 * day, "1d12h": 36 * time.Hour, " 24h ": day} {
		if got, err := ParseSince(in); err != nil || got != want {
			t.Errorf("%q: %v %v, want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "0", "0d", "-1d", "d", "7x", "1d1w", "7 d", "1e9w", "12", "ad", "1dd"} {
		if got, err := ParseSince(in); err == nil {
			t.Errorf("%q: %v, no error", in, got)
		}
	}
}
