package guard

import (
	"path"
	"path/filepath"
	"strings"

	"github.com/looprinter/looprinter/srctok"
	"github.com/looprinter/looprinter/tells"
)

// Tests wherever they live, Python and JavaScript/TypeScript: a test may
// keep its cases in data files outside the test folders (cases/add.json
// read by test_calc.py, fixtures/ beside add.test.js). testFixtures finds
// the data files the project's test files name: a string of a test file
// that, taken relative to the test's folder or to the top of the project
// (where the runner starts), is a data file (no source of a language the
// tells read, no Go), or a folder whose files hold no such source (every
// file under it then). Those files are protected as tests are (default
// rule test-data-read): only when they exist, that is as the loop started
// with them; a new case the agent adds is its own. Snapshot folders
// (__snapshots__, insta's snapshots/*.snap) are protected by the
// ecosystems' rules.

// maxFixtureReads bounds the test files read for the files they name.
const maxFixtureReads = 2000

func testFixtures(dir string, files []string) map[string]bool {
	byDir, isFile := filesByDir(files)
	out := map[string]bool{}
	name := func(rel string) {
		switch {
		case rel == "." || rel == ".." || strings.HasPrefix(rel, "../"):
		case isFile[rel] && !isSource(rel):
			out[rel] = true
		case len(byDir[rel]) > 0 && !holdsSource(byDir[rel]):
			for _, g := range byDir[rel] {
				out[g] = true
			}
		}
	}
	read := 0
	for _, f := range files {
		lang := tells.Language(f)
		if lang != "python" && lang != "js" || !tells.IsTestFile(f) || underDefaultSkipped(f) {
			continue
		}
		if read++; read > maxFixtureReads {
			break
		}
		for _, s := range testStrings(filepath.Join(dir, filepath.FromSlash(f)), lang) {
			name(path.Clean(path.Join(path.Dir(f), s)))
			name(path.Clean(s))
		}
	}
	return out
}

// testStrings are the string literals of a test file that may name a
// path (no interpolation, no line break, not absolute).
func testStrings(p, lang string) []string {
	src, err := ReadBounded(p, 1<<20)
	if err != nil {
		return nil
	}
	var toks []srctok.Token
	if lang == "python" {
		toks, err = srctok.Python(src)
	} else {
		toks, err = srctok.JS(src)
	}
	if err != nil {
		return nil
	}
	var out []string
	for _, t := range toks {
		s := t.Value
		if t.Kind != srctok.String || t.Regexp || s == "" || len(s) > 300 || strings.ContainsAny(s, "\n\x00{") || path.IsAbs(s) {
			continue
		}
		out = append(out, strings.TrimPrefix(s, "./"))
	}
	return out
}

// isSource says whether rel is source code (of a language the tells read,
// or Go): a module a test imports is the work, not its data.
func isSource(rel string) bool {
	return tells.Language(rel) != "" || strings.HasSuffix(rel, ".rs")
}

// holdsSource says whether any of files is source code.
func holdsSource(files []string) bool {
	for _, f := range files {
		if isSource(f) {
			return true
		}
	}
	return false
}
