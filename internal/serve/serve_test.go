package serve_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/looprinter/looprinter/internal/ops"
	"github.com/looprinter/looprinter/internal/serve"
	"github.com/looprinter/looprinter/internal/testkit"
	"github.com/looprinter/looprinter/loop"
	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/review"
)

// marker stands for a secret: the agent prints it, a check prints it, so it
// is in the transcripts, the check output and the records. The test's
// redactor replaces it; no answer may carry it.
const marker = "SECRETMARKER-9f8e7d"

const fixtureLoop = `sandbox: off
version: 1
name: api
objective: "two files exist under out/"
agent: {backend: command, command: looprinter fake-agent --script agent.txt}
verify:
  - test -s out/one.txt
  - 'test -s out/two.txt || (echo "FAIL: out/two.txt is missing ` + marker + `"; exit 1)'
`

const fixtureAgent = `== plan
cost 0.10
say planning with ` + marker + `
plan T-001:out/one.txt
== replan
cost 0.10
plan T-001:out/two.txt
== build
cost 0.30
say building with ` + marker + `
auto
`

// fixture runs a small loop to DONE in a git repository (so each passed
// task is a commit): cycle 1's gate fails, cycle 2 passes.
func fixture(t *testing.T) (dir string) {
	t.Helper()
	t.Setenv("LOOPRINTER_STATE_DIR", filepath.Join(t.TempDir(), "state"))
	dir = t.TempDir()
	testkit.WriteTree(t, dir, map[string]string{"loop.yaml": fixtureLoop, "agent.txt": fixtureAgent, ".gitignore": "working-records/\n"})
	testkit.InitRepo(t, dir)
	c := exec.Command("looprinter", "run")
	c.Dir = dir
	if out, err := c.CombinedOutput(); err != nil {
		t.Fatalf("looprinter run: %v\n%s", err, out)
	}
	return dir
}

type env struct {
	t      *testing.T
	dir    string
	srv    *httptest.Server
	tokens *serve.Tokens
	admin  string
	read   string
	audit  *serve.Audit
	mu     sync.Mutex
	files  map[string]int // the loop files answers were redacted for
}

// newEnv serves the fixture on loopback (httptest listens on 127.0.0.1)
// with addr deciding whether the server thinks it is on loopback.
func newEnv(t *testing.T, dir, addr string) *env {
	t.Helper()
	e := &env{t: t, dir: dir, files: map[string]int{}}
	var err error
	e.tokens, e.admin, err = serve.OpenTokens(filepath.Join(t.TempDir(), "serve", "tokens.json"))
	if err != nil {
		t.Fatal(err)
	}
	if e.read, err = e.tokens.AddRead(); err != nil {
		t.Fatal(err)
	}
	e.audit = serve.OpenAudit(filepath.Join(t.TempDir(), "audit.jsonl"))
	s, err := serve.New(serve.Config{
		Addr: addr, Tokens: e.tokens, Audit: e.audit, Poll: 50 * time.Millisecond, StopTimeout: 10 * time.Second,
		Redact: func(file string, b []byte) []byte {
			e.mu.Lock()
			e.files[file]++
			e.mu.Unlock()
			return bytes.ReplaceAll(b, []byte(marker), []byte("[REDACTED:TEST]"))
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	e.srv = httptest.NewServer(s.Handler())
	t.Cleanup(e.srv.Close)
	return e
}

type reply struct {
	status int
	body   string
	header http.Header
}

func (e *env) do(method, path, token string, body io.Reader, hdr map[string]string) reply {
	e.t.Helper()
	req, err := http.NewRequest(method, e.srv.URL+path, body)
	if err != nil {
		e.t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for k, v := range hdr {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := c.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return reply{res.StatusCode, string(b), res.Header}
}

func (e *env) get(path, token string) reply { return e.do("GET", path, token, nil, nil) }

func (e *env) post(path, token string, form url.Values, hdr map[string]string) reply {
	if hdr == nil {
		hdr = map[string]string{}
	}
	hdr["Content-Type"] = "application/x-www-form-urlencoded"
	return e.do("POST", path, token, strings.NewReader(form.Encode()), hdr)
}

func TestReadRoutes(t *testing.T) {
	dir := fixture(t)
	e := newEnv(t, dir, "127.0.0.1:7878")
	key := ops.KeyFor("api", filepath.Join(dir, "loop.yaml"))
	cases := []struct {
		path  string
		ctype string
		want  []string
	}{
		{"/", "text/html", []string{`href="/loops/` + key + `"`, ">api<", "finished", `<span class="gate pass">pass</span>`, "DONE"}},
		{"/?part=rows", "text/html", []string{`data-key="` + key + `"`}},
		{"/loops/api", "text/html", []string{"T-001", "svg class=\"chart cost-chart", "svg class=\"chart fail-chart", "cycle 1", "cycle: fail", "cycle: pass", "Final report: DONE", "/loops/" + key + "/runs/1"}},
		{"/loops/" + key + "?part=live", "text/html", []string{"Final report", "Timeline"}},
		{"/loops/api/runs/2", "text/html", []string{"Run 2: build T-001", "building with", "commit "}},
		{"/api/loops", "application/json", []string{`"name": "api"`, `"state": "finished"`}},
		{"/api/loops/api", "application/json", []string{`"budget"`, `"last_records"`, `"outcome": "done"`}},
		{"/api/loops/" + key, "application/json", []string{`"name": "api"`}},
		{"/api/loops/api/records", "application/json", []string{`"event": "loop_start"`, `"event": "loop_stop"`}},
		{"/api/loops/api/records?format=text&tools=0&n=3", "text/plain", []string{"loop stopped: DONE"}},
		{"/api/loops/api/cost", "application/json", []string{`"by_phase"`, `"dir"`}},
		{"/api/loops/api/runs", "application/json", []string{`"n": 1`, `"phase": "plan"`, `"commit"`}},
		{"/api/loops/api/runs/2", "application/json", []string{`"prompt"`, `"transcript"`, `"kind": "text"`, `"diff": "commit `}},
		{"/api/loops/api/report", "application/json", []string{`"title": "DONE"`, `"reason": "done"`}},
		{"/static/app.css", "text/css", []string{"@media"}},
		{"/static/app.js", "text/javascript", []string{"EventSource"}},
		{"/login", "text/html", []string{`name="token"`}},
	}
	for _, c := range cases {
		r := e.get(c.path, "")
		if r.status != 200 {
			t.Errorf("GET %s: %d %s", c.path, r.status, r.body)
			continue
		}
		if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, c.ctype) {
			t.Errorf("GET %s: Content-Type %q, want %s", c.path, ct, c.ctype)
		}
		for _, w := range c.want {
			if !strings.Contains(r.body, w) {
				t.Errorf("GET %s lacks %q", c.path, w)
			}
		}
		if strings.Contains(r.body, marker) {
			t.Errorf("GET %s served the secret unredacted", c.path)
		}
	}
	// Answers about the loop were redacted with its own settings (its loop
	// file), answers about every loop with the server's.
	if e.files[filepath.Join(dir, "loop.yaml")] < 10 || e.files[""] < 2 {
		t.Errorf("redacted for: %v", e.files)
	}
	// The check output file, through the files route, redacted.
	var rep struct {
		Records []record.Event
	}
	evs, _ := ops.ReadAll(dir)
	rep.Records = evs
	var checkOut string
	for _, ev := range evs {
		for _, c := range ev.Checks {
			if !c.Pass && c.Output != "" && strings.Contains(c.Command, "two.txt") {
				checkOut = c.Output
			}
		}
	}
	if checkOut == "" {
		t.Fatal("no failed check output in the fixture's records")
	}
	rel, _ := filepath.Rel(loopdir.Dir(dir).Records(), filepath.Join(dir, checkOut))
	if filepath.IsAbs(checkOut) {
		rel, _ = filepath.Rel(loopdir.Dir(dir).Records(), checkOut)
	}
	r := e.get("/api/loops/api/files/"+rel, "")
	if r.status != 200 || !strings.Contains(r.body, "[REDACTED:TEST]") || strings.Contains(r.body, marker) {
		t.Errorf("GET files/%s: %d %q", rel, r.status, r.body)
	}
	// The raw files carry the secret: the redactor is what keeps it out.
	raw, _ := os.ReadFile(filepath.Join(dir, loopdir.RecordsDir, rel))
	if !strings.Contains(string(raw), marker) {
		t.Fatalf("the fixture's check output lacks the marker: %q", raw)
	}

	// Errors: unknown loop, unknown run, unknown route.
	for path, want := range map[string]int{
		"/api/loops/nope":           404,
		"/loops/nope":               404,
		"/api/loops/api/runs/99":    404,
		"/api/nothing":              404,
		"/api/loops/api/files/lock": 404,
	} {
		if r := e.get(path, ""); r.status != want {
			t.Errorf("GET %s: %d, want %d (%s)", path, r.status, want, r.body)
		}
	}
}

// TestFilesStayInsideRecords: the files route never leaves working-records,
// by a path or by a symbolic link an agent planted there.
func TestFilesStayInsideRecords(t *testing.T) {
	dir := fixture(t)
	e := newEnv(t, dir, "127.0.0.1:7878")
	secret := filepath.Join(t.TempDir(), "secret.txt")
	os.WriteFile(secret, []byte("outside "+marker), 0o644)
	os.Symlink(secret, filepath.Join(dir, loopdir.RecordsDir, "checks", "planted.log"))
	os.Symlink(filepath.Dir(secret), filepath.Join(dir, loopdir.RecordsDir, "up"))
	for _, p := range []string{
		"/api/loops/api/files/../loop.yaml",
		"/api/loops/api/files/..%2floop.yaml",
		"/api/loops/api/files/%2e%2e/%2e%2e/etc/passwd",
		"/api/loops/api/files/checks/planted.log",
		"/api/loops/api/files/up/secret.txt",
		"/api/loops/api/files/" + url.PathEscape(secret),
	} {
		r := e.get(p, "")
		if r.status == 200 || strings.Contains(r.body, "outside") || strings.Contains(r.body, "objective") {
			t.Errorf("GET %s: %d %q", p, r.status, r.body)
		}
	}
	// A loop is named by its key or name only, never by a path.
	for _, p := range []string{"/api/loops/..", "/api/loops/" + url.PathEscape(dir)} {
		if r := e.get(p, ""); r.status == 200 {
			t.Errorf("GET %s: %d %s", p, r.status, r.body)
		}
	}
}

func TestTokenRules(t *testing.T) {
	dir := fixture(t)
	e := newEnv(t, dir, "127.0.0.1:7878")

	// On loopback, reading needs no token; a wrong token is refused.
	if r := e.get("/api/loops", ""); r.status != 200 {
		t.Errorf("read without a token on loopback: %d", r.status)
	}
	if r := e.get("/api/loops", "lpt_00000000_wrong"); r.status != 401 {
		t.Errorf("read with a wrong token: %d, want 401", r.status)
	}
	// Actions: 401 without a token, 403 with a read token, 200 with admin.
	for _, a := range []string{"pause", "resume", "stop", "answer", "guide", "approve"} {
		if r := e.post("/api/loops/api/"+a, "", url.Values{"id": {"q1"}, "text": {"x"}}, nil); r.status != 401 {
			t.Errorf("%s without a token: %d, want 401", a, r.status)
		}
		if r := e.post("/api/loops/api/"+a, e.read, url.Values{"id": {"q1"}, "text": {"x"}}, nil); r.status != 403 {
			t.Errorf("%s with a read token: %d, want 403", a, r.status)
		}
		if r := e.post("/api/loops/api/"+a, "lpt_"+strings.Repeat("0", 8)+"_forged", nil, nil); r.status != 401 {
			t.Errorf("%s with a forged token: %d, want 401", a, r.status)
		}
	}
	if _, err := os.Stat(loopdir.Dir(dir).Pause()); err == nil {
		t.Fatal("a refused pause paused the loop")
	}
	r := e.post("/api/loops/api/pause", e.admin, nil, nil)
	if r.status != 200 {
		t.Fatalf("pause with the admin token: %d %s", r.status, r.body)
	}
	if _, err := os.Stat(loopdir.Dir(dir).Pause()); err != nil {
		t.Fatal("pause wrote no pause file")
	}
	if r := e.do("POST", "/api/loops/api/resume", e.admin, strings.NewReader(`{}`), map[string]string{"Content-Type": "application/json"}); r.status != 200 {
		t.Fatalf("resume (JSON): %d %s", r.status, r.body)
	}
	if _, err := os.Stat(loopdir.Dir(dir).Pause()); err == nil {
		t.Fatal("resume left the pause file")
	}
	// answer and guide go to the loop's operator channel, as the commands
	// do: a loop that waits for no answer refuses one (409); guidance is
	// queued, named by the token that gave it.
	if r := e.do("POST", "/api/loops/api/answer", e.admin, strings.NewReader(`{"id":"q1","text":"use sqlite"}`), map[string]string{"Content-Type": "application/json"}); r.status != 409 || !strings.Contains(r.body, "not waiting for an answer") {
		t.Errorf("answer to a loop that asked nothing: %d %s, want 409", r.status, r.body)
	}
	if r := e.post("/api/loops/api/guide", e.admin, url.Values{"text": {"smaller steps"}}, nil); r.status != 200 || !strings.Contains(r.body, "guidance queued") {
		t.Errorf("guide: %d %s", r.status, r.body)
	}
	en, _ := ops.Find("api")
	if g := ops.ChannelOf(en).Guidance; len(g) != 1 || g[0].Text != "smaller steps" || g[0].By != "serve token "+e.admin[4:12] {
		t.Errorf("queued guidance: %+v", g)
	}
	// approve: a loop that waits for no plan approval refuses it (409).
	if r := e.post("/api/loops/api/approve", e.admin, nil, nil); r.status != 409 || !strings.Contains(r.body, "not waiting for plan approval") {
		t.Errorf("approve of a loop that waits for none: %d %s, want 409", r.status, r.body)
	}
	if r := e.post("/api/loops/api/answer", e.admin, url.Values{"text": {"no id"}}, nil); r.status != 400 {
		t.Errorf("answer without an id: %d, want 400", r.status)
	}
	if r := e.post("/api/loops/api/guide", e.admin, url.Values{"text": {""}}, nil); r.status != 400 {
		t.Errorf("empty guidance: %d, want 400", r.status)
	}
	// stop on a finished loop: nothing to stop, said plainly.
	if r := e.post("/api/loops/api/stop", e.admin, nil, nil); r.status != 200 || !strings.Contains(r.body, "not running") {
		t.Errorf("stop: %d %s", r.status, r.body)
	}
	// The audit log names the token, the action and the answer, refused
	// ones included.
	var adminID string
	if m := regexp.MustCompile(`^lpt_([0-9a-f]+)_`).FindStringSubmatch(e.admin); m != nil {
		adminID = m[1]
	}
	var sawOK, saw401, saw403 bool
	for _, a := range e.audit.Read(1000) {
		switch {
		case a.Action == "pause" && a.Status == 200 && a.TokenID == adminID && a.Loop != "" && !a.TS.IsZero():
			sawOK = true
		case a.Status == 401 && a.TokenID == "":
			saw401 = true
		case a.Status == 403 && a.TokenID != "" && a.TokenID != adminID:
			saw403 = true
		}
	}
	if !sawOK || !saw401 || !saw403 {
		t.Errorf("audit: pause by admin %v, 401 %v, 403 by the read token %v\n%+v", sawOK, saw401, saw403, e.audit.Read(1000))
	}
	// The audit log is for admins.
	if r := e.get("/api/audit", e.read); r.status != 403 {
		t.Errorf("audit with a read token: %d", r.status)
	}
	if r := e.get("/api/audit", e.admin); r.status != 200 || !strings.Contains(r.body, `"action": "pause"`) {
		t.Errorf("audit with the admin token: %d", r.status)
	}
}

// TestNonLoopbackNeedsToken: bound beyond loopback, even reading needs a
// token (a read token will do).
func TestNonLoopbackNeedsToken(t *testing.T) {
	dir := fixture(t)
	e := newEnv(t, dir, "0.0.0.0:7878")
	for _, p := range []string{"/", "/api/loops", "/api/loops/api", "/api/loops/api/records/stream", "/loops/api"} {
		if r := e.get(p, ""); r.status != 401 {
			t.Errorf("GET %s without a token: %d, want 401", p, r.status)
		}
	}
	if r := e.do("GET", "/", "", nil, map[string]string{"Accept": "text/html"}); r.status != 303 || r.header.Get("Location") != "/login" {
		t.Errorf("a browser without a token: %d → %q, want the sign-in page", r.status, r.header.Get("Location"))
	}
	if r := e.get("/api/loops", e.read); r.status != 200 {
		t.Errorf("read token: %d", r.status)
	}
	if r := e.get("/login", ""); r.status != 200 {
		t.Errorf("the sign-in page: %d", r.status)
	}
	if r := e.post("/api/loops/api/pause", e.read, nil, nil); r.status != 403 {
		t.Errorf("pause with a read token: %d", r.status)
	}
}

// TestCSRFAndOrigin: a session cookie alone cannot act; the page's CSRF
// token is needed, and requests from another site or by another host name
// (DNS rebinding) are refused.
func TestCSRFAndOrigin(t *testing.T) {
	dir := fixture(t)
	e := newEnv(t, dir, "127.0.0.1:7878")
	// Sign in: the cookie is HttpOnly and SameSite=Strict.
	r := e.post("/login", "", url.Values{"token": {e.admin}}, nil)
	if r.status != 303 {
		t.Fatalf("login: %d %s", r.status, r.body)
	}
	c := r.header.Get("Set-Cookie")
	if !strings.Contains(c, "HttpOnly") || !strings.Contains(c, "SameSite=Strict") {
		t.Errorf("session cookie: %q", c)
	}
	cookie := strings.SplitN(c, ";", 2)[0]
	if r := e.post("/login", "", url.Values{"token": {"lpt_1_2"}}, nil); r.status != 303 || !strings.Contains(r.header.Get("Location"), "error") || r.header.Get("Set-Cookie") != "" {
		t.Errorf("login with a bad token: %d %q", r.status, r.header.Get("Location"))
	}
	page := e.do("GET", "/loops/api", "", nil, map[string]string{"Cookie": cookie})
	m := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindStringSubmatch(page.body)
	if m == nil {
		t.Fatalf("the loop page has no CSRF token for an admin session")
	}
	csrf := m[1]
	hdr := func(extra ...string) map[string]string {
		h := map[string]string{"Cookie": cookie}
		for i := 0; i+1 < len(extra); i += 2 {
			h[extra[i]] = extra[i+1]
		}
		return h
	}
	// Cookie without the CSRF token, with a wrong one: refused.
	if r := e.post("/api/loops/api/pause", "", url.Values{"from": {"page"}}, hdr()); r.status != 403 || !strings.Contains(r.body, "CSRF") {
		t.Errorf("cookie without CSRF: %d %s", r.status, r.body)
	}
	if r := e.post("/api/loops/api/pause", "", url.Values{"csrf": {csrf + "x"}}, hdr()); r.status != 403 {
		t.Errorf("cookie with a wrong CSRF: %d", r.status)
	}
	if _, err := os.Stat(loopdir.Dir(dir).Pause()); err == nil {
		t.Fatal("a refused pause paused the loop")
	}
	// A form posted from another site, with the right CSRF token even: refused.
	if r := e.post("/api/loops/api/pause", "", url.Values{"csrf": {csrf}}, hdr("Origin", "http://evil.example", "Sec-Fetch-Site", "cross-site")); r.status != 403 {
		t.Errorf("cross-site form: %d", r.status)
	}
	if r := e.post("/api/loops/api/pause", e.admin, nil, map[string]string{"Origin": "http://evil.example"}); r.status != 403 {
		t.Errorf("cross-origin POST with the bearer token: %d", r.status)
	}
	// The page's own form: accepted, and redirected back to the page's
	// actions, where the user was.
	r = e.post("/api/loops/api/pause", "", url.Values{"csrf": {csrf}, "from": {"page"}}, hdr("Origin", e.srv.URL, "Sec-Fetch-Site", "same-origin"))
	if r.status != 303 || !strings.HasPrefix(r.header.Get("Location"), "/loops/api") || !strings.HasSuffix(r.header.Get("Location"), "?done=pause#actions") {
		t.Errorf("the page's pause: %d %q %s", r.status, r.header.Get("Location"), r.body)
	}
	if _, err := os.Stat(loopdir.Dir(dir).Pause()); err != nil {
		t.Error("the page's pause wrote no pause file")
	}
	// A read token's session gets no CSRF token and cannot act.
	rr := e.post("/login", "", url.Values{"token": {e.read}}, nil)
	readCookie := strings.SplitN(rr.header.Get("Set-Cookie"), ";", 2)[0]
	if p := e.do("GET", "/loops/api", "", nil, map[string]string{"Cookie": readCookie}); strings.Contains(p.body, `name="csrf"`) || strings.Contains(p.body, `id="pause"`) {
		t.Error("a read session is offered the actions")
	}
	// DNS rebinding: a name that is not this server is refused, reads too.
	for _, host := range []string{"evil.example", "evil.example:7878", "localhost.evil.example"} {
		if r := e.do("GET", "/api/loops", "", nil, map[string]string{"Host": host}); r.status != http.StatusMisdirectedRequest {
			t.Errorf("Host %s: %d, want 421", host, r.status)
		}
	}
	for _, host := range []string{"localhost:7878", "127.0.0.1:7878", "[::1]:7878"} {
		if r := e.do("GET", "/api/loops", "", nil, map[string]string{"Host": host}); r.status != 200 {
			t.Errorf("Host %s: %d, want 200", host, r.status)
		}
	}
	// Pages are not framed and hold no inline script.
	if p := e.get("/loops/api", ""); !strings.Contains(p.header.Get("Content-Security-Policy"), "frame-ancestors 'none'") || strings.Contains(p.body, "<script>") {
		t.Errorf("CSP %q", p.header.Get("Content-Security-Policy"))
	}
}

// TestSSEDeliversNewRecord: a record appended to a loop's records reaches a
// client of the record stream (the stream looks every Poll, 200ms; how long
// that takes on a loaded machine is logged, not judged: the deadline only
// guards against a hang).
func TestSSEDeliversNewRecord(t *testing.T) {
	dir := fixture(t)
	e := newEnv(t, dir, "127.0.0.1:7878")
	// n=0: no backlog. A record appended as soon as the answer's headers
	// have come is a new one and must be sent (no sleep here: the server
	// reads the backlog before it answers).
	req, _ := http.NewRequest("GET", e.srv.URL+"/api/loops/api/records/stream?n=0", nil)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if ct := res.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type %q", ct)
	}
	st, err := loop.LoadState(dir)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(res.Body)
		for sc.Scan() {
			if l := sc.Text(); strings.HasPrefix(l, "data: ") && strings.Contains(l, "sse-probe") {
				got <- l
				return
			}
		}
	}()
	sent := time.Now()
	if err := ops.AppendRecord(st.Records, record.Event{Event: record.Warning, Message: "sse-probe " + marker}); err != nil {
		t.Fatal(err)
	}
	select {
	case l := <-got:
		t.Logf("delivered in %s", time.Since(sent))
		var ev struct {
			record.Event
			Text string `json:"text"`
		}
		if err := json.Unmarshal([]byte(strings.TrimPrefix(l, "data: ")), &ev); err != nil || ev.Event.Event != record.Warning || !strings.Contains(ev.Text, "sse-probe") {
			t.Errorf("event %q: %v", l, err)
		}
		if strings.Contains(l, marker) {
			t.Error("the stream carried the secret")
		}
	case <-time.After(time.Minute):
		t.Fatal("no record within a minute")
	}
}

// TestSSEBacklogAndResume: the stream sends the last n records first, and a
// reconnect with Last-Event-ID goes on after the last one seen.
func TestSSEBacklogAndResume(t *testing.T) {
	dir := fixture(t)
	e := newEnv(t, dir, "127.0.0.1:7878")
	// read reads the ids the stream sends until it has sent max, or want
	// and then nothing more for a second (more than max, or than want, is
	// what the checks below catch). The minute is a guard against a hang:
	// on a loaded machine the records come late, never fewer.
	read := func(hdr map[string]string, q string, want, max int) []string {
		req, _ := http.NewRequest("GET", e.srv.URL+"/api/loops/api/records/stream"+q, nil)
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var ids []string
		got := make(chan string)
		done := make(chan struct{})
		go func() {
			defer close(done)
			sc := bufio.NewScanner(res.Body)
			for sc.Scan() {
				if id, ok := strings.CutPrefix(sc.Text(), "id: "); ok {
					got <- id
				}
			}
		}()
		guard := time.After(time.Minute)
		var quiet <-chan time.Time
	reading:
		for len(ids) < max {
			select {
			case id := <-got:
				if ids = append(ids, id); len(ids) >= want {
					quiet = time.After(time.Second)
				}
			case <-done:
				break reading
			case <-quiet:
				break reading
			case <-guard:
				break reading
			}
		}
		res.Body.Close()
		for {
			select {
			case <-got:
				continue
			case <-done:
			}
			break
		}
		return ids
	}
	evs, _ := ops.ReadAll(dir)
	all := read(nil, "?n=1000", len(evs), len(evs))
	if len(all) != len(evs) {
		t.Fatalf("the backlog has %d records, the loop %d", len(all), len(evs))
	}
	last3 := read(nil, "?n=3", 3, 3)
	if strings.Join(last3, ",") != strings.Join(all[len(all)-3:], ",") {
		t.Errorf("n=3 sent %v, want %v", last3, all[len(all)-3:])
	}
	after := read(map[string]string{"Last-Event-ID": all[len(all)-2]}, "", 1, 5)
	if len(after) != 1 || after[0] != all[len(all)-1] {
		t.Errorf("after Last-Event-ID %s: %v", all[len(all)-2], after)
	}
	// The loop page renders its records and streams from after them: a
	// record written between the two is not lost.
	page := e.get("/loops/api", "")
	m := regexp.MustCompile(`records/stream\?tools=0&amp;after=(\d+)"`).FindStringSubmatch(page.body)
	if m == nil {
		t.Fatal("the loop page names no stream position")
	}
	st, _ := loop.LoadState(dir)
	ops.AppendRecord(st.Records, record.Event{Event: record.Warning, Message: "written after the page"})
	gap := read(nil, "?tools=0&after="+m[1], 1, 5)
	if len(gap) != 1 {
		t.Errorf("streaming after the page's %s records sent %v, want the one written since", m[1], gap)
	}
}

func TestTokenFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "serve", "tokens.json")
	tk, admin, err := serve.OpenTokens(path)
	if err != nil || !strings.HasPrefix(admin, "lpt_") {
		t.Fatalf("first open: %q %v", admin, err)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("token file mode %v %v", fi.Mode().Perm(), err)
	}
	if di, _ := os.Stat(filepath.Dir(path)); di.Mode().Perm() != 0o700 {
		t.Errorf("token folder mode %v", di.Mode().Perm())
	}
	data, _ := os.ReadFile(path)
	// lpt_ID_SECRET: the secret (base64url) may itself hold "_", so it is
	// everything after the id, never only its last piece (a piece of a
	// character or two would be found in the hashes by chance).
	secret := strings.SplitN(admin, "_", 3)[2]
	if strings.Contains(string(data), secret) {
		t.Error("the token file holds the token itself, not its hash")
	}
	// Shown once: a second start prints nothing and the token still works.
	tk2, again, err := serve.OpenTokens(path)
	if err != nil || again != "" {
		t.Fatalf("second open: %q %v", again, err)
	}
	if _, scope, ok := tk2.Check(admin); !ok || scope != serve.ScopeAdmin {
		t.Fatal("the admin token does not check")
	}
	read, _ := tk.AddRead()
	if _, scope, ok := tk2.Check(read); !ok || scope != serve.ScopeRead {
		t.Errorf("a read token made by another process: ok %v scope %q", ok, scope)
	}
	// A running server sees a rotation at once: the old tokens are revoked.
	time.Sleep(10 * time.Millisecond)
	fresh, err := tk.Rotate()
	if err != nil {
		t.Fatal(err)
	}
	for _, old := range []string{admin, read} {
		if _, _, ok := tk2.Check(old); ok {
			t.Errorf("a rotated token still checks: %s", old[:12])
		}
	}
	if _, _, ok := tk2.Check(fresh); !ok {
		t.Error("the new token does not check in the running server")
	}
	// Forged and malformed tokens.
	id := fresh[4:12]
	for _, bad := range []string{"", "lpt_", "lpt_" + id, "lpt_" + id + "_", "lpt_" + id + "_x", strings.Replace(fresh, id, "00000000", 1), fresh + "x", "Bearer " + fresh} {
		if _, _, ok := tk2.Check(bad); ok {
			t.Errorf("%q checks", bad)
		}
	}
	// A token file others can read is refused: its tokens are as good as leaked.
	os.Chmod(path, 0o644)
	if _, _, err := serve.OpenTokens(path); err == nil || !strings.Contains(err.Error(), "rotate-token") {
		t.Errorf("a world-readable token file: %v", err)
	}
	if _, _, ok := tk2.Check(fresh); ok {
		t.Error("a world-readable token file still authenticates")
	}
}

func TestServeCommand(t *testing.T) {
	t.Setenv("LOOPRINTER_STATE_DIR", filepath.Join(t.TempDir(), "state"))
	// --rotate-token prints a new token on stdout and nothing else there.
	out, err := exec.Command("looprinter", "serve", "--rotate-token").Output()
	if err != nil || !regexp.MustCompile(`^lpt_[0-9a-f]{8}_\S+\n$`).Match(out) {
		t.Fatalf("serve --rotate-token: %q %v", out, err)
	}
	path := serve.DefaultTokenPath()
	if !strings.HasPrefix(path, os.Getenv("LOOPRINTER_STATE_DIR")) {
		t.Fatalf("token file %s is outside the state folder", path)
	}
	tk, created, err := serve.OpenTokens(path)
	if err != nil || created != "" {
		t.Fatalf("after rotate: %q %v", created, err)
	}
	if _, _, ok := tk.Check(strings.TrimSpace(string(out))); !ok {
		t.Error("the printed token does not check")
	}
	ro, err := exec.Command("looprinter", "serve", "--read-token").Output()
	if _, scope, ok := tk.Check(strings.TrimSpace(string(ro))); err != nil || !ok || scope != serve.ScopeRead {
		t.Errorf("serve --read-token: %q %v", ro, err)
	}
	// Beyond loopback without TLS: a warning, before it listens. The
	// address (TEST-NET-1) is not this machine's, so nothing listens.
	cmd := exec.Command("looprinter", "serve", "--addr", "192.0.2.1:0")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err = cmd.Run()
	if !strings.Contains(stderr.String(), "WARNING: serving on 192.0.2.1:0 without TLS") {
		t.Errorf("no warning: %q", stderr.String())
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Errorf("serve on an address it cannot bind: %v", err)
	}
	// --tls-cert without --tls-key is a usage error.
	if err := exec.Command("looprinter", "serve", "--tls-cert", "x.pem").Run(); !errors.As(err, &ee) || ee.ExitCode() != 64 {
		t.Errorf("--tls-cert alone: %v", err)
	}
}

// TestReviewFindingsAndReport: the review shape's findings show as a table,
// round by round, with its report, from the records (written here as the
// engine writes them).
func TestReviewFindingsAndReport(t *testing.T) {
	t.Setenv("LOOPRINTER_STATE_DIR", filepath.Join(t.TempDir(), "state"))
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "loop.yaml"), []byte("version: 1\nname: rev\nshape: review\nobjective: x\n"), 0o644)
	w, err := loopdir.Dir(dir).CreateRecords("r1", "claude", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	round := func(n int, fs ...review.Finding) json.RawMessage {
		b, _ := json.Marshal(map[string]any{"round": n, "findings": fs})
		return b
	}
	pass, fail := true, false
	for _, ev := range []record.Event{
		{Event: record.LoopStart, Loop: "rev", Shape: "review"},
		{Event: record.Review, Kind: "findings", Data: round(1,
			review.Finding{ID: "F-1", Severity: "critical", File: "db.go", Line: 12, Title: "SQL built from <b>input</b>", Kind: "injection"},
			review.Finding{ID: "F-2", Severity: "minor", File: "a.go", Title: "typo", Kind: "style"})},
		{Event: record.Verify, Gate: "review", Pass: &fail, Checks: []record.Check{{Command: "go test ./...", ExitCode: 1}}},
		{Event: record.Review, Kind: "findings", Data: round(2)},
		{Event: record.Verify, Gate: "review-final", Pass: &pass},
		{Event: record.LoopStop, Reason: "done", ExitCode: record.Int(0), Summary: "no open finding at or above major", Evidence: []string{"review-final: go test ./... exit 0"}},
	} {
		w.Write(ev)
	}
	w.Close()
	os.WriteFile(filepath.Join(dir, loopdir.RecordsDir, loopdir.ReviewReportFile), []byte("# Review report\nall fixed\n"), 0o644)
	if err := ops.Save(ops.Entry{Name: "rev", LoopFile: filepath.Join(dir, "loop.yaml"), Dir: dir, RunDir: dir, RunFile: filepath.Join(dir, "loop.yaml")}); err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, dir, "127.0.0.1:7878")
	page := e.get("/loops/rev", "")
	for _, want := range []string{"Review findings", "Round 1", "Round 2", "F-1", "critical", "db.go:12", "SQL built from &lt;b&gt;input&lt;/b&gt;", "No finding.", "Review report", "all fixed", "Final report: DONE"} {
		if !strings.Contains(page.body, want) {
			t.Errorf("the review loop's page lacks %q", want)
		}
	}
	if strings.Contains(page.body, "<b>input</b>") {
		t.Error("a finding's title was not escaped")
	}
	rep := e.get("/api/loops/rev/report", "")
	var r struct {
		Title    string `json:"title"`
		Review   string `json:"review_report"`
		Findings []struct {
			Round    int              `json:"round"`
			Findings []review.Finding `json:"findings"`
		} `json:"findings"`
	}
	if err := json.Unmarshal([]byte(rep.body), &r); err != nil {
		t.Fatalf("%v: %s", err, rep.body)
	}
	if r.Title != "DONE" || len(r.Findings) != 2 || len(r.Findings[0].Findings) != 2 || r.Findings[0].Findings[0].ID != "F-1" || !strings.Contains(r.Review, "all fixed") {
		t.Errorf("report: %+v", r)
	}
}

// TestLoopsStream: the list of loops as Server-Sent Events: at once, then
// again when a loop changes (here: it is paused).
func TestLoopsStream(t *testing.T) {
	dir := fixture(t)
	e := newEnv(t, dir, "127.0.0.1:7878")
	res, err := http.Get(e.srv.URL + "/api/loops/stream")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	events := make(chan string, 4)
	go func() {
		sc := bufio.NewScanner(res.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		ev := ""
		for sc.Scan() {
			l := sc.Text()
			switch {
			case strings.HasPrefix(l, "event: "):
				ev = strings.TrimPrefix(l, "event: ")
			case strings.HasPrefix(l, "data: ") && ev == "loops":
				events <- strings.TrimPrefix(l, "data: ")
			}
		}
	}()
	next := func() []ops.Status {
		select {
		case d := <-events:
			var sts []ops.Status
			if err := json.Unmarshal([]byte(d), &sts); err != nil {
				t.Fatalf("%v: %s", err, d)
			}
			return sts
		case <-time.After(time.Minute): // a guard against a hang only
			t.Fatal("no loops event within a minute")
		}
		return nil
	}
	first := next()
	if len(first) != 1 || first[0].Name != "api" || first[0].PausePending {
		t.Fatalf("first event: %+v", first)
	}
	e.post("/api/loops/api/pause", e.admin, nil, nil)
	if again := next(); len(again) != 1 || !again[0].PausePending {
		t.Errorf("after pause: %+v", again)
	}
}

// TestOddLoops: a loop whose folder is gone, and one that never ran, still
// have their pages and answers; nothing panics.
func TestOddLoops(t *testing.T) {
	t.Setenv("LOOPRINTER_STATE_DIR", filepath.Join(t.TempDir(), "state"))
	gone := filepath.Join(t.TempDir(), "gone")
	fresh := t.TempDir()
	os.WriteFile(filepath.Join(fresh, "loop.yaml"), []byte("version: 1\nname: fresh\nobjective: x\nverify: [\"false\"]\n"), 0o644)
	ops.Save(ops.Entry{Name: "gone", LoopFile: filepath.Join(gone, "loop.yaml"), Dir: gone, RunDir: gone})
	ops.Save(ops.Entry{Name: "fresh", LoopFile: filepath.Join(fresh, "loop.yaml"), Dir: fresh, RunDir: fresh})
	e := newEnv(t, fresh, "127.0.0.1:7878")
	for _, name := range []string{"gone", "fresh"} {
		for _, p := range []string{"/loops/" + name, "/api/loops/" + name, "/api/loops/" + name + "/records", "/api/loops/" + name + "/runs", "/api/loops/" + name + "/report", "/api/loops/" + name + "/cost"} {
			r := e.get(p, "")
			if r.status != 200 && !(strings.HasSuffix(p, "/cost") && r.status == 404 && strings.Contains(r.body, "has not run yet")) {
				t.Errorf("GET %s: %d %s", p, r.status, r.body)
			}
		}
		if r := e.get("/api/loops/"+name+"/runs/1", ""); r.status != 404 {
			t.Errorf("run 1 of %s: %d", name, r.status)
		}
	}
	if r := e.get("/", ""); !strings.Contains(r.body, "gone") || !strings.Contains(r.body, "not started") {
		t.Errorf("the list: %s", r.body)
	}
}

// TestNoSecretServed: credential-shaped values and the value of a
// secret-named variable, printed by an agent and by a check, or sitting in
// a record written before redaction existed, never appear in any answer:
// pages, API, files, the record stream.
func TestNoSecretServed(t *testing.T) {
	anthropic := "sk-ant-api03-" + strings.Repeat("Ab3dE", 9)
	github := "ghp_" + strings.Repeat("x9Y8z", 8)
	envSecret := "s3cr3t-value-of-my-deploy-token"
	t.Setenv("DEPLOY_TOKEN", envSecret)
	t.Setenv("LOOPRINTER_STATE_DIR", filepath.Join(t.TempDir(), "state"))
	dir := t.TempDir()
	loopYAML := `sandbox: off
version: 1
name: leaky
objective: "one file"
agent: {backend: command, command: looprinter fake-agent --script agent.txt}
redact:
  patterns: ['ticket-[0-9]{6}']
verify:
  - 'echo "check sees ` + github + ` and $DEPLOY_TOKEN"; test -s out/one.txt'
`
	agentTxt := `== plan
say plan sees ` + anthropic + `
plan T-001:out/one.txt
== build
say build sees ` + anthropic + ` ` + github + ` ` + envSecret + `
auto
`
	os.WriteFile(filepath.Join(dir, "loop.yaml"), []byte(loopYAML), 0o644)
	os.WriteFile(filepath.Join(dir, "agent.txt"), []byte(agentTxt), 0o644)
	c := exec.Command("looprinter", "run")
	c.Dir = dir
	if out, err := c.CombinedOutput(); err != nil {
		t.Fatalf("looprinter run: %v\n%s", err, out)
	}
	// A record file from before redaction existed: written as it was.
	w, err := loopdir.Dir(dir).CreateRecords("old", "command", time.Now().Add(-time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	w.SetRedactor(nil)
	w.Write(record.Event{Event: record.Warning, Message: "old record with " + anthropic + " and " + github + " and " + envSecret + " and ticket-424242"})
	w.Close()
	os.WriteFile(filepath.Join(dir, loopdir.RecordsDir, "checks", "old-check.log"), []byte("old check output "+github+"\n"), 0o600)

	tokens, _, err := serve.OpenTokens(filepath.Join(t.TempDir(), "tokens.json"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := serve.New(serve.Config{Addr: "127.0.0.1:7878", Tokens: tokens, Poll: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()

	paths := []string{"/", "/loops/leaky", "/loops/leaky?part=live", "/api/loops", "/api/loops/leaky", "/api/loops/leaky/records",
		"/api/loops/leaky/records?format=text", "/api/loops/leaky/cost", "/api/loops/leaky/runs", "/api/loops/leaky/report"}
	for n := 1; n <= 2; n++ {
		paths = append(paths, fmt.Sprintf("/loops/leaky/runs/%d", n), fmt.Sprintf("/api/loops/leaky/runs/%d", n))
	}
	for _, sub := range []string{"transcripts", "checks"} {
		files, _ := os.ReadDir(filepath.Join(dir, loopdir.RecordsDir, sub))
		for _, f := range files {
			paths = append(paths, "/api/loops/leaky/files/"+sub+"/"+f.Name())
		}
	}
	get := func(p string) string {
		res, err := http.Get(srv.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		if res.StatusCode != 200 {
			t.Errorf("GET %s: %d %s", p, res.StatusCode, b)
		}
		return string(b)
	}
	redacted := 0
	for _, p := range paths {
		body := get(p)
		// ticket-424242 matches the loop's own redact.patterns.
		for _, secret := range []string{anthropic, github, envSecret, "sk-ant-api03", "ghp_x9Y8z", "ticket-424242"} {
			if strings.Contains(body, secret) {
				t.Errorf("GET %s serves %q", p, secret)
			}
		}
		redacted += strings.Count(body, "[REDACTED:")
	}
	if redacted == 0 {
		t.Error("nothing was redacted: the test shows nothing")
	}
	// The record stream, its backlog.
	res, err := http.Get(srv.URL + "/api/loops/leaky/records/stream?n=1000")
	if err != nil {
		t.Fatal(err)
	}
	// Read until the whole backlog (every record of the loop) has come.
	all, _ := ops.ReadAll(dir)
	var (
		stream bytes.Buffer
		mu     sync.Mutex
		got    int
	)
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(res.Body)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			mu.Lock()
			stream.WriteString(sc.Text() + "\n")
			if sc.Text() == "event: record" {
				got++
			}
			mu.Unlock()
		}
	}()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		mu.Lock()
		n := got
		mu.Unlock()
		if n >= len(all) {
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("the stream sent %d of %d records in 30s", n, len(all))
			break
		}
	}
	res.Body.Close()
	<-done
	if strings.Contains(stream.String(), anthropic) || strings.Contains(stream.String(), github) || strings.Contains(stream.String(), envSecret) {
		t.Error("the record stream serves a secret")
	}
	if !strings.Contains(stream.String(), "old record with [REDACTED:") {
		t.Errorf("the old record is not in the stream, redacted:\n%s", stream.String())
	}
	// The secrets are in the files (the old ones): serve is what keeps them out.
	raw, _ := os.ReadFile(filepath.Join(dir, loopdir.RecordsDir, "checks", "old-check.log"))
	if !strings.Contains(string(raw), github) {
		t.Fatal("the planted check output lacks the secret")
	}
}

// A ralph loop that ended has no plan and no cycle gate: the list says
// "—" for them, never "tasks 0 / 0" or a gate "pending" that will not come.
func TestFinishedRalphRow(t *testing.T) {
	t.Setenv("LOOPRINTER_STATE_DIR", filepath.Join(t.TempDir(), "state"))
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "loop.yaml"), []byte("version: 1\nname: ralphy\nshape: ralph\nsandbox: \"off\"\nobjective: x\n"+
		"agent: {backend: command, command: looprinter fake-agent --script agent.txt}\nverify: [\"test -s out.txt\"]\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "agent.txt"), []byte("== ralph\nwrite out.txt done\nprogress wrote it\npromise DONE\n"), 0o644)
	c := exec.Command("looprinter", "run")
	c.Dir = dir
	if out, err := c.CombinedOutput(); err != nil {
		t.Fatalf("looprinter run: %v\n%s", err, out)
	}
	e := newEnv(t, dir, "127.0.0.1:7878")
	body := e.get("/", "").body
	i := strings.Index(body, ">ralphy<")
	if i < 0 {
		t.Fatalf("no ralphy row: %s", body)
	}
	row := body[i:]
	row = row[:strings.Index(row, "</tr>")]
	if strings.Contains(row, "pending") || strings.Contains(row, "0 / 0") {
		t.Errorf("the finished ralph loop's row: %s", row)
	}
	if !strings.Contains(row, `<td data-label="tasks">—</td>`) {
		t.Errorf("no blank tasks cell: %s", row)
	}
}
