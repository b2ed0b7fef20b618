package loop

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

// A task's touches are read from plan.json and checked; two tasks whose
// globs overlap are never picked for the same wave.
func TestPlanTouches(t *testing.T) {
	plan := func(touches ...any) []byte {
		var tasks []map[string]any
		for i, tc := range touches {
			m := map[string]any{"id": []string{"T-001", "T-002", "T-003"}[i], "title": "t", "description": "d",
				"targetFile": []string{"a.txt", "b.txt", "c.txt"}[i], "passes": false, "notes": ""}
			if tc != nil {
				m["touches"] = tc
			}
			tasks = append(tasks, m)
		}
		b, _ := json.Marshal(map[string]any{"tasks": tasks})
		return b
	}
	p, errs := CheckPlan(plan([]string{"src/**"}, []string{"src/api/x.go"}, nil))
	if len(errs) > 0 {
		t.Fatalf("valid touches refused: %v", errs)
	}
	if got := strings.Join(p.Tasks[0].Touches, ","); got != "src/**" {
		t.Fatalf("touches read as %q", got)
	}
	w := pickWave(p, nil, 3, waveBudget{IterationsLeft: 10, CostLeft: math.Inf(1)})
	if got := waveIDs(w); got != "T-001,T-003" {
		t.Fatalf("wave %s: T-002 overlaps T-001 and waits", got)
	}
	for tc, want := range map[string]string{
		`"src"`:           `task 1 (T-001): "touches" must be an array of file globs`,
		`["../x"]`:        `"touches" glob "../x" climbs out of the loop folder`,
		`["/etc/passwd"]`: `is absolute`,
		`["a/[b"]`:        `is not a valid pattern`,
	} {
		_, errs := CheckPlan(plan(json.RawMessage(tc)))
		if !strings.Contains(strings.Join(errs, "\n"), want) {
			t.Errorf("touches %s: errors %q do not say %q", tc, errs, want)
		}
	}
}
