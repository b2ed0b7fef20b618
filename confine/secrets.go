package confine

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/looprinter/looprinter/judge"
	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/redact"
	"github.com/looprinter/looprinter/sandbox"
)

// OtherSecrets are what other loops keep from this loop's agent runs,
// masked there: in the loop folders inside this one, their records
// folders and what git ignores (judge.OtherLoopSecretsIn: found on disk,
// whether or not their engines ever ran here); and, as defence in depth,
// the records folders and holdout files every other engine that ran with
// this state folder listed. Other loops' folders outside the loop folder
// are not in the agent's view at all (its view is built from a manifest).
func OtherSecrets(dir string) []string {
	return append(judge.OtherLoopSecretsIn(dir), loopdir.OtherSecrets(dir)...)
}

// SecretsInReach are the paths of OtherSecrets that exist inside the loop
// folder dir: what a run writing the folder in place (Landlock) would read.
func SecretsInReach(dir string) []string {
	dirs := []string{dir}
	if c, err := filepath.EvalSymlinks(dir); err == nil && c != dir {
		dirs = append(dirs, c)
	}
	var in []string
	seen := map[string]bool{}
	for _, p := range OtherSecrets(dir) {
		for _, d := range dirs {
			rel, err := filepath.Rel(d, p)
			if err != nil || p == d || !sandbox.Within(p, d) {
				continue
			}
			if _, err := os.Lstat(p); err == nil && !seen[rel] {
				seen[rel] = true
				in = append(in, filepath.ToSlash(rel))
			}
			break
		}
	}
	sort.Strings(in)
	return in
}

// ListSome is the first n of list, then how many more.
func ListSome(list []string, n int) string {
	if len(list) <= n {
		return strings.Join(list, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(list[:n], ", "), len(list)-n)
}

// SecretRule marks a Tamper that is a secret in a changed file.
const SecretRule = "secret_in_change"

// maxScan bounds the size of a changed file scanned for secrets.
const maxScan = 16 << 20

// ReadChange reads a changed regular file of a layer of at most maxScan
// bytes (ok false: another kind of file, larger, or unreadable).
func ReadChange(path string) (data []byte, ok bool) {
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > maxScan {
		return nil, false
	}
	data, err = os.ReadFile(path)
	return data, err == nil
}

// secretsInData says which secrets a changed regular file of a layer
// holds ("" when none): the kinds and lines, never the values.
func secretsInData(data []byte, r *redact.Redactor) string {
	var parts []string
	for _, f := range redact.Scan(r, data) {
		parts = append(parts, fmt.Sprintf("%s on line %d", f.Kind, f.Line))
	}
	return strings.Join(parts, ", ")
}

// SecretsInChange is secretsInData of a changed file with its name (a
// secret spelled in a file's name is found like one in its content).
func SecretsInChange(rel string, data []byte, r *redact.Redactor) string {
	var parts []string
	for _, f := range redact.ScanName(r, rel) {
		parts = append(parts, f.Kind+" in its name")
	}
	if s := secretsInData(data, r); s != "" {
		parts = append(parts, s)
	}
	return strings.Join(parts, ", ")
}
