//go:build linux

package sandbox

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// serveBox runs line in b's server (Run) and returns its output and exit
// status.
func serveBox(t *testing.T, b *CheckBox, dir, line string, env []string) (string, int) {
	t.Helper()
	if !b.Serves(env) {
		t.Fatal("the box does not run its checks in a server")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var out bytes.Buffer
	code, err := b.Run(ctx, dir, line, env, &out)
	if err != nil {
		t.Fatalf("check did not run: %v (%s)", err, out.String())
	}
	return out.String(), code
}

// A gate's checks in one box: the exit status and output come back, and
// nothing the first check writes (the tree, HOME, /tmp, /var/tmp, /run,
// /dev/shm, /, /dev) or leaves running is seen by the second.
func TestBoxServerNothingCarried(t *testing.T) {
	f := newBoxFixture(t)
	b := f.box(t, Bwrap, CheckBoxOptions{})
	out, code := serveBox(t, b, f.tree, "echo out; echo err >&2; exit 3", f.env)
	if code != 3 || !strings.Contains(out, "out") || !strings.Contains(out, "err") {
		t.Fatalf("exit %d, output %q", code, out)
	}
	write := `set -e
echo changed > deliverable.txt; echo new > mark
echo x > "$HOME/mark"; echo x > "$HOME/.config/go/env"
for d in /tmp /var/tmp /dev/shm; do echo x > $d/mark; done
(echo x > /run/mark) 2>/dev/null || true
(echo x > /mark) 2>/dev/null || true
(echo x > /dev/mark) 2>/dev/null || true
setsid sh -c 'sleep 300' </dev/null >/dev/null 2>&1 &
echo wrote`
	if out, code := serveBox(t, b, f.tree, write, f.env); code != 0 {
		t.Fatalf("the first check failed (%d): %s", code, out)
	}
	read := `for p in deliverable.txt mark "$HOME/mark" /tmp/mark /var/tmp/mark /dev/shm/mark /run/mark /mark /dev/mark; do
  [ -e "$p" ] && echo "seen: $p $(cat "$p")"
done
for p in /proc/[0-9]*; do [ "$(cat $p/cmdline 2>/dev/null | tr '\0' ' ')" = "sleep 300 " ] && echo "seen: a sleep left running"; done
cat "$HOME/.config/go/env"
true`
	out, code = serveBox(t, b, f.tree, read, f.env)
	if code != 0 || strings.Contains(out, "seen: deliverable.txt changed") || strings.Contains(out, "seen: mark") || strings.Contains(out, "seen: /") || strings.Contains(out, "running") || !strings.Contains(out, "GOFLAGS=-count=1") {
		t.Fatalf("the second check saw the first's writes (exit %d):\n%s", code, out)
	}
	if data, _ := os.ReadFile(filepath.Join(f.tree, "deliverable.txt")); string(data) != "original\n" {
		t.Fatalf("the tree was written: %q", data)
	}
	if _, err := os.Stat(filepath.Join(f.home, "mark")); err == nil {
		t.Fatal("HOME was written")
	}
}

// A check in the server has no capability and cannot read the engine's
// private folder; ctx ends it, and every process it started.
func TestBoxServerConfined(t *testing.T) {
	f := newBoxFixture(t)
	b := f.box(t, Bwrap, CheckBoxOptions{})
	out, _ := serveBox(t, b, f.tree, "grep -E 'Cap(Eff|Prm|Bnd)' /proc/self/status; cat "+f.secret+" 2>&1; echo done", f.env)
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "Cap") && !strings.HasSuffix(line, "0000000000000000") {
			t.Errorf("a capability is left: %s", line)
		}
	}
	if strings.Contains(out, "TestSecret") || !strings.Contains(out, "done") {
		t.Fatalf("the engine's private folder was read, or the check did not run: %s", out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	began := time.Now()
	var buf bytes.Buffer
	code, err := b.Run(ctx, f.tree, "sleep 60 & sleep 60", f.env, &buf)
	if err != nil || code == 0 || time.Since(began) > 10*time.Second {
		t.Fatalf("a check past its context: exit %d, %v after %v", code, err, time.Since(began))
	}
	if out, code := serveBox(t, b, f.tree, "echo again", f.env); code != 0 || !strings.Contains(out, "again") {
		t.Fatalf("the box does not run a check after one was killed: %d %s", code, out)
	}
}

// The loop's cache layer lies under every check of the server's as under
// a check of its own: each starts warm, and what one writes there (the
// agent's code poisoning an entry) the next never sees.
func TestBoxServerCacheLayer(t *testing.T) {
	f := newBoxFixture(t)
	need(t, Bwrap)
	c := CheckCache{Dir: filepath.Join(f.priv, "engine", "cache")}
	warm := c
	warm.Warm = true
	b := f.box(t, Bwrap, CheckBoxOptions{Cache: &warm})
	if out, code := runBox(t, b, f.tree, cacheWarmLine, f.env); code != 0 {
		t.Fatalf("warm-up: exit %d: %s", code, out)
	}
	b.Close()
	if err := FinishCacheWarm(c, f.env, f.tree); err != nil {
		t.Fatal(err)
	}
	b = f.box(t, Bwrap, CheckBoxOptions{Cache: &c})
	for round := 0; round < 2; round++ {
		out, code := serveBox(t, b, f.tree, cacheReadLine, f.env)
		if code != 0 || !strings.Contains(out, "entry=warm") || strings.Contains(out, "poison=poison") || strings.Contains(out, "junk=junk") || !strings.Contains(out, "out=built\n") {
			t.Fatalf("round %d: a check should start with the warm-up's cache and nothing else (exit %d): %s", round, code, out)
		}
		serveBox(t, b, f.tree, cachePoisonLine, f.env)
	}
}

// A check cannot signal the box's server (to stop it, and so pass or
// hang the engine): /proc shows it, but it lies outside the check's PID
// namespace. The box's later checks run as before.
func TestBoxServerOutOfReach(t *testing.T) {
	f := newBoxFixture(t)
	b := f.box(t, Bwrap, CheckBoxOptions{})
	line := `for p in /proc/[0-9]*; do n=${p#/proc/}; grep -q '^NSpid:.*[[:space:]]1$' $p/status 2>/dev/null && continue; kill -STOP $n 2>/dev/null && echo "stopped $n"; done; echo tried`
	out, code := serveBox(t, b, f.tree, line, f.env)
	if code != 0 || strings.Contains(out, "stopped") || !strings.Contains(out, "tried") {
		t.Fatalf("a check signalled a process outside its namespace (exit %d): %s", code, out)
	}
	if out, code := serveBox(t, b, f.tree, "echo again", f.env); code != 0 || !strings.Contains(out, "again") {
		t.Fatalf("the box's next check did not run: %d %s", code, out)
	}
}
