package loop

// Engine tests through Run with the scripted fake agent (issue 18): the
// cycle shape's plan, build, gates and post phases; the review shape's
// rounds; and the stops each one decides. The agent is this test binary
// started as `fake-agent --script agent.txt` (see TestMain). They do not
// run in parallel: each run ends every process the test binary started.

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/spec"
)

// fakeLoop writes files (loop.yaml and agent.txt among them) into a new
// folder, runs the loop file there with the fake agent standing for AGENT
// in it, and returns the outcome, the records and the folder.
func fakeLoop(t *testing.T, files map[string]string, edit func(*spec.Loop)) (*Outcome, []record.Event, string) {
	t.Helper()
	dir := t.TempDir()
	return fakeLoopIn(t, dir, files, edit, Options{})
}

func fakeLoopIn(t *testing.T, dir string, files map[string]string, edit func(*spec.Loop), opts Options) (*Outcome, []record.Event, string) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for name, body := range files {
		if name == "loop.yaml" {
			body = strings.ReplaceAll(body, "AGENT", self+" fake-agent --script agent.txt")
		}
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	l, err := spec.Load(filepath.Join(dir, "loop.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		edit(l)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var mu sync.Mutex
	var evs []record.Event
	if opts.Backoff == nil {
		opts.Backoff = func(int) time.Duration { return 5 * time.Millisecond }
	}
	opts.Subscribers = append(opts.Subscribers, func(e record.Event) {
		mu.Lock()
		evs = append(evs, e)
		mu.Unlock()
	})
	out, err := Run(ctx, l, opts)
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	return out, append([]record.Event(nil), evs...), dir
}

func events(evs []record.Event, name string) []record.Event {
	var out []record.Event
	for _, e := range evs {
		if e.Event == name {
			out = append(out, e)
		}
	}
	return out
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// transcript returns the prompt of agent run seq (from 1).
func promptOf(t *testing.T, dir string, seq int) string {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(dir, loopdir.RecordsDir, "transcripts", "000"+string(rune('0'+seq))+"-*.prompt.md"))
	if len(m) != 1 {
		t.Fatalf("prompt files of run %d: %v", seq, m)
	}
	return readFile(t, m[0])
}

const cycleLoop = `objective: "three files exist under out/"
sandbox: off
agent: {backend: command, command: AGENT, timeout: 30s}
setup: ["echo setup >> setup.log"]
verify:
  - test -s out/one.txt
  - test -s out/two.txt
  - test -s out/three.txt
objective_verify: ["test -s out/three.txt"]
post_phases:
  - {name: docs, prompt: "Write SUMMARY.md for {{.Objective}}.", done: DOCS_DONE, max_steps: 3}
`

// A cycle: plan, three build runs each passing its task, both gates, the
// post phase until its signal; DONE with exit 0. Run again: already done,
// nothing runs.
func TestEngineCycleHappyPath(t *testing.T) {
	files := map[string]string{"loop.yaml": cycleLoop, "agent.txt": "== plan\nauto\n== build\nauto\n== docs\nwrite SUMMARY.md done\nauto\n"}
	out, evs, dir := fakeLoop(t, files, nil)
	if out.Reason != ReasonDone || out.ExitCode != 0 {
		t.Fatalf("outcome %s (exit %d): %s; want done (0)", out.Reason, out.ExitCode, out.Summary)
	}
	if n := len(events(evs, record.AgentStart)); n != 5 {
		t.Errorf("%d agent runs, want 5 (plan, 3 builds, docs)", n)
	}
	passed := events(evs, record.TaskPassed)
	if len(passed) != 3 || passed[0].Task != "T-001" || passed[2].Task != "T-003" {
		t.Errorf("task_passed records %+v, want T-001..T-003", passed)
	}
	if pe := events(evs, record.PostPhaseEnd); len(pe) != 1 || pe[0].Pass == nil || !*pe[0].Pass {
		t.Errorf("post_phase_end records %+v, want one that passed", pe)
	}
	if out.State.Iterations != 3 || out.State.Cycle != 1 {
		t.Errorf("%d iterations in cycle %d, want 3 in cycle 1", out.State.Iterations, out.State.Cycle)
	}
	if st := out.State; st.PlanRuns != 1 || st.AgentRuns != 5 {
		t.Errorf("%d plan runs of %d agent runs, want 1 of 5", st.PlanRuns, st.AgentRuns)
	}
	// Each run's prompt and transcript are named by its sequence number,
	// cycle, iteration, phase and task.
	if as := events(evs, record.AgentStart); len(as) == 5 {
		for i, want := range []string{"0001-c1-i0-plan.prompt.md", "0002-c1-i1-build-T-001.prompt.md", "0004-c1-i3-build-T-003.prompt.md"} {
			got := filepath.Base(as[[]int{0, 1, 3}[i]].PromptFile)
			if got != want {
				t.Errorf("prompt file %s, want %s", got, want)
			}
		}
	}
	if out.Plan == nil || len(out.Plan.Tasks) != 3 || !out.Plan.Tasks[2].Passes {
		t.Errorf("outcome plan %+v, want 3 tasks that pass", out.Plan)
	}
	if !strings.Contains(promptOf(t, dir, 2), "three files exist") || !strings.Contains(promptOf(t, dir, 2), "T-001") {
		t.Errorf("build prompt lacks the objective or its task:\n%s", promptOf(t, dir, 2))
	}
	for _, g := range []string{"cycle", "objective"} {
		found := false
		for _, v := range events(evs, record.Verify) {
			if v.Gate == g && v.Pass != nil && *v.Pass {
				found = true
			}
		}
		if !found {
			t.Errorf("no passing %s gate", g)
		}
	}
	if st := readFile(t, filepath.Join(dir, "setup.log")); st != "setup\n" {
		t.Errorf("setup.log %q, want setup once", st)
	}

	again, evs2, _ := fakeLoopIn(t, dir, nil, nil, Options{})
	if again.Reason != ReasonDone || len(events(evs2, record.AgentStart)) != 0 {
		t.Errorf("second run: %s with %d agent runs; want done without running", again.Reason, len(events(evs2, record.AgentStart)))
	}
	if st := readFile(t, filepath.Join(dir, "setup.log")); st != "setup\n" {
		t.Errorf("setup.log %q after a second run, want setup once", st)
	}
}

// A failed cycle gate archives the plan and re-plans with the failure in the
// prompt; the second cycle passes.
func TestEngineCycleGateFailureReplans(t *testing.T) {
	files := map[string]string{
		"loop.yaml": `objective: "two files exist under out/"
sandbox: off
agent: {backend: command, command: AGENT}
verify:
  - test -s out/one.txt
  - 'test -s out/two.txt || (echo "FAIL: out/two.txt is missing"; exit 1)'
`,
		"agent.txt": "== plan\nplan T-001:out/one.txt\n== replan\nplan T-001:out/two.txt\n== build\nauto\n",
	}
	out, evs, dir := fakeLoop(t, files, nil)
	if out.Reason != ReasonDone {
		t.Fatalf("outcome %s: %s; want done", out.Reason, out.Summary)
	}
	if out.State.Cycle != 2 {
		t.Errorf("cycle %d, want 2", out.State.Cycle)
	}
	arch := events(evs, record.PlanArchived)
	if len(arch) != 1 || !strings.Contains(arch[0].To, "plan_cycle_1.json") || arch[0].Reason != "cycle gate failed" {
		t.Errorf("plan_archived records %+v, want plan_cycle_1.json for a failed cycle gate", arch)
	}
	if _, err := os.Stat(filepath.Join(dir, loopdir.RecordsDir, "plan_cycle_1.json")); err != nil {
		t.Error(err)
	}
	p := promptOf(t, dir, 3)
	for _, want := range []string{"cycle gate failed", "test -s out/two.txt", "two.txt is missing", "two files exist"} {
		if !strings.Contains(p, want) {
			t.Errorf("replan prompt lacks %q:\n%s", want, p)
		}
	}
}

// Cycle gate passes, objective gate fails: the plan is archived as an
// objective gap and the re-plan prompt carries the gap.
func TestEngineObjectiveGapReplans(t *testing.T) {
	files := map[string]string{
		"loop.yaml": `objective: "slow.txt and fast.txt exist"
sandbox: off
agent: {backend: command, command: AGENT}
verify: ["test -s slow.txt"]
objective_verify:
  - test -s slow.txt
  - 'test -s fast.txt || { echo "Error: fast.txt missing"; exit 1; }'
`,
		"agent.txt": "== plan\nplan T-001:slow.txt\n== replan\nplan T-001:fast.txt\n== build\nauto\n",
	}
	out, evs, dir := fakeLoop(t, files, nil)
	if out.Reason != ReasonDone {
		t.Fatalf("outcome %s: %s; want done", out.Reason, out.Summary)
	}
	arch := events(evs, record.PlanArchived)
	if len(arch) != 1 || !strings.Contains(arch[0].To, "plan_cycle_1_objective_gap.json") || arch[0].Reason != "objective gate failed" {
		t.Errorf("plan_archived records %+v, want the objective gap", arch)
	}
	p := promptOf(t, dir, 3)
	if !strings.Contains(p, "key objective is not met yet") || !strings.Contains(p, "Error: fast.txt missing") {
		t.Errorf("replan prompt lacks the gap:\n%s", p)
	}
}

// A plan that breaks every rule is refused task by task; it is archived,
// and the re-plan prompt names each problem.
func TestEngineMalformedPlanIsReplanned(t *testing.T) {
	files := map[string]string{
		"loop.yaml": "objective: \"a.txt exists\"\nsandbox: off\nagent: {backend: command, command: AGENT}\nverify: [\"test -s a.txt\"]\n",
		"agent.txt": `== plan
write output/plan.json {"tasks":[{"id":"T-1","title":"a","description":"d","targetFile":"a.txt","passes":false,"notes":""},{"id":"T-002","description":"d","targetFile":"a.txt","passes":false,"notes":""},{"id":"T-002","title":"c","description":"d","targetFile":"a.txt","passes":"no","notes":""},"oops",{"id":"T-005","title":"e","description":"d","targetFile":"","passes":false}]}
== replan
plan T-001:a.txt
== build
auto
`,
	}
	out, evs, dir := fakeLoop(t, files, nil)
	if out.Reason != ReasonDone {
		t.Fatalf("outcome %s: %s; want done", out.Reason, out.Summary)
	}
	if len(events(evs, record.PlanInvalid)) == 0 {
		t.Error("no plan_invalid record")
	}
	p := promptOf(t, dir, 2)
	for _, want := range []string{
		`task 1 (T-1): id "T-1" must look like T-001`,
		`task 2 (T-002): missing "title"`,
		`task 3 (T-002): id "T-002" is used by task 2 too`,
		`task 4 is not an object`,
		`task 5 (T-005): "targetFile" is empty`,
	} {
		if !strings.Contains(p, want) {
			t.Errorf("replan prompt lacks %q", want)
		}
	}
}

// A malformed plan.json already on disk when a build step starts (written
// by hand, or left by a crash): the step does not build from it; the plan is
// archived and re-planned.
func TestEngineMalformedPlanOnDiskAtStepStart(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"loop.yaml": "objective: \"a.txt exists\"\nsandbox: off\nagent: {backend: command, command: AGENT}\nverify: [\"test -s a.txt\"]\nbudget: {iterations: 3}\n",
		"agent.txt": "== plan\nplan T-001:a.txt\n== replan\nplan T-001:a.txt\n== build\nauto\n",
	}
	// A first run stopped by its budget before any build: one plan run.
	out, _, _ := fakeLoopIn(t, dir, files, func(l *spec.Loop) { l.Budget.Iterations = 0 }, Options{})
	if out.Reason != ReasonBudget {
		t.Fatalf("first run: %s: %s; want budget", out.Reason, out.Summary)
	}
	os.WriteFile(loopdir.Dir(dir).Plan(), []byte(`{"tasks": [`), 0o644)
	out, evs, _ := fakeLoopIn(t, dir, nil, nil, Options{})
	if out.Reason != ReasonDone {
		t.Fatalf("outcome %s: %s; want done after a re-plan", out.Reason, out.Summary)
	}
	if len(events(evs, record.PlanInvalid)) != 1 {
		t.Errorf("plan_invalid records %d, want 1 for the malformed plan on disk", len(events(evs, record.PlanInvalid)))
	}
	starts := events(evs, record.AgentStart)
	if len(starts) == 0 || starts[0].Phase == "build" {
		t.Errorf("agent runs %+v: the first run after a malformed plan must not be a build", starts)
	}
}

// The iteration budget ends a cycle loop BUDGET (exit 3) with the open task
// named, and no run past it.
func TestEngineIterationBudget(t *testing.T) {
	files := map[string]string{
		"loop.yaml": "objective: \"a.txt exists\"\nsandbox: off\nagent: {backend: command, command: AGENT}\nverify: [\"test -s a.txt\"]\nbudget: {iterations: 2, same_failure: 10}\n",
		"agent.txt": "== plan\nplan T-001:a.txt\n== build\nprogress T-001: tried\n",
	}
	out, evs, _ := fakeLoop(t, files, nil)
	if out.Reason != ReasonBudget || out.ExitCode != ExitCodes[ReasonBudget] {
		t.Fatalf("outcome %s (exit %d): %s; want budget", out.Reason, out.ExitCode, out.Summary)
	}
	if !strings.Contains(out.Summary, "2 build runs") || !strings.Contains(out.Summary, "T-001 still open") {
		t.Errorf("summary %q, want 2 build runs and T-001 still open", out.Summary)
	}
	if n := len(events(evs, record.AgentStart)); n != 3 {
		t.Errorf("%d agent runs, want 3 (plan + 2 builds)", n)
	}
	if len(out.Next) == 0 {
		t.Error("a budget stop names no next step")
	}
}

// The same failure budget.same_failure times in a row is NO PROGRESS.
func TestEngineSameFailureIsNoProgress(t *testing.T) {
	files := map[string]string{
		"loop.yaml": "objective: \"a.txt exists\"\nsandbox: off\nagent: {backend: command, command: AGENT}\nverify: [\"test -s a.txt\"]\nbudget: {iterations: 10, same_failure: 2}\n",
		"agent.txt": "== plan\nplan T-001:a.txt\n== build\nsay nothing\n",
	}
	out, evs, _ := fakeLoop(t, files, nil)
	if out.Reason != ReasonNoProgress || out.ExitCode != ExitCodes[ReasonNoProgress] {
		t.Fatalf("outcome %s (exit %d): %s; want no_progress", out.Reason, out.ExitCode, out.Summary)
	}
	if n := len(events(evs, record.AgentStart)); n != 3 {
		t.Errorf("%d agent runs, want 3 (plan + 2 builds failing alike)", n)
	}
}

// An agent that edits a protected test: the edit is restored and recorded,
// the run is a failed attempt, the next prompt names the violation; the
// next run does the real work.
func TestEngineProtectedEditRestored(t *testing.T) {
	files := map[string]string{
		"loop.yaml": `sandbox: off
objective: "out/answer.txt holds the expected answer"
agent: {backend: command, command: AGENT}
protect: ["tests/**"]
verify: ["cmp out/answer.txt tests/expected.txt"]
`,
		"tests/expected.txt": "42\n",
		"agent.txt": `== plan
plan T-001:out/answer.txt
== build
write out/answer.txt 41
write tests/expected.txt 41
mark
== build
do 42\n
`,
	}
	out, evs, dir := fakeLoop(t, files, nil)
	if out.Reason != ReasonDone {
		t.Fatalf("outcome %s: %s; want done", out.Reason, out.Summary)
	}
	v := events(evs, record.Violation)
	if len(v) != 1 || v[0].File != "tests/expected.txt" || v[0].Kind != "protected_file" || v[0].Task != "T-001" {
		t.Errorf("violations %+v, want one for tests/expected.txt", v)
	}
	if got := readFile(t, filepath.Join(dir, "tests/expected.txt")); got != "42\n" {
		t.Errorf("protected file %q, want it restored to 42", got)
	}
	if p := promptOf(t, dir, 3); !strings.Contains(p, "VIOLATION: tests/expected.txt is protected") {
		t.Errorf("next prompt lacks the violation:\n%s", p)
	}
	if out.State.Iterations != 2 {
		t.Errorf("%d iterations, want 2", out.State.Iterations)
	}
}

// An agent that asks for a human stops the loop BLOCKED with its reason.
func TestEngineAgentAsksForHuman(t *testing.T) {
	files := map[string]string{
		"loop.yaml": "objective: \"a.txt exists\"\nsandbox: off\nagent: {backend: command, command: AGENT}\nverify: [\"test -s a.txt\"]\n",
		"agent.txt": "== plan\nplan T-001:a.txt\n== build\nblocked the API key is missing\n",
	}
	out, _, _ := fakeLoop(t, files, nil)
	if out.Reason != ReasonBlocked || out.ExitCode != ExitCodes[ReasonBlocked] || !strings.Contains(out.Summary, "the API key is missing") {
		t.Fatalf("outcome %s (exit %d): %s; want blocked with the agent's reason", out.Reason, out.ExitCode, out.Summary)
	}
}

// An agent that exits non-zero stops the loop BLOCKED.
func TestEngineAgentFails(t *testing.T) {
	files := map[string]string{
		"loop.yaml": "objective: \"a.txt exists\"\nsandbox: off\nagent: {backend: command, command: AGENT}\nverify: [\"test -s a.txt\"]\n",
		"agent.txt": "== plan\nsay broken\nexit 7\n",
	}
	out, _, _ := fakeLoop(t, files, nil)
	if out.Reason != ReasonBlocked || !strings.Contains(out.Summary, "plan run") {
		t.Fatalf("outcome %s: %s; want blocked in the plan run", out.Reason, out.Summary)
	}
	// The agent printed something: the summary names its transcript.
	if !strings.Contains(out.Summary, "(transcript ") || !strings.Contains(out.Summary, "0001-c1-i0-plan.log") {
		t.Errorf("summary %q does not name the run's transcript", out.Summary)
	}
}

// The cost budget: spend reported by the agent that reaches budget.cost_usd
// stops the loop TIME OR COST, with the spend in the state.
func TestEngineCostBudgetStops(t *testing.T) {
	files := map[string]string{
		"loop.yaml": "objective: \"a.txt exists\"\nsandbox: off\nagent: {backend: command, command: AGENT}\nverify: [\"test -s a.txt\"]\nbudget: {cost_usd: 1, same_failure: 10}\n",
		"agent.txt": "== plan\nplan T-001:a.txt\ncost 0.4\n== build\ncost 0.4\n",
	}
	out, evs, _ := fakeLoop(t, files, nil)
	if out.Reason != ReasonTimeCost || out.ExitCode != ExitCodes[ReasonTimeCost] {
		t.Fatalf("outcome %s (exit %d): %s; want time_or_cost", out.Reason, out.ExitCode, out.Summary)
	}
	if out.State.CostUSD < 1.19 || out.State.CostUSD > 1.21 {
		t.Errorf("spent %.2f, want 1.20", out.State.CostUSD)
	}
	if n := len(events(evs, record.AgentStart)); n != 3 {
		t.Errorf("%d agent runs, want 3 (0.40, then 0.80 spent, both under the budget)", n)
	}
	if w := events(evs, record.BudgetWarning); len(w) != 1 || w[0].Kind != "cost_usd" {
		t.Errorf("budget warnings %+v, want one for cost_usd at exactly 80%%", w)
	}
}

const reviewLoop = `shape: review
sandbox: off
objective: "calc.sh divides two numbers safely"
agent: {backend: command, command: AGENT, timeout: 30s}
verify: ["sh check.sh"]
`

func gitInit(t *testing.T, dir string) {
	t.Helper()
	for _, args := range [][]string{
		{"init", "-q"}, {"config", "user.email", "t@example.com"}, {"config", "user.name", "Test"},
		{"add", "-A"}, {"commit", "-qm", "start"},
	} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
}

// The review shape: findings fall over three rounds to below the bar; the
// fixer gets the findings at or above it, the checks run after each fix,
// and the report has a row per round. DONE, exit 0.
func TestEngineReviewRounds(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	dir := t.TempDir()
	for n, b := range map[string]string{".gitignore": "working-records/\nagent.txt\nloop.yaml\n", "check.sh": "echo CHECK-RAN\n", "calc.sh": "#!/bin/sh\n", "README.md": "# calc\n"} {
		os.WriteFile(filepath.Join(dir, n), []byte(b), 0o644)
	}
	gitInit(t, dir)
	os.WriteFile(filepath.Join(dir, "calc.sh"), []byte("#!/bin/sh\necho $(($1 / $2))\n"), 0o644)
	files := map[string]string{
		"loop.yaml": reviewLoop,
		"agent.txt": `== reviewer
findings {"findings":[{"id":"F-1","severity":"critical","file":"calc.sh","line":2,"title":"division by zero is not handled","detail":"calc.sh 1 0 crashes","kind":"input-validation"},{"id":"F-2","severity":"major","file":"README.md","line":0,"title":"usage is not documented","detail":"README has no usage","kind":"docs"},{"id":"F-3","severity":"minor","file":"calc.sh","line":1,"title":"name the variables","detail":"use a and b","kind":"style"}]}
== reviewer
findings {"findings":[{"id":"F-1","severity":"major","file":"README.md","line":3,"title":"the usage example divides by zero","detail":"the example is wrong","kind":"docs-example"}]}
== reviewer
findings {"findings":[{"id":"F-1","severity":"minor","file":"calc.sh","line":1,"title":"name the variables","detail":"use a and b","kind":"style"}]}
== fixer
write calc.sh #!/bin/sh\n[ "$2" -ne 0 ] || exit 3\necho $(($1 / $2))
run git add calc.sh && git commit -qm "fix F-1: guard division by zero"
write README.md # calc\nusage: calc.sh A B
run git add README.md && git commit -qm "docs: usage for F-2"
== fixer
write README.md # calc\nusage: calc.sh A B\nexample: calc.sh 6 3
run git add README.md && git commit -qm "docs: fix the usage example"
`,
	}
	out, evs, _ := fakeLoopIn(t, dir, files, nil, Options{})
	if out.Reason != ReasonDone || out.ExitCode != 0 {
		t.Fatalf("outcome %s (exit %d): %s; want done", out.Reason, out.ExitCode, out.Summary)
	}
	var phases []string
	for _, e := range events(evs, record.AgentStart) {
		phases = append(phases, e.Phase+":"+e.Task)
	}
	if got := strings.Join(phases, " "); got != "reviewer:round-1 fixer:round-1 reviewer:round-2 fixer:round-2 reviewer:round-3" {
		t.Errorf("agent runs %s", got)
	}
	fix := promptOf(t, dir, 2)
	if !strings.Contains(fix, "## F-1 · critical · calc.sh:2") || !strings.Contains(fix, "## F-2 · major · README.md") || strings.Contains(fix, "## F-3") {
		t.Errorf("fixer prompt: want F-1 and F-2 in full, F-3 only as optional:\n%s", fix)
	}
	if !strings.Contains(fix, "calc.sh divides two numbers safely") {
		t.Error("fixer prompt lacks the objective")
	}
	n := 0
	for _, v := range events(evs, record.Verify) {
		if v.Gate == "review-fix" && v.Pass != nil && *v.Pass {
			n++
		}
	}
	if n != 2 {
		t.Errorf("%d passing review-fix checks, want 2 (one after each fix)", n)
	}
	rep := readFile(t, filepath.Join(dir, loopdir.RecordsDir, "review-report.md"))
	for _, want := range []string{"| 1 | 1 | 1 | 1 | fix F-1: guard division by zero; docs: usage for F-2 |", "| 3 | 0 | 0 | 1 |", "Outcome: done"} {
		if !strings.Contains(rep, want) {
			t.Errorf("review report lacks %q:\n%s", want, rep)
		}
	}
}

// The same finding (same kind, same place) in the next round is RECURRING;
// the same set of findings twice stops the review NO PROGRESS.
func TestEngineReviewSameFindingsStop(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	dir := t.TempDir()
	for n, b := range map[string]string{".gitignore": "working-records/\nagent.txt\nloop.yaml\n", "check.sh": "true\n", "calc.sh": "#!/bin/sh\n"} {
		os.WriteFile(filepath.Join(dir, n), []byte(b), 0o644)
	}
	gitInit(t, dir)
	os.WriteFile(filepath.Join(dir, "calc.sh"), []byte("#!/bin/sh\necho $(($1 / $2))\n"), 0o644)
	files := map[string]string{
		"loop.yaml": reviewLoop + "review: {max_rounds: 2}\n",
		"agent.txt": `== reviewer
findings {"findings":[{"id":"F-1","severity":"critical","file":"calc.sh","line":2,"title":"division by zero is not handled","detail":"crashes","kind":"input-validation"}]}
== fixer
write calc.sh #!/bin/sh\necho $(($1 / $2)) # tried
`,
	}
	out, evs, _ := fakeLoopIn(t, dir, files, nil, Options{})
	if out.Reason != ReasonNoProgress || out.ExitCode != ExitCodes[ReasonNoProgress] || !strings.Contains(out.Summary, "the fixes did not take") {
		t.Fatalf("outcome %s (exit %d): %s; want no_progress: the fixes did not take", out.Reason, out.ExitCode, out.Summary)
	}
	rec := 0
	for _, e := range events(evs, record.Review) {
		if e.Kind == "recurring" {
			rec++
		}
	}
	if rec != 1 {
		t.Errorf("%d recurring records, want 1 (round 2's F-1 is round 1's)", rec)
	}
	if n := len(events(evs, record.AgentStart)); n != 3 {
		t.Errorf("%d agent runs, want 3: no fixer runs on a set that already came back", n)
	}
}

// The same objective gap cycle after cycle: the second re-plan is told the
// diagnosis was wrong (the first is not), and at budget.gap_stall cycles
// the loop stops NO PROGRESS.
func TestEngineRepeatedObjectiveGap(t *testing.T) {
	files := map[string]string{
		"loop.yaml": `objective: "slow.txt and fast.txt exist"
sandbox: off
agent: {backend: command, command: AGENT}
budget: {gap_stall: 3, cycles: 10}
verify: ["test -s slow.txt"]
objective_verify: ['test -s fast.txt || { echo "Error: fast.txt missing"; exit 1; }']
`,
		"agent.txt": "== plan\nplan T-001:slow.txt\n== replan\nplan T-001:other.txt\n== build\nauto\n",
	}
	out, evs, dir := fakeLoop(t, files, nil)
	if out.Reason != ReasonNoProgress || !strings.Contains(out.Summary, "the objective gap stayed the same for 3 cycles") {
		t.Fatalf("outcome %s: %s; want no_progress after 3 cycles with the same gap", out.Reason, out.Summary)
	}
	if n := len(events(evs, record.AgentStart)); n != 6 {
		t.Errorf("%d agent runs, want 6 (plan, build, then replan and build twice)", n)
	}
	const hint = "The diagnosis behind the last plan was wrong"
	if p := promptOf(t, dir, 3); strings.Contains(p, hint) || !strings.Contains(p, "fast.txt missing") {
		t.Errorf("first re-plan: want the gap without the repeated hint:\n%s", p)
	}
	if p := promptOf(t, dir, 5); !strings.Contains(p, hint) {
		t.Errorf("second re-plan with the same gap lacks the repeated hint:\n%s", p)
	}
}
