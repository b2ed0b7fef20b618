package sandbox

import (
	"os/exec"
	"strings"
	"testing"
)

// Under the engine's preload, node:test's exports are frozen on their
// first require: code that replaces t.it after the test file loaded it
// changes nothing, and node:test's own mock still works.
func TestCheckNodeOptionsFreezesNodeTest(t *testing.T) {
	if _, err := exec.LookPath("node"); err != nil || !nodeHasImport() {
		t.Skip("no node that takes --import here")
	}
	script := `const t = require('node:test'); const real = t.it;
require(['node', 'test'].join(':')).it = () => 'PATCHED';
console.log(t.it === real ? 'held' : 'PATCHED');
const f = t.mock.fn(); f(); console.log(f.mock.calls.length === 1 ? 'mock ok' : 'mock broken');`
	run := func(env ...string) string {
		cmd := exec.Command("node", "-e", script)
		cmd.Env = append([]string{"PATH=/usr/local/bin:/usr/bin:/bin"}, env...)
		out, _ := cmd.CombinedOutput()
		return string(out)
	}
	if out := run("NODE_OPTIONS=" + CheckNodeOptions("")); !strings.Contains(out, "held") || !strings.Contains(out, "mock ok") {
		t.Fatalf("with the preload: %s", out)
	}
	if out := run(); !strings.Contains(out, "PATCHED") {
		t.Fatalf("without the preload the patch should work (the test would prove nothing): %s", out)
	}
}
