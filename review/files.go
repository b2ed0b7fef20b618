package review

import (
	"fmt"
	"os"
	"strings"

	"github.com/looprinter/looprinter/guard"
)

func dirExists(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

func shortSHA(s string) string {
	if len(s) > 10 {
		return s[:10]
	}
	return s
}

// writeFileAtomic replaces a file so that readers see the old or the new
// contents, never a part (guard.WriteFileAtomic).
func writeFileAtomic(path string, data []byte) error { return guard.WriteFileAtomic(path, data) }

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

func short(v any) string {
	s := fmt.Sprint(v)
	if len(s) > 80 {
		s = s[:80] + "…"
	}
	return s
}

func oneLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndex(s, "\n"); i >= 0 {
		s = s[i+1:]
	}
	return truncate(s, 200)
}

// relInside is target relative to dir, slash-separated, when it is inside.
func relInside(dir, target string) (string, bool) { return guard.RelInside(dir, target) }
