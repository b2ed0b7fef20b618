package fakegithub

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/looprinter/looprinter/internal/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

// gh, GitHub's own CLI, drives the fake: the fake speaks the protocol of
// the API it stands for (paths, auth, JSON shapes), not only what
// forge/github sends. gh talks plain http to the host github.localhost
// (its local development host); HTTP_PROXY takes that to the fake.
func TestGhDrivesTheFake(t *testing.T) {
	if _, err := exec.LookPath("gh"); err != nil {
		t.Skip("gh is not installed (Debian package gh)")
	}
	const tok = "tok_ghcli_0123456789abcdef"
	s, err := Start(tok)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.AddRepo("acme/widget")
	n := s.AddIssue("acme/widget", Issue{Title: "Fix the parser", Body: "it panics", Author: "alice", Association: "MEMBER"})
	gh := func(token string, args ...string) (string, error) {
		cmd := exec.Command("gh", append([]string{"api"}, args...)...)
		cmd.Env = append(os.Environ(), "GH_HOST=github.localhost", "HTTP_PROXY="+s.URL, "http_proxy="+s.URL, "NO_PROXY=", "no_proxy=",
			"GH_TOKEN="+token, "GITHUB_TOKEN=", "GH_CONFIG_DIR="+t.TempDir(), "GH_PROMPT_DISABLED=1", "NO_COLOR=1")
		out, err := cmd.CombinedOutput()
		return strings.TrimSpace(string(out)), err
	}
	if out, err := gh(tok, "repos/acme/widget/issues/1", "--jq", ".title + \"|\" + .user.login + \"|\" + .author_association"); err != nil || out != "Fix the parser|alice|MEMBER" {
		t.Fatalf("gh api issue: %q, %v", out, err)
	}
	if out, err := gh(tok, "-X", "POST", "repos/acme/widget/issues/1/comments", "-f", "body=from gh", "--jq", ".body"); err != nil || out != "from gh" {
		t.Fatalf("gh api comment: %q, %v", out, err)
	}
	if out, err := gh(tok, "-X", "POST", "repos/acme/widget/issues/1/labels", "-f", "labels[]=looprinter:running", "--jq", ".[].name"); err != nil || out != "looprinter:running" {
		t.Fatalf("gh api labels: %q, %v", out, err)
	}
	if out, err := gh(tok, "repos/acme/widget", "--jq", ".default_branch"); err != nil || out != "main" {
		t.Fatalf("gh api repo: %q, %v", out, err)
	}
	// A wrong token: GitHub's 401, and gh fails.
	if out, err := gh("tok_wrong_0123456789abcdef", "repos/acme/widget/issues/1"); err == nil || !strings.Contains(out, "Bad credentials") {
		t.Fatalf("a wrong token: %q, %v", out, err)
	}
	// GraphQL: the review threads of a pull request, and the mutation
	// that resolves one, as gh sends them.
	s.AddIssue("acme/widget", Issue{Title: "a pull", Author: "bot", Association: "OWNER", Pull: &Pull{Head: "looprinter/issue-1", Base: "main"}})
	rc := s.AddReviewComment("acme/widget", 2, ReviewComment{Author: "bob", Association: "MEMBER", Path: "a.go", Line: 3, Body: "rename it"})
	thread := "PRRT_" + strconv.FormatInt(rc, 10)
	q := `query($owner: String!, $name: String!, $number: Int!) { repository(owner: $owner, name: $name) { pullRequest(number: $number) { reviewThreads(first: 100) { nodes { id isResolved comments(first: 1) { nodes { databaseId } } } } } } }`
	if out, err := gh(tok, "graphql", "-f", "query="+q, "-f", "owner=acme", "-f", "name=widget", "-F", "number=2", "--jq", ".data.repository.pullRequest.reviewThreads.nodes[0].id"); err != nil || out != thread {
		t.Fatalf("gh api graphql threads: %q, %v", out, err)
	}
	m := `mutation($threadId: ID!) { resolveReviewThread(input: {threadId: $threadId}) { thread { id isResolved } } }`
	if out, err := gh(tok, "graphql", "-f", "query="+m, "-f", "threadId="+thread, "--jq", ".data.resolveReviewThread.thread.isResolved"); err != nil || out != "true" {
		t.Fatalf("gh api graphql resolve: %q, %v", out, err)
	}
	if !s.Snapshot("acme/widget").Issues[2].Pull.ReviewComments[0].Resolved {
		t.Fatalf("the thread was not resolved")
	}
	is := s.Snapshot("acme/widget").Issues[n]
	if len(is.Comments) != 1 || is.Comments[0].Body != "from gh" || strings.Join(is.Labels, ",") != "looprinter:running" {
		t.Fatalf("the fake holds %+v", is)
	}
}
