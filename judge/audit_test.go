package judge

import (
	"context"
	"strings"
	"testing"

	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/spec"
)

// fakeAuditor answers with the findings over the bar, or with no valid
// answer at all; it records the prompt it was given.
func fakeAuditor(valid bool, over []Finding, prompt *string) Auditor {
	runs := 0
	return Auditor{
		Agent: func() string { return "fake/auditor" },
		Next: func() (string, string) {
			runs++
			return "working-records/review/audit-findings.json", "output/review/audit-findings.json"
		},
		Ask: func(_ context.Context, p, _ string) (bool, []string, error) {
			*prompt = p
			if !valid {
				return false, []string{"not JSON"}, nil
			}
			return true, nil, nil
		},
		Findings: func(_, _ string) (int, []Finding) { return len(over) + 1, over },
		Touched:  func() []string { return []string{"calc.go", "calc_test.go"} },
		Schema:   `{"findings": []}`,
	}
}

// The audit keeps a loop from DONE when the auditor finds test gaming at or
// above the bar, and when it gives no valid answer (it fails closed); a
// clean answer lets it end, and an audit that is off is never run.
func TestJudgeAudit(t *testing.T) {
	gaming := []Finding{{Severity: "critical", Place: "calc.go:12", Title: "returns 42 for the tested input", Detail: "special-cased"}}
	for _, c := range []struct {
		name  string
		on    bool
		valid bool
		over  []Finding
		want  string // in the signal; "" for none
	}{
		{"gaming", true, true, gaming, "[critical] calc.go:12: returns 42 for the tested input — special-cased"},
		{"invalid answer", true, false, nil, "no valid findings JSON (not JSON)"},
		{"clean", true, true, nil, ""},
		{"off", false, true, gaming, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			j, evs := newJudge(t, &spec.Loop{Objective: "add numbers", Verify: []string{"go test ./..."}, Audit: spec.Audit{On: c.on, Bar: "major"}})
			var prompt string
			j.Auditor = fakeAuditor(c.valid, c.over, &prompt)
			sig, err := j.Audit(context.Background(), "verify")
			if err != nil {
				t.Fatal(err)
			}
			if c.want == "" && sig != "" || c.want != "" && !strings.Contains(sig, c.want) {
				t.Fatalf("signal %q, want %q", sig, c.want)
			}
			if !c.on {
				if prompt != "" || len(*evs) != 0 {
					t.Errorf("an audit that is off ran: %q %+v", prompt, *evs)
				}
				return
			}
			for _, s := range []string{"add numbers", "`go test ./...`", "- calc_test.go", "output/review/audit-findings.json", `{"findings": []}`} {
				if !strings.Contains(prompt, s) {
					t.Errorf("the prompt lacks %q", s)
				}
			}
			if len(*evs) != 1 || (*evs)[0].Event != record.Verify || (*evs)[0].Gate != "audit" || *(*evs)[0].Pass != (c.want == "") || ((*evs)[0].Signature == "") != (c.want == "") {
				t.Errorf("records %+v", *evs)
			}
		})
	}
	// Without the engine's auditor, an audit that is on fails closed.
	j, _ := newJudge(t, &spec.Loop{Audit: spec.Audit{On: true, Bar: "major"}})
	if sig, _ := j.Audit(context.Background(), "verify"); sig == "" {
		t.Error("an audit that cannot run let the loop end")
	}
}
