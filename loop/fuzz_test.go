package loop

import "testing"

// FuzzCheckPlan: whatever an agent writes to plan.json, the checks answer
// with errors, never a panic.
func FuzzCheckPlan(f *testing.F) {
	for _, s := range []string{
		`{"tasks":[{"id":"T-001","title":"a","description":"b","targetFile":"c","passes":false,"notes":""}]}`,
		`{"tasks":[1,"x",null,{"id":null,"passes":"yes"}]}`, `{"tasks":null}`, `[]`, `{`, ``, `{"tasks":[{}]}`,
		`{"tasks":[{"id":"T-001","title":"a","description":"b","targetFile":"c","passes":false,"notes":"","depends_on":["T-002"]},{"id":"T-002","title":"a","description":"b","targetFile":"d","passes":false,"notes":"","depends_on":["T-001"]}]}`,
		`{"tasks":[{"id":"T-001","title":"a","description":"b","targetFile":"c","passes":false,"notes":"","depends_on":[1,null]}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, errs := CheckPlan(data)
		if len(errs) == 0 {
			if p == nil || len(p.Tasks) == 0 {
				t.Fatalf("no errors but no tasks for %q", data)
			}
			// A plan the checks accept always has a ready task while one is
			// open: no unknown dependency, no cycle.
			open := len(p.Tasks) - p.Done()
			if open > 0 && len(p.Ready()) == 0 {
				t.Fatalf("an accepted plan with %d open tasks has none ready: %q", open, data)
			}
			p.Next()
			p.Done()
		}
	})
}
