package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
)

// otherPyenvVersion is an installed pyenv version (3.10+) that python3 on
// PATH does not run now, when python3 is pyenv's shim; "" otherwise.
var otherPyenvVersion = sync.OnceValue(func() string {
	p, err := exec.LookPath("python3")
	if err != nil {
		return ""
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil || filepath.Base(filepath.Dir(real)) != "shims" {
		return ""
	}
	root := filepath.Dir(filepath.Dir(real))
	out, err := exec.Command("python3", "-c", "import sys; print(sys.base_prefix)").Output()
	if err != nil {
		return ""
	}
	current := filepath.Base(strings.TrimSpace(string(out)))
	entries, _ := os.ReadDir(filepath.Join(root, "versions"))
	versioned := regexp.MustCompile(`^3\.(1[0-9])\.[0-9]+$`)
	for _, e := range entries {
		m := versioned.FindStringSubmatch(e.Name())
		if m == nil || e.Name() == current {
			continue
		}
		if _, err := os.Stat(filepath.Join(root, "versions", e.Name(), "lib", "python3."+m[1], "difflib.py")); err == nil {
			return e.Name()
		}
	}
	return ""
})
