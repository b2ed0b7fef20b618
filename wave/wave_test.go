package wave

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/looprinter/looprinter/sandbox"
)

// task is a fake of the engine's plan task.
type task struct {
	id      string
	touches []string
}

func (t task) TaskID() string        { return t.id }
func (t task) TaskTouches() []string { return t.touches }

func ids(ts []task) string {
	var out []string
	for _, t := range ts {
		out = append(out, t.id)
	}
	return strings.Join(out, ",")
}

func TestPickSlotsBudgetsAndInFlight(t *testing.T) {
	ready := []task{{id: "T-001"}, {id: "T-002"}, {id: "T-003"}, {id: "T-004"}}
	free := Budget{IterationsLeft: 10, CostLeft: math.Inf(1)}
	if got := ids(Pick(ready, nil, 3, free)); got != "T-001,T-002,T-003" {
		t.Fatalf("three slots: %s", got)
	}
	if got := ids(Pick(ready, map[string]bool{"T-001": true}, 3, free)); got != "T-002,T-003" {
		t.Fatalf("one in flight: %s", got)
	}
	if got := ids(Pick(ready, nil, 3, Budget{IterationsLeft: 2, CostLeft: math.Inf(1)})); got != "T-001,T-002" {
		t.Fatalf("two runs left: %s", got)
	}
	// $1 left, $0.40 a run: the first, then a second (0.80), never a third.
	if got := ids(Pick(ready, nil, 4, Budget{IterationsLeft: 10, CostLeft: 1, PerRun: 0.4})); got != "T-001,T-002" {
		t.Fatalf("cost reserve: %s", got)
	}
	if got := ids(Pick(ready, nil, 4, Budget{IterationsLeft: 10, CostLeft: 1, Unknown: true})); got != "T-001" {
		t.Fatalf("unknown reserve under a cost budget: %s", got)
	}
}

// Two tasks whose declared files overlap never share a wave: the later
// one waits, and a task past it that overlaps neither still starts.
func TestPickTouches(t *testing.T) {
	ready := []task{
		{id: "T-001", touches: []string{"src/api/**"}},
		{id: "T-002", touches: []string{"src/api/handler.go"}},
		{id: "T-003", touches: []string{"docs/*.md"}},
		{id: "T-004"},
	}
	got := ids(Pick(ready, nil, 4, Budget{IterationsLeft: 10, CostLeft: math.Inf(1)}))
	if got != "T-001,T-003,T-004" {
		t.Fatalf("wave %s; want T-002 left for a later wave", got)
	}
}

func TestPickBestAndFailure(t *testing.T) {
	pass := func(i, lines int) Attempt {
		return Attempt{Index: i, Pass: true, Change: Change{Lines: lines, Files: 1}}
	}
	if i, ok := PickBest([]Attempt{{Index: 0}, pass(1, 30), pass(2, 10)}); !ok || i != 2 {
		t.Fatalf("PickBest = %d, %v", i, ok)
	}
	if _, ok := PickBest([]Attempt{{Index: 0}, {Index: 1}}); ok {
		t.Fatal("none passing, yet one kept")
	}
	f := Failure("T-001", []Attempt{{Index: 0, Signal: "FAIL one"}, {Index: 1}})
	if !strings.Contains(f, "## attempt 1") || !strings.Contains(f, "FAIL one") || !strings.Contains(f, "without output") {
		t.Fatalf("failure:\n%s", f)
	}
}

func TestSlotLayerNameAndSaving(t *testing.T) {
	if SlotLayerName(0) != "loop" || SlotLayerName(2) != "loop-3" {
		t.Fatalf("slot names %q %q", SlotLayerName(0), SlotLayerName(2))
	}
	if _, line := Saving(nil, 0); line != "" {
		t.Fatalf("nothing saved, yet %q", line)
	}
}

// Two runs' layers merged in apply order, without an engine: the second
// run's change to other lines of a file the first changed merges in its
// layer; the same line two ways conflicts.
func TestMergerPrepare(t *testing.T) {
	ctx := context.Background()
	dir, priv := t.TempDir(), t.TempDir()
	write := func(root, rel, text string) {
		p := filepath.Join(root, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(text), 0o644)
	}
	write(dir, "f.txt", "a\nb\nc\nd\ne\n")
	m := NewMerger()
	apply := func(text string) string {
		l := sandbox.Layer{Target: dir, Upper: t.TempDir()}
		write(l.Upper, "f.txt", text)
		why, err := m.Prepare(ctx, dir, priv, l)
		if err != nil {
			t.Fatal(err)
		}
		if why == "" {
			b, _ := os.ReadFile(filepath.Join(l.Upper, "f.txt"))
			write(dir, "f.txt", string(b))
			m.Log.Add(m.Paths, m.Replaced...)
		}
		return why
	}
	if why := apply("A\nb\nc\nd\ne\n"); why != "" {
		t.Fatal(why)
	}
	if why := apply("a\nb\nc\nd\nE\n"); why != "" {
		t.Fatal(why)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "f.txt")); string(b) != "A\nb\nc\nd\nE\n" {
		t.Fatalf("merged %q", b)
	}
	if why := apply("X\nb\nc\nd\ne\n"); !strings.Contains(why, "conflicts") {
		t.Fatalf("same line two ways: %q", why)
	}
}
