package guard

import (
	"bufio"
	"bytes"
	"encoding/json"
	"path"
	"path/filepath"
	"strings"
)

// KeepTestConfigEdit decides about a change to a file that holds test
// configuration beside the project's own settings, which a config rule
// protects whole: pyproject.toml and setup.cfg (an edit that leaves their
// pytest sections — [tool.pytest…] in pyproject.toml, [tool:pytest] in
// setup.cfg — as they were is kept), go.mod (its go, toolchain, godebug
// and replace lines), package.json (its scripts and its test runners'
// keys) and Cargo.toml (its [profile.*], [patch.*] and [replace] tables).
// For any other file it returns false.
func KeepTestConfigEdit(rel string, old, cur []byte) (keep bool, why string) {
	var isTest func(section string) bool
	switch path.Base(filepath.ToSlash(rel)) {
	case "pyproject.toml":
		isTest = func(s string) bool { return s == "tool.pytest" || strings.HasPrefix(s, "tool.pytest.") }
	case "setup.cfg":
		isTest = func(s string) bool { return s == "tool:pytest" || s == "pytest" }
	case "go.mod":
		if bytes.Equal(goModRunnerLines(old), goModRunnerLines(cur)) {
			return true, ""
		}
		return false, "its go, toolchain, godebug or replace lines changed"
	case "package.json":
		if bytes.Equal(packageRunnerKeys(old), packageRunnerKeys(cur)) {
			return true, ""
		}
		return false, "its scripts or its test runners' settings changed"
	case "Cargo.toml":
		if bytes.Equal(cargoRunnerTables(old), cargoRunnerTables(cur)) {
			return true, ""
		}
		return false, "its [profile], [patch] or [replace] tables changed"
	default:
		return false, ""
	}
	if bytes.Equal(testSections(old, isTest), testSections(cur, isTest)) {
		return true, ""
	}
	return false, "its pytest section changed"
}

// goModRunnerLines are the lines of a go.mod that change how its tests
// build and run without changing the deliverable's code: the go and
// toolchain versions, godebug settings and replacements.
func goModRunnerLines(data []byte) []byte {
	var out bytes.Buffer
	block := ""
	for _, line := range strings.Split(string(data), "\n") {
		t := strings.TrimSpace(strings.SplitN(line, "//", 2)[0])
		if block != "" {
			if t == ")" {
				block = ""
			} else if t != "" {
				out.WriteString(block + " " + strings.Join(strings.Fields(t), " ") + "\n")
			}
			continue
		}
		f := strings.Fields(t)
		if len(f) == 0 {
			continue
		}
		switch f[0] {
		case "go", "toolchain", "godebug", "replace":
			if len(f) == 2 && f[1] == "(" {
				block = f[0]
				continue
			}
			out.WriteString(strings.Join(f, " ") + "\n")
		}
	}
	return out.Bytes()
}

// cargoRunnerTables are the parts of a Cargo.toml that change how its
// tests build without changing the deliverable's code: the [profile.*]
// tables (optimisation, debug assertions, overflow checks, panic), the
// [patch.*] and [replace] tables (what stands in for a dependency), and
// the same written as dotted keys of the top table.
func cargoRunnerTables(data []byte) []byte {
	runner := func(name string) bool {
		first := strings.SplitN(name, ".", 2)[0]
		return first == "profile" || first == "patch" || first == "replace"
	}
	var out bytes.Buffer
	in, top := false, true
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64*1024), 16<<20)
	for sc.Scan() {
		t := strings.TrimSpace(strings.SplitN(sc.Text(), "#", 2)[0])
		if t == "" {
			continue
		}
		if strings.HasPrefix(t, "[") {
			name := strings.Trim(t, "[] \t")
			name = strings.ReplaceAll(strings.ReplaceAll(name, `"`, ""), " ", "")
			in, top = runner(name), false
			t = "[" + name + "]"
		}
		if in || top && runner(strings.ReplaceAll(strings.TrimSpace(strings.SplitN(t, "=", 2)[0]), `"`, "")) {
			out.WriteString(strings.Join(strings.Fields(t), " "))
			out.WriteByte('\n')
		}
	}
	if sc.Err() != nil {
		return append([]byte("unreadable\n"), data...)
	}
	return out.Bytes()
}

// packageRunnerKeys are the keys of a package.json that say what `npm
// test` runs and how the test runners load the code: scripts, the runners'
// own settings, babel, module type and subpath imports. Unreadable JSON is
// compared whole.
func packageRunnerKeys(data []byte) []byte {
	var m map[string]json.RawMessage
	if json.Unmarshal(data, &m) != nil {
		return data
	}
	var out bytes.Buffer
	for _, k := range []string{"scripts", "jest", "mocha", "ava", "vitest", "c8", "nyc", "tap", "babel", "type", "imports"} {
		if v, ok := m[k]; ok {
			var c bytes.Buffer
			if json.Compact(&c, v) != nil {
				c.Write(v)
			}
			out.WriteString(k + "=" + c.String() + "\n")
		}
	}
	return out.Bytes()
}

// testSections returns the lines of the sections isTest selects; a [tool]
// table with pytest keys counts too.
func testSections(data []byte, isTest func(string) bool) []byte {
	var out bytes.Buffer
	in, inTool := false, false
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64*1024), 16<<20)
	for sc.Scan() {
		line := sc.Text()
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "[") {
			name := strings.Trim(strings.TrimSpace(strings.SplitN(t, "#", 2)[0]), "[] \t")
			name = strings.ReplaceAll(strings.ReplaceAll(name, `"`, ""), " ", "")
			in, inTool = isTest(name), name == "tool"
		}
		if in || inTool && strings.HasPrefix(t, "pytest") {
			out.WriteString(strings.TrimRight(line, " \t\r"))
			out.WriteByte('\n')
		}
	}
	if sc.Err() != nil {
		return append([]byte("unreadable\n"), data...)
	}
	return out.Bytes()
}
