package loopdir

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
)

// Every engine writes, in its private folder, the paths of its loop that
// no other loop's agent may read (WriteSecrets): the loop's records
// folder (transcripts, check logs) and its holdout files. Every agent run
// and check box then masks the paths every other loop on the machine
// wrote (OtherSecrets), whether that loop is running or not. This list is
// defence in depth, not the boundary: a loop whose engine never ran with
// this state folder is not on it. The views are what keep other loops'
// secrets out, by construction (judge/otherloops.go: another loop's
// folder around a check's tree shows only what git tracks; one inside the
// loop folder shows no records and nothing git ignores).

// secrets is the file's content.
type secrets struct {
	Dir   string   `json:"dir"`
	Paths []string `json:"paths"`
}

// WriteSecrets writes the loop folder's secret paths: its records folder
// and holdouts (relative to the folder, with slashes).
func (d Dir) WriteSecrets(holdouts []string) error {
	abs, err := filepath.Abs(string(d))
	if err != nil {
		return err
	}
	s := secrets{Dir: abs, Paths: []string{filepath.Join(abs, RecordsDir)}}
	for _, h := range holdouts {
		s.Paths = append(s.Paths, filepath.Join(abs, filepath.FromSlash(h)))
	}
	p := d.Private()
	if _, err := p.Ensure(); err != nil {
		return err
	}
	data, err := json.Marshal(s)
	if err != nil {
		return err
	}
	tmp := p.Secrets() + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, p.Secrets())
}

// OtherSecrets are the secret paths of every other loop whose engine ran
// with this state root: absolute, sorted, those that exist now. A path
// that holds the loop folder dir (or is it) is left out: a loop's agent
// works in its own folder.
func OtherSecrets(dir string) []string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil
	}
	abs = filepath.Clean(abs)
	own := filepath.Clean(string(PrivateOf(abs)))
	files, _ := filepath.Glob(filepath.Join(StateRoot(), "engine", "*", "secrets.json"))
	seen := map[string]bool{}
	var out []string
	for _, f := range files {
		if filepath.Dir(f) == own {
			continue
		}
		data, err := os.ReadFile(f)
		var s secrets
		if err != nil || json.Unmarshal(data, &s) != nil || filepath.Clean(s.Dir) == abs {
			continue
		}
		for _, p := range s.Paths {
			p = filepath.Clean(p)
			if !filepath.IsAbs(p) || seen[p] || within(abs, p) {
				continue
			}
			if _, err := os.Lstat(p); err != nil {
				continue
			}
			seen[p] = true
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}

// within says whether p is root or inside it.
func within(p, root string) bool {
	rel, err := filepath.Rel(root, p)
	return err == nil && rel != ".." && !filepath.IsAbs(rel) && (rel == "." || len(rel) < 3 || rel[:3] != "../")
}
