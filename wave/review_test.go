package wave

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/looprinter/looprinter/record"
)

// fakeReview is a Review over real layers in temp folders whose reviewer
// answers final (or why, or err); it counts the runs and keeps the
// records.
func fakeReview(t *testing.T, final, why string, err error) (*Review, *[]string, *[]record.Event) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.go"), []byte("package a\n"), 0o644)
	uppers := []string{t.TempDir(), t.TempDir(), t.TempDir()}
	for i, u := range uppers {
		os.WriteFile(filepath.Join(u, "a.go"), []byte("package a\n\n// attempt "+string(rune('1'+i))+"\n"), 0o644)
	}
	var prompts []string
	var events []record.Event
	return &Review{
		Asked:    true,
		Viewable: func() bool { return true },
		Dir:      dir,
		Upper:    func(i int) string { return uppers[i] },
		Nonce:    func() string { return "n0nce" },
		Run: func(_ context.Context, prompt string) (string, string, error) {
			prompts = append(prompts, prompt)
			return final, why, err
		},
		Emit: func(ev record.Event) { events = append(events, ev) },
	}, &prompts, &events
}

// The reviewer runs only when asked and more than one attempt passed; it
// sees the passing attempts' diffs; a pick that names a passing attempt
// counts; a bad answer, no answer or no layer of its own keeps the rule's
// pick with a warning; its stop is the best-of's.
func TestReviewChoose(t *testing.T) {
	ctx := context.Background()
	task := TaskText{ID: "T-1", Title: "fix"}
	results := []Attempt{{Index: 0, Pass: true}, {Index: 1}, {Index: 2, Pass: true}}

	v, prompts, events := fakeReview(t, `{"keep": 3, "reason": "general"}`, "", nil)
	c, err := v.Choose(ctx, task, results)
	if err != nil || c.Chosen != 3 || c.Reason != "general" || c.Refused != "" || len(*events) != 0 {
		t.Errorf("a good answer: %+v %v %v", c, err, *events)
	}
	if len(*prompts) != 1 || !strings.Contains((*prompts)[0], "| +// attempt 3") || strings.Contains((*prompts)[0], "attempt 2\n") {
		t.Errorf("prompt: %q", *prompts)
	}

	v.Asked = false
	if c, err := v.Choose(ctx, task, results); err != nil || c != (Choice{}) || len(*prompts) != 1 {
		t.Errorf("not asked: %+v %v, %d runs", c, err, len(*prompts))
	}
	v.Asked = true
	if c, _ := v.Choose(ctx, task, []Attempt{{Pass: true}, {Index: 1}}); c != (Choice{}) || len(*prompts) != 1 {
		t.Errorf("one passing: %+v, %d runs", c, len(*prompts))
	}

	v.Viewable = func() bool { return false }
	if c, _ := v.Choose(ctx, task, results); !strings.Contains(c.Refused, "copy-on-write layer of its own") || len(*prompts) != 1 || len(*events) != 1 || (*events)[0].Kind != "best_of_review" {
		t.Errorf("no layer: %+v, %d runs, %v", c, len(*prompts), *events)
	}

	v, _, events = fakeReview(t, `{"keep": 2, "reason": "I like it"}`, "", nil)
	if c, err := v.Choose(ctx, task, results); err != nil || c.Chosen != 0 || !strings.Contains(c.Refused, "names an attempt that did not pass") || len(*events) != 1 {
		t.Errorf("a failing pick: %+v %v %v", c, err, *events)
	}
	v, _, _ = fakeReview(t, "", "the reviewer's run ended without an answer: blocked", nil)
	if c, err := v.Choose(ctx, task, results); err != nil || c.Chosen != 0 || !strings.Contains(c.Refused, "ended without an answer") {
		t.Errorf("no answer: %+v %v", c, err)
	}
	stop := errors.New("interrupted")
	v, _, _ = fakeReview(t, `{"keep": 1, "reason": "x"}`, "", stop)
	if c, err := v.Choose(ctx, task, results); !errors.Is(err, stop) || c.Chosen != 0 {
		t.Errorf("a stop: %+v %v", c, err)
	}
}
