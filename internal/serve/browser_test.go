package serve_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/rogpeppe/go-internal/testscript"

	"github.com/looprinter/looprinter/internal/cli"
	"github.com/looprinter/looprinter/internal/ops"
	"github.com/looprinter/looprinter/internal/testenv"
	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/record"
)

// TestMain puts this test binary on PATH as `looprinter` (for `start`,
// `serve` and the scripted agent), and keeps the tests off the user's state.
func TestMain(m *testing.M) {
	testscript.Main(stateDirM{m}, map[string]func(){
		"looprinter": func() { os.Exit(cli.Main(os.Args[1:])) },
	})
}

type stateDirM struct{ m *testing.M }

func (s stateDirM) Run() int { return testenv.Main(s.m) }

// browserRequired: in CI (or with LOOPRINTER_REQUIRE_BROWSER=1) a missing
// Chromium fails the browser test instead of skipping it.
func browserRequired() bool {
	return os.Getenv("CI") != "" || os.Getenv("LOOPRINTER_REQUIRE_BROWSER") == "1"
}

func findChromium(t *testing.T) string {
	if p := os.Getenv("LOOPRINTER_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "headless-shell"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	msg := "no Chromium found (install the Debian package chromium, or set LOOPRINTER_CHROMIUM)"
	if browserRequired() {
		t.Fatal(msg + " (required: CI or LOOPRINTER_REQUIRE_BROWSER=1 is set)")
	}
	t.Skip(msg)
	return ""
}

// artifacts is where the screenshots go: $LOOPRINTER_TEST_ARTIFACTS/serve
// (CI keeps them), else the test's temporary folder.
func artifacts(t *testing.T) string {
	dir := t.TempDir()
	if a := os.Getenv("LOOPRINTER_TEST_ARTIFACTS"); a != "" {
		dir = filepath.Join(a, "serve")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

const browserLoop = `sandbox: off
version: 1
name: web
objective: "five files exist under out/"
agent:
  backend: command
  command: looprinter fake-agent --script agent.txt
  timeout: 120s
  grace: 1s
verify:
  - test -s out/a.txt
  - 'test -s out/z.txt || (echo "FAIL: out/z.txt is missing"; exit 1)'
objective_verify:
  - test -s out/e.txt
`

// Cycle 1 builds two tasks quickly and fails its gate (no out/z.txt);
// in cycle 2 each build run waits until the test writes release-TASK, so
// the test decides when the loop moves on, however loaded the machine is.
const browserAgent = `== plan
cost 0.05
plan T-001:out/a.txt T-002:out/b.txt
== replan
cost 0.05
plan T-003:out/z.txt T-004:out/d.txt T-005:out/e.txt
== build
cost 0.20
do
== build
cost 0.20
do
== build
cost 0.20
run while [ ! -e "release-$LOOPRINTER_TASK" ]; do sleep 0.05; done
do
`

// startLoop starts the browser test's loop in the background and waits
// until cycle 2's first build run (T-003) is under way; it waits for
// release-T-003.
func startLoop(t *testing.T) (dir string) {
	dir = t.TempDir()
	os.WriteFile(filepath.Join(dir, "loop.yaml"), []byte(browserLoop), 0o644)
	os.WriteFile(filepath.Join(dir, "agent.txt"), []byte(browserAgent), 0o644)
	cmd := exec.Command("looprinter", "start")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("looprinter start: %v\n%s", err, out)
	}
	t.Cleanup(func() {
		c := exec.Command("looprinter", "stop", "--now", "web")
		c.Dir = dir
		c.Run()
	})
	waitRecord(t, dir, hangGuard, func(e record.Event) bool {
		return e.Event == record.AgentStart && e.Phase == "build" && e.Cycle == 2
	})
	return dir
}

// release lets the build run of task go on.
func release(t *testing.T, dir, task string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "release-"+task), nil, 0o644); err != nil {
		t.Fatal(err)
	}
}

// hangGuard is how long the browser test waits for a record, a page's
// change or the server's start: a guard against a hang only, never reached
// on a passing run however loaded the machine (each wait ends as soon as
// its condition holds).
const hangGuard = 3 * time.Minute

func waitRecord(t *testing.T, dir string, timeout time.Duration, match func(record.Event) bool) record.Event {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		evs, _ := ops.ReadAll(dir)
		for _, e := range evs {
			if match(e) {
				return e
			}
		}
		if time.Now().After(deadline) {
			var names []string
			for _, e := range evs {
				names = append(names, e.Event)
			}
			t.Fatalf("no matching record within %s; records: %s", timeout, strings.Join(names, " "))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// startServe runs `looprinter serve --addr 127.0.0.1:0` and returns its URL
// and the admin token it printed.
func startServe(t *testing.T) (url, token string) {
	cmd := exec.Command("looprinter", "serve", "--addr", "127.0.0.1:0")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		cmd.Wait()
	})
	urlRe := regexp.MustCompile(`looprinter serve: (http://127\.0\.0\.1:\d+/)`)
	tokRe := regexp.MustCompile(`^\s+(lpt_\S+)$`)
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	timeout := time.After(hangGuard)
	for url == "" || token == "" {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("serve exited: url %q token %q", url, token)
			}
			if m := urlRe.FindStringSubmatch(l); m != nil {
				url = m[1]
			}
			if m := tokRe.FindStringSubmatch(l); m != nil {
				token = m[1]
			}
		case <-timeout:
			t.Fatalf("serve printed no URL and token in 20s (url %q)", url)
		}
	}
	go func() {
		for range lines {
		}
	}()
	return url, token
}

// newBrowser starts headless Chromium for one test: its context, a
// screenshot function (a PNG in out) and a function that reads an
// element's text.
func newBrowser(t *testing.T, chromium, out string) (context.Context, func(string), func(string) string) {
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 1000),
		chromedp.Flag("disable-gpu", true),
	)
	if os.Geteuid() == 0 {
		opts = append(opts, chromedp.NoSandbox)
	}
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancel)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(cancel)
	ctx, cancel = context.WithTimeout(ctx, 10*time.Minute)
	t.Cleanup(cancel)
	shot := func(name string) {
		t.Helper()
		png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatalf("screenshot %s: %v", name, err)
		}
		if err := os.WriteFile(filepath.Join(out, name), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// text reads an element's text in one step inside the page: the live
	// parts are redrawn while the test reads them, so a node found in one
	// protocol call may be gone by the next.
	text := func(sel string) string {
		t.Helper()
		q, _ := json.Marshal(sel)
		s, err := chromedp.Run(ctx, chromedp.Poll[string](fmt.Sprintf(`(() => { const e = document.querySelector(%s); return e ? e.innerText : null })()`, q), chromedp.WithPollingTimeout(20*time.Second)))
		if err != nil {
			t.Fatalf("text of %s: %v", sel, err)
		}
		return s
	}
	return ctx, shot, text
}

// actionButtons are the buttons of a loop page's actions.
var actionButtons = []string{"pause", "resume", "stop", "guide", "answer"}

// actionsInView fails the test unless every action button of the loop page
// lies inside the viewport as the page is scrolled now (size names it).
func actionsInView(t *testing.T, ctx context.Context, size string) {
	t.Helper()
	ids, _ := json.Marshal(actionButtons)
	out, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](fmt.Sprintf(`%s.map(id => {
		const b = document.getElementById(id);
		if (!b) return id + ": missing";
		const r = b.getBoundingClientRect();
		const ok = r.width > 0 && r.height > 0 && r.top >= 0 && r.left >= 0 && r.bottom <= window.innerHeight && r.right <= window.innerWidth;
		return ok ? "" : id + ": " + JSON.stringify({top: r.top, bottom: r.bottom, left: r.left, right: r.right}) + " in " + window.innerWidth + "x" + window.innerHeight + " scrolled " + window.scrollY;
	}).filter(s => s)`, ids)))
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range out {
		t.Errorf("%s: an action button is not in view without scrolling: %s", size, o)
	}
}

// TestBrowser drives the dashboard in headless Chromium against `serve` on a
// live loop run by the scripted agent: the list shows the loop and both
// gates, the loop page shows the plan and the charts, and clicking Pause
// pauses the loop (the records say so).
func TestBrowser(t *testing.T) {
	chromium := findChromium(t)
	t.Setenv("LOOPRINTER_STATE_DIR", filepath.Join(t.TempDir(), "state"))
	out := artifacts(t)
	dir := startLoop(t)
	url, token := startServe(t)

	ctx, shot, text := newBrowser(t, chromium, out)

	// Read-only first: the list, without signing in.
	if err := chromedp.Do(ctx, chromedp.Navigate(url), chromedp.WaitVisible(chromedp.CSS(`#rows tr`))); err != nil {
		t.Fatal(err)
	}
	row := text(`#rows tr`)
	for _, want := range []string{"web", "running", "cycle", "build", "2", "0 / 3"} {
		if !strings.Contains(row, want) {
			t.Errorf("the list's row lacks %q: %q", want, row)
		}
	}
	// Cycle 1's gate failed; cycle 2's gates have not run yet.
	gate := regexp.MustCompile(`^(pending|pass|fail)$`)
	if cg, og := text(`#rows td[data-label="cycle gate"]`), text(`#rows td[data-label="objective gate"]`); !gate.MatchString(cg) || !gate.MatchString(og) {
		t.Errorf("gates in the list: cycle %q, objective %q", cg, og)
	}
	if n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("button#pause").length`)); err != nil || n != 0 {
		t.Errorf("without signing in: %d Pause buttons (%v); want none", n, err)
	}
	shot("list.png")

	// The list's filter: finished hides the running loop and says how many
	// it shows; running and a search for its name keep it.
	if err := chromedp.Do(ctx, chromedp.Navigate(url+"?state=finished"), chromedp.WaitVisible(chromedp.CSS(`form.filter`))); err != nil {
		t.Fatal(err)
	}
	if n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("#rows tr").length`)); err != nil || n != 0 {
		t.Errorf("state=finished: %d rows (%v); want none (the one loop runs)", n, err)
	}
	if shown := text(`form.filter .shown`); !strings.Contains(shown, "0 of 1 loops") {
		t.Errorf("state=finished: the filter says %q", shown)
	}
	shot("list-filter-finished.png")
	if err := chromedp.Do(ctx, chromedp.Navigate(url+"?state=running&q=WE"), chromedp.WaitVisible(chromedp.CSS(`#rows tr`))); err != nil {
		t.Fatal(err)
	}
	if row := text(`#rows tr`); !strings.Contains(row, "web") {
		t.Errorf("state=running&q=WE: the row %q", row)
	}
	shot("list-filter-running.png")

	// Sign in with the link serve printed (the token is in the fragment).
	if err := chromedp.Do(ctx, chromedp.Navigate(url+"login#token="+token), chromedp.WaitVisible(chromedp.CSS(`#rows tr`))); err != nil {
		t.Fatal(err)
	}
	if who := text(`.who`); !strings.Contains(who, "admin") {
		t.Fatalf("after signing in the header says %q", who)
	}

	// The loop's page, on a laptop's screen: the actions are in view
	// without scrolling; then the plan and charts.
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 800), chromedp.Click(chromedp.CSS(`#rows a`)), chromedp.WaitVisible(chromedp.CSS(`#plan`))); err != nil {
		t.Fatal(err)
	}
	actionsInView(t, ctx, "1280x800")
	plan := text(`#plan`)
	for _, id := range []string{"T-003", "T-004", "T-005"} {
		if !strings.Contains(plan, id) {
			t.Errorf("the plan lacks %s: %q", id, plan)
		}
	}
	// The cost chart draws a line once an agent run has ended; the
	// failures chart has cycle 1's bar; the timeline shows its failed gate.
	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(`svg.cost-chart path.line`)), chromedp.WaitVisible(chromedp.CSS(`svg.fail-chart rect.bar`))); err != nil {
		t.Fatal(err)
	}
	if tl := text(`.timeline`); !strings.Contains(tl, "cycle 1") || !strings.Contains(tl, "cycle: fail") {
		t.Errorf("the timeline: %q", tl)
	}
	// The records stream in: T-003 is let go and passes; the page shows it
	// without a reload.
	n0, _ := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("#records li").length`))
	release(t, dir, "T-003")
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](fmt.Sprintf(`document.querySelectorAll("#records li").length > %d && [...document.querySelectorAll("#records li.ev-task_passed")].some(li => li.textContent.includes("T-003"))`, n0), chromedp.WithPollingTimeout(30*time.Second))); err != nil {
		n, _ := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("#records li").length`))
		h, _ := chromedp.Run(ctx, chromedp.OuterHTML(chromedp.CSS("#records")))
		t.Fatalf("%v: %d records at first, %d now:\n%s", err, n0, n, h)
	}
	shot("loop.png")

	// Pause, from further down the page: the engine finishes its run, then
	// records that it is paused. The page comes back at the actions (the
	// address ends in #actions), not at its top.
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.scrollTo(0, document.body.scrollHeight), window.scrollY > 0`)); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`button#pause`)), chromedp.WaitVisible(chromedp.CSS(`.flash`))); err != nil {
		t.Fatal(err)
	}
	if hash, err := chromedp.Run(ctx, chromedp.Evaluate[string](`location.hash`)); err != nil || hash != "#actions" {
		t.Errorf("after Pause the page's address ends in %q (%v), want #actions", hash, err)
	}
	actionsInView(t, ctx, "1280x800, after Pause")
	if in, _ := chromedp.Run(ctx, chromedp.Evaluate[bool](`(() => { const r = document.querySelector(".flash").getBoundingClientRect(); return r.top >= 0 && r.bottom <= window.innerHeight })()`)); !in {
		t.Error("after Pause the message that it was done is not in view")
	}
	if _, err := os.Stat(loopdir.Dir(dir).Pause()); err != nil {
		t.Fatalf("Pause wrote no pause file: %v", err)
	}
	// T-004's run is under way; it ends, then the loop pauses.
	waitRecord(t, dir, hangGuard, func(e record.Event) bool { return e.Event == record.AgentStart && e.Task == "T-004" })
	release(t, dir, "T-004")
	waitRecord(t, dir, hangGuard, func(e record.Event) bool { return e.Event == record.Paused })
	// The page follows: the records list shows it, and the state says paused.
	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(`#records li.ev-paused`))); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(hangGuard)
	for text(`#state`) != "paused" {
		if time.Now().After(deadline) {
			t.Fatalf("the page's state is %q after the loop paused", text(`#state`))
		}
		time.Sleep(200 * time.Millisecond)
	}
	shot("loop-paused.png")
	if os.Getenv("LOOPRINTER_UPDATE_SCREENSHOT") == "1" {
		png, err := chromedp.Run(ctx, chromedp.Screenshot(chromedp.CSS(`#live`)))
		if err == nil {
			err = os.WriteFile(filepath.Join("..", "..", "docs", "serve.png"), png, 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}

	// An agent run's page: prompt, transcript, diff note.
	if err := chromedp.Do(ctx, chromedp.Navigate(url+"loops/web/runs/2"), chromedp.WaitVisible(chromedp.CSS(`.transcript`))); err != nil {
		t.Fatal(err)
	}
	if h := text(`h1`); !strings.Contains(h, "build T-001") {
		t.Errorf("run 2's title: %q", h)
	}
	shot("run.png")

	// A phone-sized screen: the list fits without sideways scrolling.
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile), chromedp.Navigate(url), chromedp.WaitVisible(chromedp.CSS(`#rows tr`))); err != nil {
		t.Fatal(err)
	}
	over, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.documentElement.scrollWidth > window.innerWidth + 1`))
	if err != nil {
		t.Fatal(err)
	}
	if over {
		t.Error("the list is wider than a 390 px phone screen")
	}
	shot("list-phone.png")
	if err := chromedp.Do(ctx, chromedp.Navigate(url+"loops/web"), chromedp.WaitVisible(chromedp.CSS(`#plan`))); err != nil {
		t.Fatal(err)
	}
	over, _ = chromedp.Run(ctx, chromedp.Evaluate[bool](`document.documentElement.scrollWidth > window.innerWidth + 1`))
	if over {
		t.Error("the loop page is wider than a 390 px phone screen")
	}
	actionsInView(t, ctx, "390x844")
	shot("loop-phone.png")

	// The list is live: resumed through the API, the loop's row changes
	// without a reload.
	if err := chromedp.Do(ctx, chromedp.Navigate(url), chromedp.WaitVisible(chromedp.CSS(`#rows tr`))); err != nil {
		t.Fatal(err)
	}
	if st := text(`#rows .state`); st != "paused" {
		t.Fatalf("the list says %q before the resume", st)
	}
	req, _ := http.NewRequest("POST", url+"api/loops/web/resume", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("resume: %v %v", res, err)
	}
	res.Body.Close()
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.querySelector("#rows .state").textContent !== "paused"`, chromedp.WithPollingTimeout(20*time.Second))); err != nil {
		t.Errorf("the list still says %q after the resume: %v", text(`#rows .state`), err)
	}
	t.Logf("screenshots in %s", out)
	fmt.Fprintln(os.Stderr, "serve browser test screenshots:", out)
}

const askLoop = `sandbox: off
version: 1
name: asker
objective: "three files exist under out/"
agent:
  backend: command
  command: looprinter fake-agent --script agent.txt
  timeout: 60s
verify:
  - test -s out/one.txt
objective_verify:
  - test -s out/three.txt
`

const askAgent = `== plan
auto
== build
say I need a decision first.
say <ask id="q1">Tabs or spaces?</ask>
== build
auto
`

// TestBrowserAsk: an agent's <ask> shows as a question on the dashboard;
// typing an answer there lets the loop go on, and the next prompt carries
// the answer.
func TestBrowserAsk(t *testing.T) {
	chromium := findChromium(t)
	t.Setenv("LOOPRINTER_STATE_DIR", filepath.Join(t.TempDir(), "state"))
	out := artifacts(t)
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "loop.yaml"), []byte(askLoop), 0o644)
	os.WriteFile(filepath.Join(dir, "agent.txt"), []byte(askAgent), 0o644)
	cmd := exec.Command("looprinter", "start")
	cmd.Dir = dir
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("looprinter start: %v\n%s", err, b)
	}
	t.Cleanup(func() {
		c := exec.Command("looprinter", "stop", "--now", "asker")
		c.Dir = dir
		c.Run()
	})
	waitRecord(t, dir, hangGuard, func(e record.Event) bool { return e.Event == record.Question })
	url, token := startServe(t)
	ctx, shot, text := newBrowser(t, chromium, out)

	if err := chromedp.Do(ctx, chromedp.Navigate(url+"login#token="+token), chromedp.WaitVisible(chromedp.CSS(`#rows tr`))); err != nil {
		t.Fatal(err)
	}
	if row := text(`#rows tr`); !strings.Contains(row, "waiting") || !strings.Contains(row, "asks q1") {
		t.Errorf("the list's row: %q", row)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(url+"loops/asker"), chromedp.WaitVisible(chromedp.CSS(`#question`))); err != nil {
		t.Fatal(err)
	}
	if q := text(`#question-text`); q != "Tabs or spaces?" {
		t.Errorf("the question shown: %q", q)
	}
	shot("question.png")
	answer := `form[action$="/answer"]`
	if err := chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.CSS(answer+` textarea`), "Tabs, always."),
		chromedp.Click(chromedp.CSS(`button#answer`)),
		chromedp.WaitVisible(chromedp.CSS(`.flash`)),
	); err != nil {
		t.Fatal(err)
	}
	ans := waitRecord(t, dir, hangGuard, func(e record.Event) bool { return e.Event == record.Answer })
	if ans.Message != "Tabs, always." || ans.ID != "q1" || !strings.HasPrefix(ans.By, "serve token ") {
		t.Errorf("answer record: %+v", ans)
	}
	// The loop goes on: the next build run's prompt carries the answer.
	next := waitRecord(t, dir, hangGuard, func(e record.Event) bool {
		return e.Event == record.AgentStart && e.Phase == "build" && e.TS.After(ans.TS)
	})
	prompt, err := os.ReadFile(next.PromptFile)
	if err != nil || !strings.Contains(string(prompt), "Tabs, always.") || !strings.Contains(string(prompt), "Tabs or spaces?") {
		t.Errorf("the next prompt (%v) lacks the question and answer:\n%s", err, prompt)
	}
	// The page follows: the question is gone once the loop goes on.
	deadline := time.Now().Add(hangGuard)
	for {
		n, _ := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("#question").length`))
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the question is still shown after the answer")
		}
		time.Sleep(200 * time.Millisecond)
	}
	shot("answered.png")
}
