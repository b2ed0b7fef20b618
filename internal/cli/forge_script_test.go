package cli

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/looprinter/looprinter/internal/fakegithub"
)

// fakeGitHubs are the scripts' fake GitHub APIs, one a script.
var fakeGitHubs sync.Map // *testscript.TestScript → *fakeGitHub

type fakeGitHub struct {
	s    *fakegithub.Server
	repo string
}

// fakegithub start OWNER/NAME GITDIR: a fake GitHub API on 127.0.0.1 that
// accepts $GH_TOKEN, with the repository pushed to the bare GITDIR;
// $FAKEGITHUB is its API's URL (as an Enterprise server's).
// fakegithub issue LOGIN ASSOCIATION TITLE BODYFILE: file an issue
// (numbered from 1).
// fakegithub ci red NAME LOGFILE | green NAME | run NAME SHELL | silent:
// the repository's CI from now on.
// fakegithub subst FILE: write $FAKEGITHUB for FAKEGITHUB_URL in FILE.
// fakegithub dump FILE: the repository as the API holds it (issues,
// comments, labels, pull requests) and the requests served, as JSON.
func cmdFakeGitHub(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) == 0 {
		ts.Fatalf("usage: fakegithub start|issue|subst|dump ...")
	}
	get := func() *fakeGitHub {
		v, ok := fakeGitHubs.Load(ts)
		if !ok {
			ts.Fatalf("fakegithub: no server: run fakegithub start first")
		}
		return v.(*fakeGitHub)
	}
	switch args[0] {
	case "start":
		if len(args) != 3 {
			ts.Fatalf("usage: fakegithub start OWNER/NAME GITDIR")
		}
		s, err := fakegithub.Start(ts.Getenv("GH_TOKEN"))
		ts.Check(err)
		ts.Defer(func() { s.Close(); fakeGitHubs.Delete(ts) })
		s.AddRepo(args[1])
		s.SetGitDir(args[1], ts.MkAbs(args[2]))
		fakeGitHubs.Store(ts, &fakeGitHub{s: s, repo: args[1]})
		ts.Setenv("FAKEGITHUB", s.URL+"/api/v3")
	case "issue":
		if len(args) != 5 {
			ts.Fatalf("usage: fakegithub issue LOGIN ASSOCIATION TITLE BODYFILE")
		}
		f := get()
		n := f.s.AddIssue(f.repo, fakegithub.Issue{Author: args[1], Association: args[2], Title: args[3], Body: ts.ReadFile(args[4])})
		ts.Logf("issue #%s", strconv.Itoa(n))
	case "ci":
		// fakegithub ci red NAME LOGFILE | green NAME | silent: the CI every
		// commit gets from now on.
		f := get()
		var runs []fakegithub.CheckRun
		switch {
		case len(args) == 4 && args[1] == "red":
			runs = []fakegithub.CheckRun{{Name: args[2], Conclusion: "failure", Log: ts.ReadFile(args[3])}}
		case len(args) == 3 && args[1] == "green":
			runs = []fakegithub.CheckRun{{Name: args[2], Conclusion: "success"}}
		case len(args) == 2 && args[1] == "silent":
		case len(args) == 4 && args[1] == "run":
			// A CI that runs SHELL on each pushed commit, with $SHA and
			// GIT_DIR the repository's git folder: red with its output as
			// the job's log when it fails.
			name, script, gitDir := args[2], args[3], f.s.Snapshot(f.repo).GitDir
			f.s.SetCI(f.repo, func(sha string) []fakegithub.CheckRun {
				cmd := exec.Command("sh", "-c", script)
				cmd.Env = append(os.Environ(), "SHA="+sha, "GIT_DIR="+gitDir)
				out, err := cmd.CombinedOutput()
				if err != nil {
					return []fakegithub.CheckRun{{Name: name, Conclusion: "failure", Log: string(out) + "##[error]Process completed with exit code 1.\n"}}
				}
				return []fakegithub.CheckRun{{Name: name, Conclusion: "success", Log: string(out)}}
			})
			return
		default:
			ts.Fatalf("usage: fakegithub ci red NAME LOGFILE | green NAME | run NAME SHELL | silent")
		}
		f.s.SetCI(f.repo, func(string) []fakegithub.CheckRun { return runs })
	case "review":
		// fakegithub review LOGIN ASSOCIATION PULL PATH LINE BODYFILE: a
		// review comment on a line of pull request PULL.
		if len(args) != 7 {
			ts.Fatalf("usage: fakegithub review LOGIN ASSOCIATION PULL PATH LINE BODYFILE")
		}
		f := get()
		n, err := strconv.Atoi(args[3])
		ts.Check(err)
		line, err := strconv.Atoi(args[5])
		ts.Check(err)
		f.s.AddReviewComment(f.repo, n, fakegithub.ReviewComment{Author: args[1], Association: args[2], Path: args[4], Line: line, Body: ts.ReadFile(args[6])})
	case "label":
		// fakegithub label N LABEL: put LABEL on issue N.
		if len(args) != 3 {
			ts.Fatalf("usage: fakegithub label N LABEL")
		}
		f := get()
		n, err := strconv.Atoi(args[1])
		ts.Check(err)
		f.s.Label(f.repo, n, args[2])
	case "port":
		// fakegithub port: a free port of 127.0.0.1 in $SERVEPORT (for a
		// `looprinter serve` started in the background).
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		ts.Check(err)
		ts.Setenv("SERVEPORT", strconv.Itoa(ln.Addr().(*net.TCPAddr).Port))
		ln.Close()
	case "deliver":
		// fakegithub deliver URL SECRET EVENT ID PAYLOADFILE STATUS: a
		// webhook delivery signed with SECRET as GitHub signs it; the
		// answer's status must be STATUS (the server may still be
		// starting: connection errors are tried again for 15s).
		if len(args) != 7 {
			ts.Fatalf("usage: fakegithub deliver URL SECRET EVENT ID PAYLOADFILE STATUS")
		}
		d := fakegithub.Delivery{ID: args[4], Event: args[3], Body: []byte(ts.ReadFile(args[5]))}
		var code int
		var err error
		for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(100 * time.Millisecond) {
			if code, err = fakegithub.Deliver(args[1], args[2], d); err == nil || time.Now().After(deadline) {
				break
			}
		}
		ts.Check(err)
		if strconv.Itoa(code) != args[6] {
			ts.Fatalf("delivery %s: status %d, want %s", args[4], code, args[6])
		}
	case "subst":
		p := ts.MkAbs(args[1])
		data, err := os.ReadFile(p)
		ts.Check(err)
		ts.Check(os.WriteFile(p, []byte(strings.ReplaceAll(string(data), "FAKEGITHUB_URL", ts.Getenv("FAKEGITHUB"))), 0o644))
	case "dump":
		f := get()
		r := f.s.Snapshot(f.repo)
		var b strings.Builder
		for n := 1; n <= len(r.Issues); n++ {
			is := r.Issues[n]
			kind := "issue"
			if is.Pull != nil {
				kind = "pull"
				fmt.Fprintf(&b, "pull %d head=%s base=%s draft=%v sha=%s title=%s\n", n, is.Pull.Head, is.Pull.Base, is.Pull.Draft, is.Pull.HeadSHA, is.Title)
			}
			fmt.Fprintf(&b, "%s %d state=%s author=%s labels=%s\n", kind, n, is.State, is.Author, strings.Join(is.Labels, ","))
			fmt.Fprintf(&b, "%s %d body:\n%s\n", kind, n, is.Body)
			for _, c := range is.Comments {
				fmt.Fprintf(&b, "comment on %d: %s\n", n, c.Body)
			}
			if is.Pull != nil {
				for _, c := range is.Pull.ReviewComments {
					fmt.Fprintf(&b, "review comment %d on %d by %s at %s:%d reply-to=%d resolved=%v: %s\n", c.ID, n, c.Author, c.Path, c.Line, c.InReplyTo, c.Resolved, c.Body)
				}
			}
		}
		for _, q := range f.s.Requests() {
			fmt.Fprintf(&b, "request %s\n", q)
		}
		ts.Check(os.WriteFile(ts.MkAbs(args[1]), []byte(b.String()), 0o644))
	default:
		ts.Fatalf("fakegithub: unknown %q", args[0])
	}
}
