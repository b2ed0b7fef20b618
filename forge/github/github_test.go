package github

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/looprinter/looprinter/forge"
	"github.com/looprinter/looprinter/internal/fakegithub"
	"github.com/looprinter/looprinter/internal/testenv"
	"github.com/looprinter/looprinter/internal/testkit"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

const token = "ghp_fakeTokenForTheTests0123456789abcdef"

func start(t *testing.T) (*fakegithub.Server, *Client) {
	t.Helper()
	s, err := fakegithub.Start(token)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	s.AddRepo("acme/widget")
	c, err := New("acme/widget", s.URL+"/api/v3", token)
	if err != nil {
		t.Fatal(err)
	}
	return s, c
}

func TestIssueCommentsAndLabels(t *testing.T) {
	s, c := start(t)
	ctx := context.Background()
	n := s.AddIssue("acme/widget", fakegithub.Issue{Title: "Fix the parser", Body: "It panics on empty input.", Author: "alice", Association: "MEMBER"})
	is, err := c.Issue(ctx, n)
	if err != nil {
		t.Fatal(err)
	}
	if is.Title != "Fix the parser" || is.Body != "It panics on empty input." || is.Author != "alice" || is.Association != "MEMBER" || is.State != "open" || is.IsPull {
		t.Fatalf("issue read as %+v", is)
	}
	if !strings.HasSuffix(is.URL, "/acme/widget/issues/1") {
		t.Fatalf("url %q", is.URL)
	}
	cm, err := c.Comment(ctx, n, "looprinter started")
	if err != nil || cm.ID == 0 || cm.Body != "looprinter started" {
		t.Fatalf("comment %+v, %v", cm, err)
	}
	if err := c.AddLabels(ctx, n, forge.LabelRunning); err != nil {
		t.Fatal(err)
	}
	if err := c.AddLabels(ctx, n, forge.LabelDone); err != nil {
		t.Fatal(err)
	}
	if err := c.RemoveLabel(ctx, n, forge.LabelRunning); err != nil {
		t.Fatal(err)
	}
	// A label the issue does not have is no error.
	if err := c.RemoveLabel(ctx, n, forge.LabelBlocked); err != nil {
		t.Fatalf("removing a label not there: %v", err)
	}
	r := s.Snapshot("acme/widget")
	got := r.Issues[n]
	if strings.Join(got.Labels, ",") != forge.LabelDone || len(got.Comments) != 1 || got.Comments[0].Body != "looprinter started" {
		t.Fatalf("the fake holds %+v", got)
	}
	if _, err := c.Issue(ctx, 99); !NotFound(err) {
		t.Fatalf("issue 99: %v, want a 404", err)
	}
	if b, err := c.DefaultBranch(ctx); err != nil || b != "main" {
		t.Fatalf("default branch %q, %v", b, err)
	}
}

func TestBadTokenIsRefusedAndNotRepeated(t *testing.T) {
	s, _ := start(t)
	bad := "ghp_notTheRightToken0123456789abcdefgh"
	c, err := New("acme/widget", s.URL, bad)
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Issue(context.Background(), 1)
	var e *Error
	if err == nil || !strings.Contains(err.Error(), "401 Bad credentials") {
		t.Fatalf("err %v, want 401", err)
	}
	if strings.Contains(err.Error(), bad) || !asError(err, &e) {
		t.Fatalf("err %v", err)
	}
}

func asError(err error, e **Error) bool {
	x, ok := err.(*Error)
	*e = x
	return ok
}

func TestPullRequestOpenedOnceAndUpdatedInPlace(t *testing.T) {
	s, c := start(t)
	ctx := context.Background()
	bare := t.TempDir()
	testkit.Git(t, "", "init", "-q", "--bare", bare)
	setGitDir(s, bare)
	work := t.TempDir()
	testkit.Git(t, work, "init", "-q", "-b", "main")
	os.WriteFile(filepath.Join(work, "a.txt"), []byte("a\n"), 0o644)
	testkit.Git(t, work, "add", "a.txt")
	testkit.Git(t, work, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "a")

	// No pull request before the branch is pushed: GitHub refuses a head
	// that is not on the remote.
	if _, err := c.CreatePull(ctx, forge.PullInput{Title: "t", Body: "b", Head: "looprinter/issue-1", Base: "main"}); err == nil {
		t.Fatal("a pull request from a branch never pushed was opened")
	}
	c.Remote = bare
	if err := c.Push(ctx, work, "HEAD", "looprinter/issue-1"); err != nil {
		t.Fatal(err)
	}
	head := strings.TrimSpace(testkit.Git(t, work, "rev-parse", "HEAD"))
	if got := strings.TrimSpace(testkit.Git(t, bare, "rev-parse", "refs/heads/looprinter/issue-1")); got != head {
		t.Fatalf("the remote's branch is %s, want %s", got, head)
	}
	if p, err := c.FindPull(ctx, "looprinter/issue-1"); err != nil || p != nil {
		t.Fatalf("FindPull before any: %+v, %v", p, err)
	}
	p, err := c.CreatePull(ctx, forge.PullInput{Title: "Fix the parser", Body: "report 1", Head: "looprinter/issue-1", Base: "main", Draft: true})
	if err != nil {
		t.Fatal(err)
	}
	if !p.Draft || p.HeadSHA != head || p.Head != "looprinter/issue-1" || p.Base != "main" {
		t.Fatalf("pull %+v", p)
	}
	// A second one from the same head is refused (422), as on GitHub.
	if _, err := c.CreatePull(ctx, forge.PullInput{Title: "again", Body: "x", Head: "looprinter/issue-1", Base: "main"}); err == nil || !strings.Contains(err.Error(), "422") {
		t.Fatalf("second pull: %v", err)
	}
	found, err := c.FindPull(ctx, "looprinter/issue-1")
	if err != nil || found == nil || found.Number != p.Number {
		t.Fatalf("FindPull %+v, %v", found, err)
	}
	up, err := c.UpdatePull(ctx, p.Number, forge.PullInput{Title: "Fix the parser", Body: "report 2"})
	if err != nil || up.Body != "report 2" || up.Number != p.Number {
		t.Fatalf("update %+v, %v", up, err)
	}
}

func setGitDir(s *fakegithub.Server, dir string) { s.SetGitDir("acme/widget", dir) }

func TestChecksStatusesLogsAndReviewComments(t *testing.T) {
	s, c := start(t)
	ctx := context.Background()
	sha := strings.Repeat("a", 40)
	id := s.AddCheckRun("acme/widget", fakegithub.CheckRun{SHA: sha, Name: "test", Conclusion: "failure", Log: "--- FAIL: TestParse\nparse_test.go:12: want 1, got 2\n"})
	s.AddCheckRun("acme/widget", fakegithub.CheckRun{SHA: sha, Name: "lint", Status: "in_progress"})
	s.AddCheckRun("acme/widget", fakegithub.CheckRun{SHA: strings.Repeat("b", 40), Name: "other", Conclusion: "success"})
	s.AddStatus("acme/widget", fakegithub.Status{SHA: sha, Context: "ci/legacy", State: "success"})
	checks, err := c.Checks(ctx, sha)
	if err != nil {
		t.Fatal(err)
	}
	if len(checks) != 3 {
		t.Fatalf("checks %+v", checks)
	}
	byName := map[string]forge.Check{}
	for _, ch := range checks {
		byName[ch.Name] = ch
	}
	if ch := byName["test"]; !ch.Red() || ch.ID != id || ch.Status {
		t.Fatalf("test %+v", ch)
	}
	if ch := byName["lint"]; !ch.Pending() || ch.Red() || ch.Green() {
		t.Fatalf("lint %+v", ch)
	}
	if ch := byName["ci/legacy"]; !ch.Green() || !ch.Status {
		t.Fatalf("legacy %+v", ch)
	}
	log, err := c.JobLog(ctx, id)
	if err != nil || !strings.Contains(log, "want 1, got 2") {
		t.Fatalf("log %q, %v", log, err)
	}
	n := s.AddIssue("acme/widget", fakegithub.Issue{Title: "pr", Author: "bot", Pull: &fakegithub.Pull{Head: "h", Base: "main"}})
	s.AddReviewComment("acme/widget", n, fakegithub.ReviewComment{Author: "carol", Association: "MEMBER", Path: "parse.go", Line: 7, Body: "nil check"})
	rcs, err := c.ReviewComments(ctx, n)
	if err != nil || len(rcs) != 1 || rcs[0].Path != "parse.go" || rcs[0].Line != 7 || rcs[0].Author != "carol" {
		t.Fatalf("review comments %+v, %v", rcs, err)
	}
	is, err := c.Issue(ctx, n)
	if err != nil || !is.IsPull {
		t.Fatalf("a pull request's issue %+v, %v", is, err)
	}
}

func TestNewRefusesABadRepoOrURL(t *testing.T) {
	for _, tc := range []struct{ repo, base string }{{"acme", ""}, {"/x", ""}, {"a/b/c", ""}, {"a/b", "ftp://x"}, {"a/b", "::"}} {
		if _, err := New(tc.repo, tc.base, token); err == nil {
			t.Errorf("New(%q, %q) accepted", tc.repo, tc.base)
		}
	}
	c, err := New("a/b", "", token)
	if err != nil || c.Remote != "https://github.com/a/b.git" {
		t.Fatalf("github.com remote %q, %v", c.Remote, err)
	}
	c, err = New("a/b", "https://ghe.example.com/api/v3", token)
	if err != nil || c.Remote != "https://ghe.example.com/a/b.git" {
		t.Fatalf("enterprise remote %q, %v", c.Remote, err)
	}
	if Host("") != "github.com" || Host("https://api.github.com/") != "github.com" || Host("https://ghe.example.com/api/v3") != "ghe.example.com" {
		t.Fatal("Host")
	}
}
