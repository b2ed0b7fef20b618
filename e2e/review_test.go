//go:build !windows

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/looprinter/looprinter/internal/fakeapi"
	"github.com/looprinter/looprinter/internal/testkit"
)

// kitFor returns the kit of one backend, with its program located.
func kitFor(t *testing.T, backend string) kit {
	t.Helper()
	for _, k := range kits {
		if k.backend == backend {
			k.bin = findCLI(t, backend)
			return k
		}
	}
	t.Fatalf("no kit for %s", backend)
	return kit{}
}

func envYAML(env map[string]string, indent string) string {
	keys := make([]string, 0, len(env))
	for k := range env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%s%s: %q\n", indent, k, env[k])
	}
	return b.String()
}

// The review shape with the genuine CLIs through the fake model API: Codex
// reviews (in a fresh process, its findings JSON as its final message),
// Claude Code fixes with its own file tool, the checks run, and after the
// last round Codex verifies the fix. Exit 0, and the report names it all.
func TestReviewEndToEnd(t *testing.T) {
	fixer, reviewer := kitFor(t, "claude"), kitFor(t, "codex")
	bin := looprinter(t)
	srv := startAPI(t)
	dir := t.TempDir()
	mark := newMark()

	fixEnv := fixer.env(t, t.TempDir(), srv.URL)
	revEnv := reviewer.env(t, t.TempDir(), srv.URL)
	fixEnv[markVar], revEnv[markVar] = mark, mark

	files := map[string]string{
		".gitignore": "working-records/\n",
		"div.sh":     "#!/bin/sh\n# div A B prints A / B\n",
		"REQ.md":     "div.sh A B prints A divided by B, and exits 2 when B is 0.\n",
		"check.sh":   "sh -n div.sh && echo EVIDENCE-E2E-CHECKED\n",
		"loop.yaml": fmt.Sprintf(`version: 1
shape: review
objective: "div.sh divides safely"
agent:
  backend: claude
  model: %s
  command: %q
  timeout: 5m
  idle_timeout: 3m
  grace: 2s
  env:
%sagents:
  reviewer:
    backend: codex
    model: %s
    command: %q
    env:
%sreview:
  max_rounds: 1
  requirements: [REQ.md]
verify:
  - sh check.sh
budget:
  wall: 5m
`, fixer.model, fixer.bin, envYAML(fixEnv, "    "), reviewer.model, reviewer.bin, envYAML(revEnv, "      ")),
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	testkit.Git(t, dir, "init", "-q")
	testkit.Git(t, dir, "-c", "user.email=t@example.com", "-c", "user.name=T", "add", "-A")
	testkit.Git(t, dir, "-c", "user.email=t@example.com", "-c", "user.name=T", "commit", "-qm", "start")
	// The change under review: division without a guard.
	f, _ := os.OpenFile(filepath.Join(dir, "div.sh"), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("echo $(($1 / $2)) # DIFF-E2E-MARKER\n")
	f.Close()

	findings := `{"findings":[{"id":"F-1","severity":"major","file":"div.sh","line":3,"title":"division by zero is not rejected","detail":"div.sh 1 0 fails in the shell instead of exiting 2","kind":"input-validation"}]}`
	fixed := "#!/bin/sh\n# div A B prints A / B\n[ \"$2\" != 0 ] || exit 2\necho $(($1 / $2))\n"
	verdicts := `{"verdicts":[{"id":"F-1","status":"closed","detail":"line 3 exits 2 when B is 0"}]}`
	match := func(r fakeapi.Reply, m string) fakeapi.Reply { r.Match = m; return r }
	srv.Add(
		match(withUsage(fakeapi.Text("Here are my findings:\n```json\n"+findings+"\n```"), 3000, 200, 0), "adversarial review, round 1"),
		match(withUsage(fixer.write(filepath.Join(dir, "div.sh"), "div.sh", fixed), 3000, 100, 0), "fix the review findings, round 1"),
		match(withUsage(fakeapi.Text("F-1 is fixed: B = 0 exits 2."), 3200, 20, 2000), "fix the review findings, round 1"),
		match(withUsage(fakeapi.Text(verdicts), 2500, 60, 0), "Your job: fix verification"),
	)

	ctx, cancel := context.WithTimeout(context.Background(), 12*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "review")
	cmd.Dir = dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	t.Logf("looprinter review:\nstdout:\n%s\nstderr:\n%s", tail(out.String(), 4000), tail(errb.String(), 4000))
	if err != nil {
		t.Fatalf("looprinter review: %v (want exit 0)", err)
	}
	if !strings.Contains(out.String(), "looprinter review: DONE (exit 0)") {
		t.Errorf("the report does not say DONE")
	}
	if n := srv.Remaining(); n != 0 {
		t.Errorf("%d scripted replies unused", n)
	}

	l := &loopEnv{dir: dir, mark: mark}
	ends := only(l.records(t), "agent_end")
	var runs []string
	for _, e := range ends {
		runs = append(runs, fmt.Sprintf("%s %s %s/%s %s", e.Phase, e.Task, e.Backend, e.Model, e.Status))
	}
	want := []string{
		"reviewer round-1 codex/" + reviewer.model + " ok",
		"fixer round-1 claude/" + fixer.model + " ok",
		"reviewer fixcheck codex/" + reviewer.model + " ok",
	}
	if fmt.Sprint(runs) != fmt.Sprint(want) {
		t.Fatalf("agent runs %v, want %v", runs, want)
	}
	for _, e := range ends {
		if e.Turns < 1 || e.InputTokens <= 0 || e.SessionID == "" {
			t.Errorf("%s %s: the run's numbers are missing: turns %d in %d session %q", e.Phase, e.Task, e.Turns, e.InputTokens, e.SessionID)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "div.sh")); string(b) != fixed {
		t.Errorf("div.sh after the fix:\n%s", b)
	}

	// What Codex was given to review: the diff, the evidence, the
	// requirements; not Claude's transcript (the review came first) and no
	// engine file.
	var review, check string
	for _, r := range srv.ModelRequests() {
		switch {
		case strings.Contains(r.Body, "adversarial review, round 1") && review == "":
			review = r.Body
		case strings.Contains(r.Body, "Your job: fix verification") && check == "":
			check = r.Body
		}
	}
	for _, want := range []string{"DIFF-E2E-MARKER", "EVIDENCE-E2E-CHECKED", "exits 2 when B is 0", "div.sh divides safely"} {
		if !strings.Contains(review, want) {
			t.Errorf("the review request lacks %q", want)
		}
	}
	if strings.Contains(review, "working-records/transcripts/0") {
		t.Errorf("the review request names a transcript")
	}
	// The fix check re-read what was fixed: the fix's diff, and the verdict
	// came back through the final message.
	if !strings.Contains(check, `[ \"$2\" != 0 ] || exit 2`) && !strings.Contains(check, `[ \\\"$2\\\" != 0 ] || exit 2`) {
		t.Errorf("the fix-check request lacks the fix's diff")
	}
	if strings.Contains(check, "F-1 is fixed: B = 0 exits 2.") {
		t.Errorf("the fix check saw the fixer's final message")
	}

	report, err := os.ReadFile(filepath.Join(dir, "working-records", "review-report.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"| 1 | 0 | 1 | 0 | uncommitted: div.sh | – | see fix check |",
		"| fix check | 0 | 1 | 0 | confirmed closed: F-1 | – | none |",
		"reviewer codex/" + reviewer.model, "fixer claude/" + fixer.model,
	} {
		if !strings.Contains(string(report), want) {
			t.Errorf("review-report.md lacks %q:\n%s", want, report)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "working-records", "review", "round-1", "findings.json")); err != nil {
		t.Errorf("the findings from the final message were not stored: %v", err)
	}
	assertNoLeftovers(t, mark)
}
