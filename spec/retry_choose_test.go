package spec

import (
	"strings"
	"testing"
)

func init() {
	judgeCases = append(judgeCases,
		judgeCase{"retry.choose", "choose: rule to review (an attempt argues for itself)", func(l *Loop) { l.Retry.Choose = ChooseReview }, false, func(l *Loop) { l.Retry.BestOf = 3 }},
		judgeCase{"retry.choose", "choose: review to rule (the user's reviewer taken out)", func(l *Loop) { l.Retry.Choose = ChooseRule }, false, func(l *Loop) { l.Retry.BestOf, l.Retry.Choose = 3, ChooseReview }},
		judgeCase{"retry.choose", "choose: review left out (rule) to review", func(l *Loop) { l.Retry.Choose = ChooseReview }, false, func(l *Loop) { l.Retry.BestOf, l.Retry.Choose = 3, "" }},
		judgeCase{"retry.choose", "choose: rule written out where it was left out", func(l *Loop) { l.Retry.Choose = ChooseRule }, true, func(l *Loop) { l.Retry.BestOf = 3 }},
	)
}

// retry.choose: rule and review are read; bad values and a choose without
// a best-of are refused at the field's line and column.
func TestRetryChooseField(t *testing.T) {
	availableBestOf(t)
	head := "objective: x\nverify: [\"true\"]\nretry:\n"
	for body, want := range map[string]string{
		"  best_of: 3\n":                   ChooseRule,
		"  best_of: 3\n  choose: rule\n":   ChooseRule,
		"  best_of: 3\n  choose: review\n": ChooseReview,
	} {
		l, err := Parse([]byte(head+body), "/tmp/x/loop.yaml")
		if err != nil {
			t.Fatalf("%q: %v", body, err)
		}
		if got := l.Retry.ChooseOf(); got != want {
			t.Errorf("%q: choose %q, want %q", body, got, want)
		}
		if got := l.Retry.ChoosesByReview(); got != (want == ChooseReview) {
			t.Errorf("%q: ChoosesByReview %v", body, got)
		}
	}
	cases := []struct{ body, want string }{
		{"  best_of: 3\n  choose: reviewer\n", `5:11: retry.choose: "reviewer" is not known (rule: `},
		{"  best_of: 3\n  choose: Review\n", `5:11: retry.choose: "Review" is not known`},
		{"  best_of: 3\n  choose: [review]\n", "5:11:"},
		{"  choose: review\n", "4:11: retry.choose: review: it picks among a best-of's attempts, and retry.best_of is 0: set best_of to 2 or more"},
		{"  best_of: 1\n  choose: rule\n", "5:11: retry.choose: rule: it picks among a best-of's attempts, and retry.best_of is 1"},
	}
	for _, c := range cases {
		_, err := Parse([]byte(head+c.body), "/tmp/x/loop.yaml")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: got %v, want %q", c.body, err, c.want)
		}
	}
}

// The chooser's agent is agents.reviewer's when the loop file names one,
// else the build agent (agents.build over agent), never agent alone.
func TestChooserAgent(t *testing.T) {
	availableBestOf(t)
	base := "objective: x\nverify: [\"true\"]\nagent: {backend: claude, model: base}\nretry: {best_of: 2, choose: review}\n"
	l, err := Parse([]byte(base+"agents:\n  build: {model: builder}\n"), "/tmp/x/loop.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if a := l.AgentFor(PhaseChooser, false); a.Model != "builder" {
		t.Errorf("no agents.reviewer: chooser runs %q, want the build agent's builder", a.Model)
	}
	l, err = Parse([]byte(base+"agents:\n  build: {model: builder}\n  reviewer: {model: judge}\n"), "/tmp/x/loop.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if a := l.AgentFor(PhaseChooser, false); a.Model != "judge" {
		t.Errorf("agents.reviewer: chooser runs %q, want judge", a.Model)
	}
}

// An agent's edit of retry.choose, through Judge as the engine calls it:
// refused both ways, by name; writing out the default is kept.
func TestJudgeRetryChooseEdit(t *testing.T) {
	availableBestOf(t)
	doc := func(choose string) []byte {
		s := "objective: x\nverify: [\"true\"]\nretry:\n  best_of: 3\n"
		if choose != "" {
			s += "  choose: " + choose + "\n"
		}
		return []byte(s)
	}
	for _, c := range []struct {
		from, to string
		refused  bool
	}{{"review", "rule", true}, {"rule", "review", true}, {"", "review", true}, {"review", "", true}, {"", "rule", false}, {"rule", "", false}} {
		v := Judge(doc(c.from), doc(c.to), "/x/loop.yaml")
		got := strings.Join(v.Refused, "; ")
		if c.refused != strings.Contains(got, "retry.choose may not change") {
			t.Errorf("%q → %q: refused %q", c.from, c.to, v.Refused)
		}
	}
}

// retry.choose: review with the build agent's own model as the reviewer
// is legal but warned about; another model is not.
func TestRetryChooseSameModelWarning(t *testing.T) {
	availableBestOf(t)
	base := "objective: x\nverify: [\"true\"]\nobjective_verify: [\"true\"]\nagent: {backend: claude, model: base}\nretry: {best_of: 2, choose: review}\n"
	warned := func(body string) bool {
		l, err := Parse([]byte(base+body), "/tmp/x/loop.yaml")
		if err != nil {
			t.Fatal(err)
		}
		return strings.Contains(strings.Join(l.Warnings(), "\n"), "retry.choose: review: the reviewer that picks among a best-of's attempts is the build agent's model")
	}
	if !warned("") || !warned("agents:\n  reviewer: {model: base}\n") {
		t.Error("no warning when the build agent picks among its own attempts")
	}
	if warned("agents:\n  reviewer: {model: other}\n") {
		t.Error("a warning with another reviewer model")
	}
}
