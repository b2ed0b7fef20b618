package loop

import "testing"

func TestCheckPlanAcceptsAGoodPlan(t *testing.T) {
	p, errs := CheckPlan([]byte(`{"tasks":[{"id":"T-001","title":"a","description":"b","targetFile":"c","passes":false,"notes":""},{"id":"T-1002","title":"a","description":"b","targetFile":"c","passes":true,"notes":"n"}]}`))
	if len(errs) != 0 {
		t.Fatal(errs)
	}
	if next, ok := p.Next(); !ok || next.ID != "T-001" || p.Done() != 1 {
		t.Errorf("next %v %v done %d", next, ok, p.Done())
	}
}

func TestCheckPlanRejects(t *testing.T) {
	for src, want := range map[string]string{
		`[]`:                     "not a valid JSON object",
		`{"tasks": []}`:          `"tasks" is empty`,
		`{"tasks": {}}`:          `"tasks" is not an array`,
		`{"plan": []}`:           `no "tasks" array`,
		`{"tasks": [{"id": 1}]}`: `task 1: "id" must be a string`,
	} {
		_, errs := CheckPlan([]byte(src))
		if len(errs) == 0 || !containsStr(errs, want) {
			t.Errorf("CheckPlan(%s) = %v, want an error containing %q", src, errs, want)
		}
	}
}

func containsStr(list []string, sub string) bool {
	for _, s := range list {
		if len(s) >= len(sub) && (s == sub || stringsContains(s, sub)) {
			return true
		}
	}
	return false
}

func stringsContains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}
