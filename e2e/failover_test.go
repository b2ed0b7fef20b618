//go:build !windows

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/looprinter/looprinter/internal/fakeapi"
)

// agent.fallback with the genuine CLIs: the fake API answers Claude Code's
// first build run with a usage limit resetting in 3 hours. The same run goes
// on at once with Codex (an agent_failover record, no attempt counted), and
// the next build run stays on Codex while Claude's limit holds.
func TestLoopFailoverOnUsageLimit(t *testing.T) {
	claude, codex := kits[0], kits[1]
	claude.bin = findCLI(t, "claude")
	codex.bin = findCLI(t, "codex")
	looprinter(t)
	srv := startAPI(t)
	dir, home := t.TempDir(), t.TempDir()
	env := claude.env(t, home, srv.URL)
	for k, v := range codex.env(t, home, srv.URL) {
		env[k] = v
	}
	mark := newMark()
	env[markVar] = mark
	keys := make([]string, 0, len(env))
	for k := range env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var envYAML strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&envYAML, "    %s: %q\n", k, env[k])
	}
	yaml := fmt.Sprintf(`version: 1
objective: "out/one.txt says one and out/two.txt says two"
agent:
  backend: claude
  model: sonnet
  command: %q
  timeout: 5m
  idle_timeout: 3m
  grace: 2s
  max_turns: 10
  fallback:
    - {backend: codex, model: gpt-5.5, command: %q}
  env:
%sbudget:
  iterations: 4
  cycles: 2
  wall: 20m
verify:
  - test -s out/one.txt
  - test -s out/two.txt
objective_verify:
  - test "$(cat out/one.txt)" = one && test "$(cat out/two.txt)" = two
`, claude.bin, codex.bin, envYAML.String())
	if err := os.WriteFile(filepath.Join(dir, "loop.yaml"), []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	l := &loopEnv{dir: dir, mark: mark}
	srv.Add(planReplies(claude, dir)...)
	srv.Add(fakeapi.Reply{Error: &fakeapi.Error{Status: 429, Message: "usage limit reached, try again in 3h"}})
	srv.Add(buildReplies(codex, dir, "T-001", "one")...)
	srv.Add(buildReplies(codex, dir, "T-002", "two")...)
	start := time.Now()
	code, _, _, _ := l.run(t, 12*time.Minute)
	if code != 0 {
		t.Fatalf("exit %d, want 0", code)
	}
	// The limit resets in 3h: a loop that waited for it would not be done
	// in 10 minutes.
	if took := time.Since(start); took > 10*time.Minute {
		t.Errorf("took %s: the loop waited instead of failing over", took)
	}
	evs := l.records(t)
	fo := only(evs, "agent_failover")
	if len(fo) != 1 || fo[0].Task != "T-001" || fo[0].Backend != "codex" || fo[0].WaitMS < int64(2*time.Hour/time.Millisecond) {
		t.Fatalf("agent_failover records %+v, want one to codex on T-001 for a limit about 3h away", fo)
	}
	var runs []string
	for _, e := range only(evs, "agent_end") {
		runs = append(runs, e.Phase+" "+e.Task+" "+e.Backend+" "+e.Status)
	}
	want := "[plan  claude ok build T-001 codex ok build T-002 codex ok]"
	if fmt.Sprint(runs) != want {
		t.Errorf("runs %v, want %s", runs, want)
	}
	// The try that hit the limit is recorded (its model, its cost) as a
	// retry that waited nothing: the run went on with codex at once.
	retries := only(evs, "agent_retry")
	if len(retries) != 1 || retries[0].WaitMS != 0 || retries[0].Backend != "claude" || retries[0].Status != "rate_limited" {
		t.Errorf("agent_retry records %+v, want one of claude's limited try, with no wait", retries)
	}
	if st := l.state(t); st["iterations"] != float64(2) {
		t.Errorf("state iterations %v, want 2: a failover is not an attempt", st["iterations"])
	}
	assertNoLeftovers(t, mark)
}
