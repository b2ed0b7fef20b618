package judge

import (
	"os"
	"path/filepath"

	"github.com/looprinter/looprinter/checkcmd"
	"github.com/looprinter/looprinter/sandbox"
)

// programFolders are the folders outside tree of the files the check lines
// run as programs (a check script kept beside the loop folder, where the
// agent cannot change it): the checks' view, built from a manifest, shows
// them read-only.
func programFolders(tree string, lines ...[]string) []string {
	var out []string
	for _, group := range lines {
		for _, line := range group {
			progs, err := checkcmd.Programs(line)
			if err != nil {
				continue
			}
			for _, p := range progs {
				path := filepath.FromSlash(p.Path)
				if !filepath.IsAbs(path) {
					path = filepath.Join(tree, path)
				}
				path = filepath.Clean(path)
				if sandbox.Within(path, filepath.Clean(tree)) {
					continue
				}
				if fi, err := os.Stat(path); err == nil && !fi.IsDir() {
					out = append(out, filepath.Dir(path))
				}
			}
		}
	}
	return out
}
