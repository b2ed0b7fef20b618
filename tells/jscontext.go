package tells

import (
	"strings"

	"github.com/looprinter/looprinter/srctok"
)

// jsFrameworks are the test frameworks' and assertion libraries' modules
// (without "node:"): an assignment into one is a patch of it.
func jsFramework(mod string) bool {
	mod = strings.TrimPrefix(mod, "node:")
	switch mod {
	case "assert", "assert/strict", "test", "chai", "expect", "vitest", "jest", "mocha", "should", "uvu", "uvu/assert", "tap", "ava":
		return true
	}
	return strings.HasPrefix(mod, "@jest/") || strings.HasPrefix(mod, "@vitest/") || strings.HasPrefix(mod, "chai/")
}

// jsContextReads are the names whose read is a read of the run's context.
var jsContextReads = []string{"process.argv", "process.argv0", "process.execArgv", "process.mainModule", "require.main", "module.parent"}

// jsAliases reads the file's bindings of process and of the frameworks'
// modules: local name → what it stands for ("process", "process.argv",
// "mod:assert", "mod:assert.strictEqual"). It reads `const x = process`,
// `const {argv, env: e} = process`, `x = require('m')`,
// `const {a, b: c} = require('m')`, `import x from 'm'`,
// `import * as x from 'm'`, `import {a, b as c} from 'm'`.
func jsAliases(toks []srctok.Token) map[string]string {
	out := map[string]string{}
	module := func(v string) string {
		switch v {
		case "process", "node:process":
			return "process"
		}
		if jsFramework(v) {
			return "mod:" + strings.TrimPrefix(v, "node:")
		}
		return ""
	}
	// source: what the expression at toks[j] binds from ("" when nothing known).
	source := func(j int) string {
		if seq(toks, j, "process") && !seq(toks, j+1, ".") {
			return "process"
		}
		if (seq(toks, j, "globalThis") || seq(toks, j, "global")) && !seq(toks, j+1, ".") && !seq(toks, j+1, "[") {
			return "globalThis"
		}
		if m, ok := jsModuleRequire(toks, j); ok {
			return module(m)
		}
		if seq(toks, j, "require", "(") && j+3 < len(toks) && toks[j+2].Kind == srctok.String && toks[j+3].Text == ")" {
			return module(toks[j+2].Value)
		}
		if j < len(toks) && toks[j].Kind == srctok.Ident && (j+1 >= len(toks) || toks[j+1].Text == ";" || toks[j+1].Line > toks[j].Line) {
			return out[toks[j].Text]
		}
		return ""
	}
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		if name, src := jsAssignSource(toks, i, source); src != "" {
			out[name] = src
			continue
		}
		switch {
		case t.Kind == srctok.Ident && (t.Text == "const" || t.Text == "let" || t.Text == "var") && i+1 < len(toks):
			if toks[i+1].Kind == srctok.Ident && seq(toks, i+2, "=") {
				if src := source(i + 3); src != "" {
					out[toks[i+1].Text] = src
				}
				continue
			}
			if seq(toks, i+1, "{") {
				close := matching(toks, i+1)
				if close > 0 && seq(toks, close+1, "=") {
					if src := source(close + 2); src != "" {
						destructure(toks[i+2:close], src, out)
					}
				}
			}
		case t.Kind == srctok.Ident && t.Text == "import" && (i == 0 || toks[i-1].Text != "."):
			from := i + 1
			for from < len(toks) && from < i+stmtReach && !seq(toks, from, "from") && toks[from].Kind != srctok.String {
				from++
			}
			if !seq(toks, from, "from") || from+1 >= len(toks) || toks[from+1].Kind != srctok.String {
				continue
			}
			mod := module(toks[from+1].Value)
			if mod == "" {
				continue
			}
			clause := toks[i+1 : from]
			for k := 0; k < len(clause); k++ {
				switch {
				case seq(clause, k, "*", "as") && k+2 < len(clause):
					out[clause[k+2].Text] = mod
					k += 2
				case seq(clause, k, "{"):
					end := k + 1
					for end < len(clause) && clause[end].Text != "}" {
						end++
					}
					destructure(clause[k+1:end], mod, out)
					k = end
				case clause[k].Kind == srctok.Ident && clause[k].Text != "type" && (k+1 >= len(clause) || clause[k+1].Text == ","):
					out[clause[k].Text] = mod
				}
			}
		}
	}
	return out
}

// destructure binds the names of a destructuring or named import list
// ({a, b: c} or {a, b as c}) to src.name.
func destructure(list []srctok.Token, src string, out map[string]string) {
	for k := 0; k < len(list); k++ {
		if list[k].Kind != srctok.Ident || k > 0 && list[k-1].Text != "," && list[k-1].Text != "{" {
			continue
		}
		name, local := list[k].Text, list[k].Text
		if (seq(list, k+1, ":") || seq(list, k+1, "as")) && k+2 < len(list) && list[k+2].Kind == srctok.Ident {
			local = list[k+2].Text
		}
		out[local] = src + "." + name
	}
}

// matching is the index of the bracket closing toks[i] (0: none).
func matching(toks []srctok.Token, i int) int {
	for j := i + 1; j < len(toks); j++ {
		if toks[j].Depth == toks[i].Depth && toks[j].Kind == srctok.Op && (toks[j].Text == "}" || toks[j].Text == ")" || toks[j].Text == "]") {
			return j
		}
	}
	return 0
}

// jsChain resolves the expression starting at toks[i]: process,
// require('m'), globalThis/global, require, module or a bound alias,
// followed by .name, ?.name and ['name']. q is what it stands for ("":
// nothing known), end the index after it, lit whether every [key] was a
// string literal.
func jsChain(toks []srctok.Token, i int, aliases map[string]string) (q string, end int) {
	t := toks[i]
	if t.Kind != srctok.Ident || i > 0 && (toks[i-1].Text == "." || toks[i-1].Text == "?.") && toks[i-1].Kind == srctok.Op {
		return "", i
	}
	j := i + 1
	switch t.Text {
	case "process", "require", "module":
		q = t.Text
		if m, ok := jsModuleRequire(toks, i); ok {
			if !jsFramework(m) {
				return "", i
			}
			q, j = "mod:"+strings.TrimPrefix(m, "node:"), i+6
		}
		if q == "require" && seq(toks, i+1, "(") && i+3 < len(toks) && toks[i+2].Kind == srctok.String && toks[i+3].Text == ")" {
			if !jsFramework(toks[i+2].Value) {
				return "", i
			}
			q, j = "mod:"+strings.TrimPrefix(toks[i+2].Value, "node:"), i+4
		}
	case "globalThis", "global":
		q = "globalThis"
	default:
		q = aliases[t.Text]
	}
	if q == "" {
		return "", i
	}
	for j+1 < len(toks) {
		switch {
		case (seq(toks, j, ".") || seq(toks, j, "?.")) && toks[j+1].Kind == srctok.Ident:
			q += "." + toks[j+1].Text
			j += 2
			continue
		case seq(toks, j, "[") && j+2 < len(toks) && toks[j+1].Kind == srctok.String && !toks[j+1].Regexp && !strings.Contains(toks[j+1].Text, "${") && toks[j+2].Text == "]":
			q += "." + toks[j+1].Value
			j += 3
			continue
		}
		break
	}
	return q, j
}

// jsContext adds the file's reads of the run's context (ReadsRunContext)
// and its patches of a test framework's or assertion library's module
// (PatchesTestFramework).
func jsContext(src []byte, toks []srctok.Token) []Tell {
	aliases := jsAliases(toks)
	var out []Tell
	for i := range toks {
		q, end := jsChain(toks, i, aliases)
		if q == "" {
			continue
		}
		if strings.HasPrefix(q, "mod:") {
			if jsPatch(toks, i, end, q) {
				out = append(out, tokTell(src, toks[i], PatchesTestFramework))
			}
			continue
		}
		if jsContextRead(toks, i, end, q) {
			out = append(out, tokTell(src, toks[i], ReadsRunContext))
		}
	}
	return out
}

func jsContextRead(toks []srctok.Token, i, end int, q string) bool {
	for _, p := range jsContextReads {
		if under(q, p) {
			return true
		}
	}
	switch {
	case q == "process.env":
		// process.env used whole (iterated, spread, copied, destructured,
		// passed on) or indexed by a computed key.
		return !(i >= 2 && toks[i-1].Text == "in" && toks[i-2].Kind == srctok.String)
	case q == "globalThis":
		// globalThis[computed], 'describe' in globalThis,
		// Object.keys(globalThis) …: a lookup of a name not written.
		if seq(toks, end, "[") {
			return true
		}
		if i >= 2 && toks[i-1].Text == "in" && toks[i-2].Kind == srctok.String {
			return jsTestGlobals[toks[i-2].Value]
		}
		return i >= 2 && toks[i-1].Text == "(" && isReflect(toks, i-2)
	case strings.HasPrefix(q, "globalThis."):
		name := strings.TrimPrefix(q, "globalThis.")
		name, _, _ = strings.Cut(name, ".")
		return jsTestGlobals[name]
	}
	return false
}

// isReflect says whether toks[k] ends Object.keys / Object.entries /
// Object.getOwnPropertyNames / Reflect.* (a call that reads an object's
// names).
func isReflect(toks []srctok.Token, k int) bool {
	if k < 2 || toks[k-1].Text != "." {
		return false
	}
	return toks[k-2].Text == "Reflect" || toks[k-2].Text == "Object" && strings.Contains("keys entries values getOwnPropertyNames getOwnPropertyDescriptors assign", toks[k].Text)
}

// jsPatch says whether the framework module's binding at toks[i:end] is
// written: an assignment to a property (`a.equal = …`,
// `require('node:assert').strictEqual = …`), a delete, or
// Object.assign / Object.defineProperty / Reflect.set … on it.
func jsPatch(toks []srctok.Token, i, end int, q string) bool {
	if end < len(toks) && toks[end].Kind == srctok.Op && isJSAssign(toks[end].Text) && (strings.Count(q, ".") > 0 && end > i+1) {
		return true
	}
	if i >= 1 && toks[i-1].Text == "delete" {
		return true
	}
	if i >= 2 && toks[i-1].Text == "(" && toks[i-2].Kind == srctok.Ident {
		switch toks[i-2].Text {
		case "assign", "defineProperty", "defineProperties", "setPrototypeOf", "set", "deleteProperty":
			return i >= 4 && toks[i-3].Text == "." && (toks[i-4].Text == "Object" || toks[i-4].Text == "Reflect")
		}
	}
	return false
}

func isJSAssign(op string) bool {
	switch op {
	case "==", "===", "!=", "!==", "<=", ">=", "=>":
		return false
	}
	return strings.HasSuffix(op, "=")
}
