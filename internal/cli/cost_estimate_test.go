package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/looprinter/looprinter/internal/testkit"
)

// runCostEstimate runs `cost estimate` through its constructor; the cost
// parent command adds it to the tree.
func runEstimate(t *testing.T, dir string, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	stdio := &IO{In: strings.NewReader(""), Out: &out, Err: &errb}
	cmd := newCostEstimateCmd(stdio)
	cmd.SetArgs(args)
	cmd.SetOut(&out)
	cmd.SetErr(&errb)
	cmd.SilenceErrors, cmd.SilenceUsage = true, true
	if dir != "" {
		wd, _ := os.Getwd()
		if err := os.Chdir(dir); err != nil {
			t.Fatal(err)
		}
		defer os.Chdir(wd)
	}
	code := exitCode(stdio, cmd.Execute())
	return out.String(), errb.String(), code
}

func TestCostEstimateSeedNumbers(t *testing.T) {
	out, errs, code := runEstimate(t, t.TempDir())
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, row := range [][]string{
		{"writer", "opus", "30", "107,000", "1,798,000", "24,000", "$1.3746"},
		{"reviewer", "sonnet", "10", "47,000", "288,000", "8,000", "$0.2551"},
		{"fixer", "opus", "15", "62,000", "553,000", "12,000", "$0.6606"},
	} {
		if !hasRow(out, row...) {
			t.Errorf("no row %v in:\n%s", row, out)
		}
	}
	for _, want := range []string{
		"1.3746 + 3*(0.2551 + 0.6606) + 0.2551 = $4.3768   (3.2× a single write)",
		"(1.8× the fresh sessions)",
		"at 100%: $4.3768   at 70%: $6.2526   at 50%: $8.7536",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// hasRow reports whether some line of out has exactly these fields.
func hasRow(out string, fields ...string) bool {
	for _, line := range strings.Split(out, "\n") {
		if strings.Join(strings.Fields(line), " ") == strings.Join(fields, " ") {
			return true
		}
	}
	return false
}

func TestCostEstimateFlags(t *testing.T) {
	// Self-check question 4 of the seed: 2 rounds, no fix verification.
	out, errs, code := runEstimate(t, t.TempDir(), "--rounds", "2", "--fix-check=false", "--success-rate", "0.5")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"1.3746 + 2*(0.2551 + 0.6606) = $3.2060", "at 50%: $6.4120"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "at 70%") {
		t.Errorf("--success-rate should show only that rate:\n%s", out)
	}

	// A price override changes the numbers: reviewer on another model.
	out, _, code = runEstimate(t, t.TempDir(), "--reviewer", "gpt-5", "--price", "gpt-5=1.5,0.15,10")
	// 47,000*1.5 + 288,000*0.15 + 8,000*10 = 0.0705+0.0432+0.08
	if code != 0 || !hasRow(out, "reviewer", "gpt-5", "10", "47,000", "288,000", "8,000", "$0.1937") {
		t.Errorf("exit %d, output:\n%s", code, out)
	}

	// A prices file overrides the defaults field by field.
	dir := t.TempDir()
	testkit.WriteFile(t, filepath.Join(dir, "prices.yaml"), "opus:\n  output: 40\n")
	out, _, code = runEstimate(t, dir, "--prices", "prices.yaml")
	// writer: 0.535 + 0.3596 + 24,000*40/1e6 = 1.8546
	if code != 0 || !hasRow(out, "writer", "opus", "30", "107,000", "1,798,000", "24,000", "$1.8546") {
		t.Errorf("exit %d, output:\n%s", code, out)
	}

	for _, bad := range [][]string{
		{"--reviewer", "mystery-model"}, // no price known
		{"--price", "opus=1,2"},         // malformed
		{"--success-rate", "1.5"},       // not a rate
		{"--writer-turns", "0"},         // no turns
		{"--prices", "missing.yaml"},    // no file
	} {
		_, errs, code := runEstimate(t, t.TempDir(), bad...)
		if code != ExitUsage || errs == "" {
			t.Errorf("%v: exit %d, stderr %q; want %d with a message", bad, code, errs, ExitUsage)
		}
	}
	_, errs, _ = runEstimate(t, t.TempDir(), "--reviewer", "mystery-model")
	if !strings.Contains(errs, "--price mystery-model=") {
		t.Errorf("unknown price should say how to give one: %q", errs)
	}
}

const estimateLoop = `objective: "go test ./... passes"
agent:
  backend: claude
  model: opus
  max_budget_usd: 1
agents:
  build:
    model: claude-sonnet-5-5
budget:
  iterations: 20
  cycles: 4
  cost_usd: 15
verify: ["go test ./..."]
post_phases:
  - name: docs
    prompt: "write docs"
    done: DOCS_DONE
    max_steps: 2
`

func TestCostEstimateLoopFile(t *testing.T) {
	dir := t.TempDir()
	testkit.WriteFile(t, filepath.Join(dir, "loop.yaml"), estimateLoop)
	// ./loop.yaml is found without -f.
	out, errs, code := runEstimate(t, dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	// opus at 30 turns is $1.3746, capped at max_budget_usd 1; build on
	// sonnet prices is $0.8671 a run, 20 runs.
	for _, row := range [][]string{
		{"plan", "claude", "opus", "30", "$1.0000", "(max_budget_usd)", "1", "$1.0000"},
		{"replan", "claude", "opus", "30", "$1.0000", "(max_budget_usd)", "3", "$3.0000"},
		{"build", "claude", "claude-sonnet-5-5", "(sonnet", "prices)", "30", "$0.8671", "20", "$17.3420"},
		{"post:", "docs", "claude", "opus", "30", "$1.0000", "(max_budget_usd)", "2", "$2.0000"},
	} {
		if !hasRow(out, row...) {
			t.Errorf("no row %v in:\n%s", row, out)
		}
	}
	for _, want := range []string{
		"Typical (one cycle: a plan, 5 build runs and the post phases once): $6.3355",
		"Worst case, every budgeted run at max_turns: $23.3420",
		"so it spends at most $15.0000",
		"at 100%: $0.8671",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}

	// --turns and --tasks change the figures; the loop's prices: apply, and
	// --price beats them.
	testkit.WriteFile(t, filepath.Join(dir, "other.yaml"), `objective: "go test ./... passes"
shape: ralph
agent: {backend: codex, model: gpt-5-codex}
budget: {iterations: 4}
verify: ["go test ./..."]
prices:
  gpt-5: {cache_write: 1.5, cache_read: 0.15, output: 10}
`)
	out, errs, code = runEstimate(t, dir, "-f", "other.yaml", "--turns", "10")
	// 47,000*1.5 + 288,000*0.15 + 8,000*10 = $0.1937 a run, 4 runs
	if code != 0 || !hasRow(out, "ralph", "codex", "gpt-5-codex", "(gpt-5", "prices)", "10", "$0.1937", "4", "$0.7748") {
		t.Errorf("exit %d %s, output:\n%s", code, errs, out)
	}
	out, _, _ = runEstimate(t, dir, "-f", "other.yaml", "--turns", "10", "--price", "gpt-5=2.5,0.2,10")
	if !hasRow(out, "ralph", "codex", "gpt-5-codex", "(gpt-5", "prices)", "10", "$0.2551", "4", "$1.0204") {
		t.Errorf("--price should beat the loop's prices:\n%s", out)
	}

	// A model without a price is left out and named.
	testkit.WriteFile(t, filepath.Join(dir, "gem.yaml"), "objective: \"go test passes\"\nshape: ralph\nagent: {backend: gemini, model: mystery-model}\nverify: [\"go test ./...\"]\n")
	out, _, code = runEstimate(t, dir, "-f", "gem.yaml")
	if code != 0 || !strings.Contains(out, "no price for mystery-model") || !hasRow(out, "ralph", "gemini", "mystery-model", "30", "unknown", "30", "unknown") {
		t.Errorf("exit %d, output:\n%s", code, out)
	}

	// --no-loop ignores ./loop.yaml.
	out, _, _ = runEstimate(t, dir, "--no-loop")
	if !strings.Contains(out, "$4.3768") {
		t.Errorf("--no-loop:\n%s", out)
	}

	// A bad loop file is exit 78; a missing -f file too.
	testkit.WriteFile(t, filepath.Join(dir, "bad.yaml"), "objective: x\nbudget: {iterations: many}\n")
	if _, errs, code := runEstimate(t, dir, "-f", "bad.yaml"); code != ExitBadLoopFile || !strings.Contains(errs, "bad.yaml") {
		t.Errorf("bad loop file: exit %d %q", code, errs)
	}
	if _, errs, code := runEstimate(t, dir, "-f", "nope.yaml"); code != ExitBadLoopFile || !strings.Contains(errs, "looprinter init") {
		t.Errorf("missing loop file: exit %d %q", code, errs)
	}
}

func TestCostEstimateReviewLoopFile(t *testing.T) {
	dir := t.TempDir()
	testkit.WriteFile(t, filepath.Join(dir, "loop.yaml"), `shape: review
agent: {backend: claude, model: opus, max_turns: 15}
agents:
  reviewer: {model: sonnet, max_turns: 10}
  writer: {max_turns: 30}
review: {writer: "draft the change", max_rounds: 3}
`)
	out, errs, code := runEstimate(t, dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	// The seed's review loop from a loop file: writer once, reviewer 3 rounds
	// + fix check, fixer 3 rounds.
	for _, row := range [][]string{
		{"writer", "claude", "opus", "30", "$1.3746", "1", "$1.3746"},
		{"reviewer", "claude", "sonnet", "10", "$0.2551", "4", "$1.0204"},
		{"fixer", "claude", "opus", "15", "$0.6606", "3", "$1.9818"},
	} {
		if !hasRow(out, row...) {
			t.Errorf("no row %v in:\n%s", row, out)
		}
	}
	if !strings.Contains(out, "Typical (3 rounds and the fix check): $4.3768") {
		t.Errorf("review total:\n%s", out)
	}
}
