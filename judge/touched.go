package judge

import (
	"path"
	"sort"
	"strings"
)

// The files the agent changed, as the audit is shown them. An agent that
// wants its cheat unread can bury it under thousands of data files, or
// name a file so that its name reads as a line of the prompt: so the list
// is ordered by kind (code, tests and configuration before documents,
// documents before bulk or data files), a list that must be cut keeps the
// files that matter and says how many it left out, and every name is
// quoted.

// File kinds, in the order the audit reads them.
const (
	KindCode   = iota // source and test files
	KindConfig        // configuration: what decides how code is built or tested
	KindDoc           // documents
	KindOther         // files of no known kind
	KindData          // bulk and data files
)

var (
	codeExt = extSet("go c h cc cpp cxx hpp hh cs java kt kts scala rs py pyi pyx rb php js jsx mjs cjs ts tsx mts cts vue svelte swift m mm sh bash zsh fish ps1 pl pm lua r jl ex exs erl hrl clj cljs hs ml mli fs fsx dart zig nim sql tf gradle groovy bat cmd awk sed mk cmake")
	confExt = extSet("yaml yml toml ini cfg conf properties env lock mod sum editorconfig")
	docExt  = extSet("md rst adoc txt org tex html htm")
	dataExt = extSet("csv tsv json jsonl ndjson xml dat bin parquet arrow feather avro orc npy npz pkl pickle h5 hdf5 db sqlite sqlite3 log out gz tgz zip tar bz2 xz zst 7z png jpg jpeg gif bmp ico svg webp pdf wav mp3 mp4 mov avi ttf woff woff2 otf so dylib dll exe o a class jar whl wasm map snap golden")
	// Names that are configuration or code whatever their extension.
	confNames = extSet("makefile gnumakefile dockerfile containerfile justfile rakefile gemfile procfile jenkinsfile vagrantfile build workspace package.json tsconfig.json jsconfig.json composer.json deno.json .babelrc .eslintrc .eslintrc.json .prettierrc .mocharc.json .mocharc.yml jest.config.js vitest.config.ts conftest.py setup.py setup.cfg pyproject.toml tox.ini pytest.ini noxfile.py go.mod go.sum cargo.toml cargo.lock .gitignore .gitattributes .npmrc .nvmrc .python-version")
)

func extSet(words string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(words) {
		m[w] = true
	}
	return m
}

// FileKind says what kind of file rel is, by its name alone (the audit
// must not read thousands of files to order them).
func FileKind(rel string) int {
	base := strings.ToLower(path.Base(rel))
	if confNames[base] {
		return KindConfig
	}
	ext := strings.TrimPrefix(path.Ext(base), ".")
	switch {
	case strings.HasPrefix(base, "test_") || strings.Contains(base, "_test.") || strings.Contains(base, ".test.") || strings.Contains(base, ".spec."):
		if !dataExt[ext] {
			return KindCode
		}
	}
	switch {
	case codeExt[ext]:
		return KindCode
	case confExt[ext]:
		return KindConfig
	case docExt[ext]:
		return KindDoc
	case dataExt[ext]:
		return KindData
	case ext == "" && strings.HasPrefix(base, "."):
		return KindConfig // a dotfile: .env, .pylintrc …
	}
	return KindOther
}

// SortByKind orders names by kind, then by name.
func SortByKind(names []string) {
	sort.SliceStable(names, func(a, b int) bool {
		ka, kb := FileKind(names[a]), FileKind(names[b])
		if ka != kb {
			return ka < kb
		}
		return names[a] < names[b]
	})
}

// KeepTouched adds changed to the list of touched files have (sorted),
// keeping at most limit names: when there are more, those of the kinds the
// audit reads first stay. It returns the new list, sorted by name, and how
// many names it left out (a name left out that changes again later is
// counted again).
func KeepTouched(have, changed []string, limit int) (kept []string, dropped int) {
	set := make(map[string]bool, len(have)+len(changed))
	all := make([]string, 0, len(have)+len(changed))
	for _, f := range have {
		if !set[f] {
			set[f] = true
			all = append(all, f)
		}
	}
	for _, f := range changed {
		if !set[f] {
			set[f] = true
			all = append(all, f)
		}
	}
	if len(all) > limit {
		SortByKind(all)
		dropped = len(all) - limit
		all = all[:limit]
	}
	sort.Strings(all)
	return all, dropped
}
