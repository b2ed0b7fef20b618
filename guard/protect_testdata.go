package guard

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path"
	"path/filepath"
	"strconv"
	"strings"
)

// Tests wherever they live: a Go library may keep its test cases as data
// files in a folder beside its tests (not testdata/), read through a test
// helper. goTestData finds the data files the Go test files name: a
// string literal of a _test.go file that, taken relative to the test's
// folder, is a data file of the folder, or a folder whose files hold no
// Go code (every file under it then). Those files are protected as tests
// are (default rule go-test-data-read): only when they exist, that is as
// the loop started with them; a new case the agent adds is its own.
func goTestData(dir string, files []string) map[string]bool {
	byDir, isFile := filesByDir(files)
	out := map[string]bool{}
	fset := token.NewFileSet()
	for _, f := range files {
		if !strings.HasSuffix(f, "_test.go") || underDefaultSkipped(f) {
			continue
		}
		af, err := parser.ParseFile(fset, filepath.Join(dir, filepath.FromSlash(f)), nil, parser.SkipObjectResolution)
		if err != nil {
			continue
		}
		folder := path.Dir(f)
		ast.Inspect(af, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING || len(lit.Value) > 300 {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			if err != nil || s == "" || strings.ContainsAny(s, "\n\x00") || path.IsAbs(s) {
				return true
			}
			rel := path.Clean(path.Join(folder, s))
			if rel == "." || strings.HasPrefix(rel, "../") || rel == ".." {
				return true
			}
			switch {
			case isFile[rel] && !strings.HasSuffix(rel, ".go"):
				out[rel] = true
			case len(byDir[rel]) > 0 && !holdsGo(byDir[rel]):
				for _, g := range byDir[rel] {
					out[g] = true
				}
			}
			return true
		})
	}
	return out
}

// holdsGo says whether any of files is Go source (a package, not data).
func holdsGo(files []string) bool {
	for _, f := range files {
		if strings.HasSuffix(f, ".go") {
			return true
		}
	}
	return false
}

// filesByDir indexes a listing of the loop folder (slash-separated paths):
// each folder → the files under it (any depth), and which paths are files.
func filesByDir(files []string) (byDir map[string][]string, isFile map[string]bool) {
	byDir, isFile = map[string][]string{}, map[string]bool{}
	for _, f := range files {
		isFile[f] = true
		for d := path.Dir(f); d != "." && d != "/"; d = path.Dir(d) {
			byDir[d] = append(byDir[d], f)
		}
	}
	return byDir, isFile
}
