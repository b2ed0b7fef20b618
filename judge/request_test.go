package judge

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/looprinter/looprinter/sandbox"
	"github.com/looprinter/looprinter/spec"
)

// A request without a tree runs on the loop folder; an unconfined one in
// the folder itself, where what it writes stays (only setup: at the start).
func TestCheckRequestTreeDefaultsToTheLoopFolder(t *testing.T) {
	dir := t.TempDir()
	logs := t.TempDir()
	l := &spec.Loop{Dir: dir, CheckTimeout: spec.Duration(time.Minute), Sandbox: sandbox.Off}
	rs := Check(context.Background(), CheckRequest{Loop: l, Cmds: []string{"pwd > where", "exit 3"}, Env: os.Environ(), Unconfined: true,
		LogPath: func(i int) string { return filepath.Join(logs, string(rune('a'+i))) }})
	if len(rs) != 2 || !rs[0].Pass || rs[1].Pass || rs[1].ExitCode != 3 {
		t.Fatalf("results %+v", rs)
	}
	data, err := os.ReadFile(filepath.Join(dir, "where"))
	if err != nil || strings.TrimSpace(string(data)) != dir {
		t.Fatalf("ran in %q (%v), want %s", data, err, dir)
	}
	if Check(context.Background(), CheckRequest{Loop: l}) != nil {
		t.Fatal("no checks: no results")
	}
}

// Without a box that lays a view, a request with paths removed, files
// placed and a lower layer runs on a copy of the tree that shows them so,
// and the tree is left as it was.
func TestCheckRequestCopyShowsTheView(t *testing.T) {
	dir, logs, lower, from := t.TempDir(), t.TempDir(), t.TempDir(), filepath.Join(t.TempDir(), "put")
	for name, body := range map[string]string{"secret": "s", "kept": "k"} {
		os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644)
	}
	os.WriteFile(filepath.Join(lower, "layered"), []byte("l"), 0o644)
	os.WriteFile(from, []byte("p"), 0o644)
	l := &spec.Loop{Dir: dir, CheckTimeout: spec.Duration(time.Minute), Sandbox: sandbox.Off}
	r := CheckRequest{Loop: l, Remove: []string{"secret"}, Put: []sandbox.ViewFile{{From: from, To: "sub/placed", Mode: 0o644}}, Lower: lower, Env: os.Environ(),
		Cmds:    []string{`test ! -e secret && test "$(cat kept layered sub/placed)" = klp && test "$PWD" != ` + dir + ` && touch written`},
		LogPath: func(int) string { return filepath.Join(logs, "log") }}
	if rs := Check(context.Background(), r); len(rs) != 1 || !rs[0].Pass {
		data, _ := os.ReadFile(filepath.Join(logs, "log"))
		t.Fatalf("the copy is not the view: %+v %s", rs, data)
	}
	for _, gone := range []string{"written", "layered", "sub"} {
		if _, err := os.Stat(filepath.Join(dir, gone)); err == nil {
			t.Errorf("%s reached the tree", gone)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "secret")); err != nil {
		t.Error("the removed file left the tree")
	}
}
