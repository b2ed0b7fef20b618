package forge_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/looprinter/looprinter/forge"
	"github.com/looprinter/looprinter/forge/github"
	"github.com/looprinter/looprinter/internal/fakegithub"
	"github.com/looprinter/looprinter/internal/testkit"
)

const tok = "ghp_workTestToken0123456789abcdefghij"

type fixture struct {
	s    *fakegithub.Server
	c    *github.Client
	work string // a repository with a commit on looprinter/issue-1
}

func setup(t *testing.T) fixture {
	t.Helper()
	s, err := fakegithub.Start(tok)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	s.AddRepo("acme/widget")
	bare := filepath.Join(t.TempDir(), "remote.git")
	testkit.Git(t, "", "init", "-q", "--bare", bare)
	s.SetGitDir("acme/widget", bare)
	c, err := github.New("acme/widget", s.URL, tok)
	if err != nil {
		t.Fatal(err)
	}
	c.Remote = bare
	work := t.TempDir()
	testkit.Git(t, work, "init", "-q", "-b", "looprinter/issue-1")
	os.WriteFile(filepath.Join(work, "a.txt"), []byte("a\n"), 0o644)
	testkit.Git(t, work, "add", "a.txt")
	testkit.Git(t, work, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "a")
	return fixture{s, c, work}
}

var members = forge.Allow{Associations: []string{"OWNER", "MEMBER"}}

func TestBeginRefusesWhatMayNotStartWork(t *testing.T) {
	f := setup(t)
	ctx := context.Background()
	open := f.s.AddIssue("acme/widget", fakegithub.Issue{Title: "ok", Author: "alice", Association: "MEMBER"})
	stranger := f.s.AddIssue("acme/widget", fakegithub.Issue{Title: "x", Author: "mallory", Association: "NONE"})
	closed := f.s.AddIssue("acme/widget", fakegithub.Issue{Title: "x", Author: "alice", Association: "MEMBER", State: "closed"})
	pull := f.s.AddIssue("acme/widget", fakegithub.Issue{Title: "x", Author: "alice", Association: "MEMBER", Pull: &fakegithub.Pull{Head: "h", Base: "main"}})
	w, err := forge.Begin(ctx, f.c, open, members)
	if err != nil || w.Issue.Title != "ok" || w.Branch != "looprinter/issue-1" {
		t.Fatalf("Begin: %+v, %v", w, err)
	}
	for n, want := range map[int]string{stranger: "mallory (NONE) is not allowed", closed: "is closed", pull: "is a pull request"} {
		_, err := forge.Begin(ctx, f.c, n, members)
		if !errors.Is(err, forge.ErrNotAllowed) || !strings.Contains(err.Error(), want) {
			t.Errorf("issue %d: %v, want %q", n, err, want)
		}
	}
	if _, err := forge.Begin(ctx, f.c, 0, members); err == nil || errors.Is(err, forge.ErrNotAllowed) {
		t.Errorf("issue 0: %v", err)
	}
	if _, err := forge.Begin(ctx, f.c, 77, members); !github.NotFound(err) {
		t.Errorf("issue 77: %v", err)
	}
	// Reading an issue writes nothing to the forge.
	for _, q := range f.s.Requests() {
		if !strings.HasPrefix(q, "GET ") {
			t.Errorf("Begin wrote: %s", q)
		}
	}
	if got := w.Objective("  Resolve the issue below.\n", "abcd"); !strings.HasPrefix(got, "Resolve the issue below.\n\n# The issue to resolve: acme/widget#1\n") || !strings.Contains(got, "~~~issue-abcd\n| Title: ok\n") {
		t.Errorf("objective %q", got)
	}
	if got := w.Objective("", "abcd"); !strings.HasPrefix(got, "# The issue to resolve") {
		t.Errorf("objective without the loop's own %q", got)
	}
}

func TestFinishDoneOpensOnePullThenUpdatesIt(t *testing.T) {
	f := setup(t)
	ctx := context.Background()
	n := f.s.AddIssue("acme/widget", fakegithub.Issue{Title: "Fix   the\nparser", Author: "alice", Association: "MEMBER", Labels: []string{"bug", forge.LabelBlocked}})
	w, err := forge.Begin(ctx, f.c, n, members)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Started(ctx, "widget", w.Branch); err != nil {
		t.Fatal(err)
	}
	if is := f.s.Snapshot("acme/widget").Issues[n]; strings.Join(is.Labels, ",") != "bug,"+forge.LabelRunning || !strings.Contains(is.Comments[0].Body, "loop `widget`, branch `looprinter/issue-1`") {
		t.Fatalf("after Started: %+v", is)
	}
	stop := forge.Stop{Verdict: "DONE", Done: true, Report: "== looprinter: DONE (exit 0) ==\n```evil```\n", Push: true, Dir: f.work}
	fin, err := w.Finish(ctx, stop)
	if err != nil || fin.Pull == nil || !fin.Created || fin.Pull.Draft {
		t.Fatalf("Finish: %+v, %v", fin, err)
	}
	r := f.s.Snapshot("acme/widget")
	pr := r.Issues[fin.Pull.Number]
	if pr.Title != "Fix the parser" || pr.Pull.Base != "main" || pr.Pull.Head != "looprinter/issue-1" {
		t.Fatalf("pull %+v %+v", pr, pr.Pull)
	}
	// The report is code, in a fence longer than its own backticks.
	if !strings.HasPrefix(pr.Body, "Resolves #1.\n\n") || !strings.Contains(pr.Body, "````text\n== looprinter: DONE (exit 0) ==\n```evil```\n````\n") {
		t.Fatalf("body %q", pr.Body)
	}
	is := r.Issues[n]
	if strings.Join(is.Labels, ",") != "bug,"+forge.LabelDone {
		t.Fatalf("labels %v", is.Labels)
	}
	if last := is.Comments[len(is.Comments)-1].Body; !strings.Contains(last, "**DONE**") || !strings.Contains(last, fin.Pull.URL) {
		t.Fatalf("comment %q", last)
	}
	// Again (a second run): the same pull request, its body replaced.
	stop.Report = "second report"
	fin2, err := w.Finish(ctx, stop)
	if err != nil || fin2.Created || fin2.Pull.Number != fin.Pull.Number {
		t.Fatalf("second Finish: %+v, %v", fin2, err)
	}
	pulls := 0
	for _, is := range f.s.Snapshot("acme/widget").Issues {
		if is.Pull != nil {
			pulls++
			if !strings.Contains(is.Body, "second report") {
				t.Fatalf("not updated: %q", is.Body)
			}
		}
	}
	if pulls != 1 {
		t.Fatalf("%d pull requests", pulls)
	}
}

func TestFinishNotDoneIsADraftOrNothing(t *testing.T) {
	f := setup(t)
	ctx := context.Background()
	n := f.s.AddIssue("acme/widget", fakegithub.Issue{Title: "t", Author: "alice", Association: "MEMBER"})
	w, _ := forge.Begin(ctx, f.c, n, members)
	// No work to show: no push, no pull request; the report is in the
	// comment, and the label says blocked.
	fin, err := w.Finish(ctx, forge.Stop{Verdict: "NO PROGRESS", Report: "why: stuck", Dir: f.work})
	if err != nil || fin.Pull != nil {
		t.Fatalf("%+v, %v", fin, err)
	}
	is := f.s.Snapshot("acme/widget").Issues[n]
	if c := is.Comments[len(is.Comments)-1].Body; !strings.Contains(c, "**NO PROGRESS**. No work to show") || !strings.Contains(c, "```text\nwhy: stuck\n```") {
		t.Fatalf("comment %q", c)
	}
	if strings.Join(is.Labels, ",") != forge.LabelBlocked {
		t.Fatalf("labels %v", is.Labels)
	}
	for _, q := range f.s.Requests() {
		if strings.Contains(q, "/pulls") {
			t.Fatalf("a pull request was asked for: %s", q)
		}
	}
	// Work kept: a draft.
	fin, err = w.Finish(ctx, forge.Stop{Verdict: "BUDGET SPENT", Report: "r", Push: true, Dir: f.work, Base: "develop"})
	if err != nil || fin.Pull == nil || !fin.Pull.Draft || fin.Pull.Base != "develop" {
		t.Fatalf("draft: %+v, %v", fin.Pull, err)
	}
	is = f.s.Snapshot("acme/widget").Issues[fin.Pull.Number]
	if !strings.HasPrefix(is.Body, "Work on #1, not done: the loop stopped BUDGET SPENT") {
		t.Fatalf("draft body %q", is.Body)
	}
}

func TestFinishSaysWhenThePushFails(t *testing.T) {
	f := setup(t)
	ctx := context.Background()
	n := f.s.AddIssue("acme/widget", fakegithub.Issue{Title: "t", Author: "alice", Association: "MEMBER"})
	w, _ := forge.Begin(ctx, f.c, n, members)
	f.c.Remote = filepath.Join(t.TempDir(), "no-such-remote")
	fin, err := w.Finish(ctx, forge.Stop{Verdict: "DONE", Done: true, Report: "r", Push: true, Dir: f.work})
	if err == nil || fin.Pull != nil || !strings.Contains(err.Error(), "git push") {
		t.Fatalf("%+v, %v", fin, err)
	}
	is := f.s.Snapshot("acme/widget").Issues[n]
	if c := is.Comments[len(is.Comments)-1].Body; !strings.Contains(c, "The pull request could not be opened: git push") {
		t.Fatalf("comment %q", c)
	}
	if strings.Contains(err.Error(), tok) {
		t.Fatal("the token is in the error")
	}
}

func TestPullBodyIsCut(t *testing.T) {
	b := forge.PullBody(3, forge.Stop{Verdict: "DONE", Done: true, Report: strings.Repeat("x", 70000)})
	if len(b) > 65536 || !strings.Contains(b, "(cut: the whole report is in the loop's records)") {
		t.Fatalf("body of %d", len(b))
	}
	if got := forge.PullTitle(forge.Issue{Title: strings.Repeat("é", 300)}); len([]rune(got)) != 201 {
		t.Fatalf("title of %d runes", len([]rune(got)))
	}
}

func TestFinishWithTheCIGate(t *testing.T) {
	f := setup(t)
	ctx := context.Background()
	head := strings.TrimSpace(output(t, f.work, "git", "rev-parse", "HEAD"))
	gate := &forge.CIGate{Required: []string{"test"}, Timeout: 2 * time.Second, Poll: 50 * time.Millisecond}
	f.s.SetCI("acme/widget", func(string) []fakegithub.CheckRun {
		return []fakegithub.CheckRun{{Name: "test", Conclusion: "failure", Log: "--- FAIL: TestParse\nsecret-value-123456 leaked\n"}}
	})
	n := f.s.AddIssue("acme/widget", fakegithub.Issue{Title: "t", Author: "alice", Association: "MEMBER"})
	w, _ := forge.Begin(ctx, f.c, n, members)
	stop := forge.Stop{Verdict: "DONE", Done: true, Report: "r", Push: true, Dir: f.work, SHA: head, Gate: gate,
		Redact: func(s string) string { return strings.ReplaceAll(s, "secret-value-123456", "[REDACTED:x]") }}
	fin, err := w.Finish(ctx, stop)
	if err != nil || fin.CI == nil || fin.CI.Green() || fin.Done(stop) {
		t.Fatalf("red: %+v, %v", fin, err)
	}
	is := f.s.Snapshot("acme/widget").Issues[n]
	c := is.Comments[len(is.Comments)-1].Body
	if !strings.Contains(c, "**DONE**") || !strings.Contains(c, "CI RED: test") || !strings.Contains(c, "--- FAIL: TestParse") || strings.Contains(c, "secret-value-123456") {
		t.Fatalf("comment %q", c)
	}
	if strings.Join(is.Labels, ",") != forge.LabelBlocked {
		t.Fatalf("labels %v", is.Labels)
	}
	// Green: done.
	f.s.SetCI("acme/widget", nil)
	f.s.AddCheckRun("acme/widget", fakegithub.CheckRun{SHA: strings.Repeat("d", 40), Name: "test", Conclusion: "success"})
	stop.SHA = strings.Repeat("d", 40)
	fin, err = w.Finish(ctx, stop)
	if err != nil || !fin.Done(stop) {
		t.Fatalf("green: %+v, %v", fin, err)
	}
	if is := f.s.Snapshot("acme/widget").Issues[n]; strings.Join(is.Labels, ",") != forge.LabelDone {
		t.Fatalf("labels %v", is.Labels)
	}
	// Not DONE: the CI is not waited for.
	before := len(f.s.Requests())
	fin, err = w.Finish(ctx, forge.Stop{Verdict: "NO PROGRESS", Report: "r", Push: true, Dir: f.work, SHA: head, Gate: gate})
	if err != nil || fin.CI != nil {
		t.Fatalf("not done: %+v, %v", fin, err)
	}
	for _, q := range f.s.Requests()[before:] {
		if strings.Contains(q, "check-runs") {
			t.Fatal("the CI was waited for on a stop that is not DONE")
		}
	}
}

func output(t *testing.T, dir string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

func TestFailedSaysWhyAndBlocks(t *testing.T) {
	f := setup(t)
	ctx := context.Background()
	n := f.s.AddIssue("acme/widget", fakegithub.Issue{Title: "t", Author: "alice", Association: "MEMBER"})
	w, _ := forge.Begin(ctx, f.c, n, members)
	if err := w.Started(ctx, "widget", w.Branch); err != nil {
		t.Fatal(err)
	}
	if err := w.Failed(ctx, "another run holds the loop"); err != nil {
		t.Fatal(err)
	}
	is := f.s.Snapshot("acme/widget").Issues[n]
	if c := is.Comments[len(is.Comments)-1].Body; c != "looprinter could not run the loop:\n\n```text\nanother run holds the loop\n```\n" {
		t.Fatalf("comment %q", c)
	}
	if strings.Join(is.Labels, ",") != forge.LabelBlocked {
		t.Fatalf("labels %v", is.Labels)
	}
}
