//go:build !windows

package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A login kept in the CLI's folder under HOME (no key in the loop file's
// environment: Claude Code's apiKeyHelper in ~/.claude/settings.json, the
// way a user logs it in) still works on the third run of a loop, under the
// default sandbox (HOME a copy-on-write layer kept for the loop) and under
// Landlock (a private HOME seeded from the real one): every model request
// of the plan run and the two build runs carries the key the helper gives.
func TestLoopLoginFromHomeOnEveryRun(t *testing.T) {
	claude := kits[0]
	if claude.backend != "claude" {
		t.Fatal("kits[0] is not claude")
	}
	claude.bin = findCLI(t, "claude")
	for _, sandbox := range []string{"auto", "landlock"} {
		t.Run(sandbox, func(t *testing.T) {
			looprinter(t)
			srv := startAPI(t)
			k := claude
			const key = "sk-login-kept-in-home"
			k.env = func(t *testing.T, home, url string) map[string]string {
				env := claude.env(t, home, url)
				delete(env, "ANTHROPIC_API_KEY")
				dir := filepath.Join(home, ".claude")
				os.MkdirAll(dir, 0o755)
				helper := filepath.Join(dir, "key.sh")
				if err := os.WriteFile(helper, []byte("#!/bin/sh\necho "+key+"\n"), 0o755); err != nil {
					t.Fatal(err)
				}
				settings := `{"apiKeyHelper": "` + helper + `"}`
				if err := os.WriteFile(filepath.Join(dir, "settings.json"), []byte(settings), 0o644); err != nil {
					t.Fatal(err)
				}
				return env
			}
			l := newLoop(t, k, srv.URL, loopOpts{})
			if sandbox != "auto" {
				f := filepath.Join(l.dir, "loop.yaml")
				b, _ := os.ReadFile(f)
				os.WriteFile(f, append(b, []byte("sandbox: "+sandbox+"\n")...), 0o644)
			}
			srv.Add(planReplies(k, l.dir)...)
			srv.Add(buildReplies(k, l.dir, "T-001", "one")...)
			srv.Add(buildReplies(k, l.dir, "T-002", "two")...)
			code, _, _, _ := l.run(t, 12*time.Minute)
			if code != 0 {
				t.Fatalf("exit %d, want 0 (DONE)", code)
			}
			l.checkDone(t, k, "ok")
			reqs := srv.ModelRequests()
			if len(reqs) < 7 {
				t.Fatalf("%d model requests, want the three runs' 7", len(reqs))
			}
			for i, r := range reqs {
				got := strings.Join(r.Header["X-Api-Key"], ",") + " " + strings.Join(r.Header["Authorization"], ",")
				if !strings.Contains(got, key) {
					t.Errorf("model request %d (%s) does not carry the key kept in HOME: %q", i, r.Path, got)
				}
			}
			assertNoLeftovers(t, l.mark)
		})
	}
}
