//go:build linux

package sandbox

import (
	"bytes"
	"context"
	"strconv"
	"strings"
	"testing"
	"time"
)

// burnDaemon is a check that double-forks a CPU-burning daemon (setsid,
// its parent exits at once, so the check never waits for it), waits for it
// to finish with sleep (no CPU of its own to speak of) and prints the
// daemon's own CPU, in clock ticks, from its /proc/self/stat (read by the
// shell itself: the server's view's /proc is not the check's PID namespace's).
const burnDaemon = `out="${TMPDIR:-/tmp}/burnt"
( setsid sh -c 'i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done; read -r st < /proc/self/stat; set -- ${st##*") "}; echo "$((${12} + ${13}))" > "$0.tmp"; mv "$0.tmp" "$0"' "$out" </dev/null >/dev/null 2>&1 & )
n=0
while [ ! -s "$out" ] && [ $n -lt 1200 ]; do sleep 0.05; n=$((n+1)); done
echo "burnt $(cat "$out")"`

// burnt is the daemon's CPU that burnDaemon's output reports.
func burnt(t *testing.T, out string) time.Duration {
	t.Helper()
	for _, line := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(line, "burnt "); ok {
			ticks, err := strconv.Atoi(strings.TrimSpace(v))
			if err == nil && ticks > 0 {
				return time.Duration(ticks) * 10 * time.Millisecond // USER_HZ is 100 on Linux
			}
		}
	}
	t.Fatalf("the daemon did not report its CPU:\n%s", out)
	return 0
}

// needCPUCgroup skips where the machine gives no cgroup of the engine's own
// (no cgroup v2, or neither root nor a delegated cgroup): there a check's
// CPU can only be its process tree's.
func needCPUCgroup(t *testing.T) {
	t.Helper()
	if err := CgroupProbe(); err != nil {
		t.Skipf("this machine gives this process no cgroup of its own, so no check's CPU can be read from one (it is the process tree's): %v", err)
	}
}

// The CPU of a daemon a check double-forked (setsid, its parent gone: not
// a process the engine or the check ever waits for) is counted in the
// check's figure, read from its cgroup, under each confined kind; the
// process tree's figure (what getrusage of the engine's children sees)
// misses it under Landlock, where the daemon leaves the check's tree.
func TestCheckBoxCPUOfDaemon(t *testing.T) {
	needCPUCgroup(t)
	for _, kind := range confinedKinds {
		t.Run(kind, func(t *testing.T) {
			f := newBoxFixture(t)
			b := f.box(t, kind, CheckBoxOptions{})
			ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
			defer cancel()
			cmd, cleanup, err := b.Command(ctx, f.tree, burnDaemon, f.env)
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			if err := cmd.Run(); err != nil {
				cleanup()
				t.Fatalf("the check failed: %v\n%s", err, out.String())
			}
			cleanup()
			daemon := burnt(t, out.String())
			u, tree := b.Usage(cmd), TreeUsage(cmd)
			t.Logf("%s: the daemon burnt %s; the check's cgroup counted %s (%s), its process tree %s", kind, daemon, u.CPU, u.From, tree.CPU)
			if u.From != UsageCgroup {
				t.Fatalf("the check's CPU came from %q, not its cgroup", u.From)
			}
			// The tick counts round down, each by less than 10ms.
			if u.CPU+20*time.Millisecond < daemon {
				t.Fatalf("the check's CPU %s misses the daemon's %s", u.CPU, daemon)
			}
			if kind == Landlock && tree.CPU >= daemon {
				t.Fatalf("the process tree counted %s, the daemon burnt %s: the daemon did not leave the tree, the test proves nothing", tree.CPU, daemon)
			}
		})
	}
}

// In a gate's box (one server for its checks) the daemon a check
// double-forked is counted in that check's figure (the box's cgroup across
// the check), and not in the next check's.
func TestBoxServerCPUOfDaemon(t *testing.T) {
	needCPUCgroup(t)
	f := newBoxFixture(t)
	b := f.box(t, Bwrap, CheckBoxOptions{})
	if !b.Serves(f.env) {
		t.Skip("this box runs each check as a process of its own (LOOPRINTER_CHECK_BOX_SERVER=off)")
	}
	run := func(line string) (string, Usage) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		var out bytes.Buffer
		code, u, err := b.RunUsage(ctx, f.tree, line, f.env, &out)
		if err != nil || code != 0 {
			t.Fatalf("the check failed (exit %d): %v\n%s", code, err, out.String())
		}
		return out.String(), u
	}
	run("true") // the box's start is the first check's
	out, u := run(burnDaemon)
	daemon := burnt(t, out)
	_, next := run("true")
	t.Logf("the daemon burnt %s; the box counted %s for its check (%s), %s for the next", daemon, u.CPU, u.From, next.CPU)
	if u.From != UsageBox || u.CPU+20*time.Millisecond < daemon {
		t.Fatalf("the check's CPU %s (%q) misses the daemon's %s", u.CPU, u.From, daemon)
	}
	if next.From != UsageBox || next.CPU >= daemon {
		t.Fatalf("the next check was charged %s (%q), the daemon burnt %s in the check before", next.CPU, next.From, daemon)
	}
}

// Where a check has no cgroup (sandbox: off; the same holds on a machine
// without a delegated cgroup v2), its figure is its process tree's and
// says so: the CPU a foreground loop burnt, the daemon's not.
func TestCheckBoxCPUWithoutCgroup(t *testing.T) {
	f := newBoxFixture(t)
	b := f.box(t, Off, CheckBoxOptions{})
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	line := `i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done; read -r st < /proc/self/stat; set -- ${st##*") "}; echo "burnt $((${12} + ${13}))"`
	cmd, cleanup, err := b.Command(ctx, f.tree, line, f.env)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	cleanup()
	if err != nil {
		t.Fatalf("the check failed: %v\n%s", err, out.String())
	}
	own := burnt(t, out.String())
	u := b.Usage(cmd)
	t.Logf("the check burnt %s; its figure %s (%s)", own, u.CPU, u.From)
	if u.From != UsageTree || u.CPU+20*time.Millisecond < own {
		t.Fatalf("the check's figure %s (%q), it burnt %s", u.CPU, u.From, own)
	}
}
