package loop

import "testing"

// FuzzCheckPlan: whatever an agent writes to plan.json, the checks answer
// with errors, never a panic.
func FuzzCheckPlan(f *testing.F) {
	for _, s := range []string{
		`{"tasks":[{"id":"T-001","title":"a","description":"b","targetFile":"c","passes":false,"notes":""}]}`,
		`{"tasks":[1,"x",null,{"id":null,"passes":"yes"}]}`, `{"tasks":null}`, `[]`, `{`, ``, `{"tasks":[{}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, errs := CheckPlan(data)
		if len(errs) == 0 {
			if p == nil || len(p.Tasks) == 0 {
				t.Fatalf("no errors but no tasks for %q", data)
			}
			p.Next()
			p.Done()
		}
	})
}
