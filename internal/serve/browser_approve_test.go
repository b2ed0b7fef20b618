package serve_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/looprinter/looprinter/internal/ops"
	"github.com/looprinter/looprinter/record"
)

const approveLoop = `sandbox: off
version: 1
name: approver
objective: "two files exist under out/"
agent:
  backend: command
  command: looprinter fake-agent --script agent.txt
  timeout: 60s
plan: {approve: {timeout: 1h, then: stop}}
verify:
  - test -s out/a.txt
  - test -s out/b.txt
`

const approveAgent = `== plan
plan T-001:out/a.txt T-002:out/b.txt
== build
do
`

// TestBrowserApprove: a loop whose first plan waits for approval
// (plan.approve) shows the plan and an Approve button on its page;
// clicking it lets the loop go on (its build runs start), and the
// approval section goes once the loop does.
func TestBrowserApprove(t *testing.T) {
	chromium := findChromium(t)
	t.Setenv("LOOPRINTER_STATE_DIR", filepath.Join(t.TempDir(), "state"))
	out := artifacts(t)
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "loop.yaml"), []byte(approveLoop), 0o644)
	os.WriteFile(filepath.Join(dir, "agent.txt"), []byte(approveAgent), 0o644)
	cmd := exec.Command("looprinter", "start")
	cmd.Dir = dir
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("looprinter start: %v\n%s", err, b)
	}
	t.Cleanup(func() {
		c := exec.Command("looprinter", "stop", "--now", "approver")
		c.Dir = dir
		c.Run()
	})
	waitRecord(t, dir, hangGuard, func(e record.Event) bool { return e.Event == record.PlanApproval && e.Kind == "asked" })
	url, token := startServe(t)
	ctx, shot, text := newBrowser(t, chromium, out)

	// Read-only: the plan waits and is shown, but there is no button.
	if err := chromedp.Do(ctx, chromedp.Navigate(url+"loops/approver"), chromedp.WaitVisible(chromedp.CSS(`#plan`))); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.querySelector("#approval") !== null`, chromedp.WithPollingTimeout(30*time.Second))); err != nil {
		t.Fatalf("the loop page shows no plan waiting for approval: %v", err)
	}
	if n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("button#approve").length`)); err != nil || n != 0 {
		t.Errorf("without signing in: %d Approve buttons (%v); want none", n, err)
	}

	if err := chromedp.Do(ctx, chromedp.Navigate(url+"login#token="+token), chromedp.WaitVisible(chromedp.CSS(`#rows tr`))); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(url+"loops/approver"), chromedp.WaitVisible(chromedp.CSS(`button#approve`))); err != nil {
		t.Fatal(err)
	}
	plan := text(`#approval-plan`)
	for _, id := range []string{"T-001", "T-002"} {
		if !strings.Contains(plan, id) {
			t.Errorf("the plan waiting for approval lacks %s: %q", id, plan)
		}
	}
	if head := text(`#approval h2`); !strings.Contains(head, "waits for your approval") {
		t.Errorf("the approval's heading: %q", head)
	}
	// No build run before the OK.
	if evs := buildStarts(t, dir); evs != 0 {
		t.Fatalf("%d build runs started before the approval", evs)
	}
	shot("approve.png")

	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`button#approve`)), chromedp.WaitVisible(chromedp.CSS(`.flash`))); err != nil {
		t.Fatal(err)
	}
	if f := text(`.flash`); !strings.Contains(f, "approve") {
		t.Errorf("after Approve the page says %q", f)
	}
	ok := waitRecord(t, dir, hangGuard, func(e record.Event) bool { return e.Event == record.PlanApproval && e.Kind == "approved" })
	if !strings.HasPrefix(ok.By, "serve token ") {
		t.Errorf("the approval's record names %q, want the serve token", ok.By)
	}
	// The loop goes on: its build runs start, and it ends DONE.
	waitRecord(t, dir, hangGuard, func(e record.Event) bool { return e.Event == record.AgentStart && e.Phase == "build" })
	waitRecord(t, dir, hangGuard, func(e record.Event) bool { return e.Event == record.LoopStop })
	deadline := time.Now().Add(hangGuard)
	for {
		n, _ := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("#approval").length`))
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the approval is still shown after the loop went on")
		}
		time.Sleep(200 * time.Millisecond)
	}
	shot("approved.png")
}

// buildStarts counts the build runs the loop in dir has started.
func buildStarts(t *testing.T, dir string) int {
	t.Helper()
	n := 0
	evs, _ := ops.ReadAll(dir)
	for _, e := range evs {
		if e.Event == record.AgentStart && e.Phase == "build" {
			n++
		}
	}
	return n
}
