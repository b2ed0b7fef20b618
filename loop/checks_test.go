package loop

import "testing"

func TestSignatureIgnoresNoise(t *testing.T) {
	a := "--- FAIL: TestParse (0.02s)\n    parse_test.go:12: at 2026-11-30T01:02:03Z in /tmp/go-build123/x pid 4411 addr 0xc000123456 took 35ms"
	b := "--- FAIL: TestParse (1.90s)\n    parse_test.go:12: at 2026-12-01T09:08:07Z in /tmp/go-build999/y pid 17 addr 0xc000ffffff took 2s"
	if Signature(a) != Signature(b) {
		t.Errorf("same failure, different signatures:\n%s\n%s", normalize(a), normalize(b))
	}
	c := "--- FAIL: TestParse (0.02s)\n    parse_test.go:13: want 3, got 4"
	if Signature(a) == Signature(c) {
		t.Error("different failures share a signature")
	}
}

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
