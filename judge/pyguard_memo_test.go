package judge

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A loop's boxes alternate between folders (the loop's, the clean room's
// copy, each mutant worker's): each interpreter is asked once per PATH and
// folder, not again each time the folder changes back.
func TestPyStdlibDirsAskedOncePerFolder(t *testing.T) {
	bin, std := t.TempDir(), t.TempDir()
	count := filepath.Join(t.TempDir(), "asked")
	script := "#!/bin/sh\necho x >> " + count + "\necho 3.12\necho " + std + "\n"
	if err := os.WriteFile(filepath.Join(bin, "python3"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	a, b := t.TempDir(), t.TempDir()
	for _, dir := range []string{a, b, a, b, a} {
		got := pyStdlibDirs(bin, dir)
		if len(got) != 1 || got[0] != filepath.Clean(std) {
			t.Fatalf("in %s: %v, want [%s]", dir, got, std)
		}
	}
	data, _ := os.ReadFile(count)
	if n := strings.Count(string(data), "x"); n != 2 {
		t.Errorf("the interpreter was asked %d times for 2 folders; want 2", n)
	}
}
