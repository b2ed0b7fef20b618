package serve_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/sandbox"
)

const waveLoop = `version: 1
name: wavy
objective: "three files exist under out/"
agent: {backend: command, command: looprinter fake-agent --script agent.txt, timeout: 5m, max_budget_usd: 1}
parallel: 2
verify: [test -s out/a.txt, test -s out/b.txt, test -s out/c.txt]
`

// The wave's two runs sleep long enough for the page to be read; the
// test stops the loop when it is done.
const waveAgent = `== plan
plan T-001:out/a.txt T-002:out/b.txt T-003:out/c.txt
== build
run sleep 120
do
== build
run sleep 120
do
== build
do
`

const ralphLoop = `version: 1
name: ralphy
shape: ralph
sandbox: "off"
objective: x
agent: {backend: command, command: looprinter fake-agent --script agent.txt}
verify: ["test -s out.txt"]
`

const ralphAgent = "== ralph\nwrite out.txt done\nprogress wrote it\npromise DONE\n"

// TestBrowserWaveAndRalph: in the browser, a finished ralph loop's row
// says nothing of a pending objective gate or of "0 / 0" tasks; and while
// a wave (parallel: 2) runs T-001 and T-002, the loop page's plan marks
// both in progress, T-003 not, and the headline names both. Screenshots
// list-ralph-finished.png and wave.png.
func TestBrowserWaveAndRalph(t *testing.T) {
	chromium := findChromium(t)
	if err := sandbox.LayerProbe(); err != nil {
		// A wave runs each of its runs on a copy-on-write layer.
		t.Skipf("no copy-on-write layers on this machine: %v", err)
	}
	t.Setenv("LOOPRINTER_STATE_DIR", filepath.Join(t.TempDir(), "state"))
	out := artifacts(t)

	ralph := t.TempDir()
	os.WriteFile(filepath.Join(ralph, "loop.yaml"), []byte(ralphLoop), 0o644)
	os.WriteFile(filepath.Join(ralph, "agent.txt"), []byte(ralphAgent), 0o644)
	c := exec.Command("looprinter", "run")
	c.Dir = ralph
	if b, err := c.CombinedOutput(); err != nil {
		t.Fatalf("looprinter run (ralph): %v\n%s", err, b)
	}

	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "loop.yaml"), []byte(waveLoop), 0o644)
	os.WriteFile(filepath.Join(dir, "agent.txt"), []byte(waveAgent), 0o644)
	cmd := exec.Command("looprinter", "start")
	cmd.Dir = dir
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("looprinter start: %v\n%s", err, b)
	}
	t.Cleanup(func() {
		c := exec.Command("looprinter", "stop", "--now", "wavy")
		c.Dir = dir
		c.Run()
	})
	waitRecord(t, dir, hangGuard, func(e record.Event) bool {
		return e.Event == record.AgentStart && e.Task == "T-002" && e.Slot == 2
	})
	url, _ := startServe(t)
	ctx, shot, text := newBrowser(t, chromium, out)

	if err := chromedp.Do(ctx, chromedp.Navigate(url), chromedp.WaitVisible(chromedp.CSS(`#rows tr`))); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`[...document.querySelectorAll("#rows tr")].some(r => r.textContent.includes("ralphy"))`, chromedp.WithPollingTimeout(hangGuard))); err != nil {
		t.Fatalf("no ralphy row in the list: %v", err)
	}
	row, err := chromedp.Run(ctx, chromedp.Evaluate[string](`[...document.querySelectorAll("#rows tr")].find(r => r.textContent.includes("ralphy")).textContent`))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(row, "pending") || strings.Contains(row, "0 / 0") || strings.Contains(row, "0/0") {
		t.Errorf("the finished ralph loop's row: %q", row)
	}
	if !strings.Contains(row, "DONE") {
		t.Errorf("the finished ralph loop's row does not say DONE: %q", row)
	}
	shot("list-ralph-finished.png")

	if err := chromedp.Do(ctx, chromedp.Navigate(url+"loops/wavy"), chromedp.WaitVisible(chromedp.CSS(`#plan`))); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(hangGuard)
	for {
		n, _ := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("#plan li.active").length`))
		if n == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d tasks marked in progress on the loop page; want 2: %q", n, text(`#plan`))
		}
		time.Sleep(200 * time.Millisecond)
		chromedp.Do(ctx, chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS(`#plan`)))
	}
	active, err := chromedp.Run(ctx, chromedp.Evaluate[string](`[...document.querySelectorAll("#plan li.active b")].map(b => b.textContent).join(",")`))
	if err != nil || active != "T-001,T-002" {
		t.Errorf("tasks in progress on the loop page: %q (%v); want T-001,T-002", active, err)
	}
	if body := text(`body`); !strings.Contains(body, "T-001, T-002 in progress") {
		t.Errorf("the loop page does not name both tasks in progress: %q", body)
	}
	shot("wave.png")
}
