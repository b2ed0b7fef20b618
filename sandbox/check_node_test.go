package sandbox

import (
	"os/exec"
	"strings"
	"testing"
)

// Under the engine's preload, code that replaces an assertion of
// node:assert (through any name of the module) changes nothing: the
// assertion still fails.
func TestCheckNodeOptionsFreezesAssert(t *testing.T) {
	if _, err := exec.LookPath("node"); err != nil || !nodeHasImport() {
		t.Skip("no node that takes --import here")
	}
	opts := CheckNodeOptions("--max-old-space-size=256")
	if !strings.HasPrefix(opts, "--max-old-space-size=256 ") {
		t.Fatalf("the caller's options are lost: %q", opts)
	}
	if CheckNodeOptions(opts) != opts {
		t.Fatal("the preload is added twice")
	}
	script := `const a = require('node:assert'); a.strictEqual = () => {}; require('assert/strict').equal = () => {};
try { require('assert').strictEqual(1, 2); console.log('PATCHED') } catch (e) { console.log('held') }
try { require('node:assert/strict').equal(1, 2); console.log('PATCHED') } catch (e) { console.log('held') }`
	cmd := exec.Command("node", "-e", script)
	cmd.Env = []string{"NODE_OPTIONS=" + opts, "PATH=/usr/local/bin:/usr/bin:/bin"}
	out, err := cmd.CombinedOutput()
	if err != nil || strings.Contains(string(out), "PATCHED") || strings.Count(string(out), "held") != 2 {
		t.Fatalf("%v: %s", err, out)
	}
	cmd = exec.Command("node", "-e", script)
	cmd.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin"}
	if out, _ := cmd.CombinedOutput(); !strings.Contains(string(out), "PATCHED") {
		t.Fatalf("without the preload the patch should work (the test would prove nothing): %s", out)
	}
}
