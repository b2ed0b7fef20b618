package guard

import "testing"

// A package that is product code is never test support, even when only
// tests import it: a public opt-in subpackage with exported API (and what
// only it imports), a package with tests of its own (under internal/ too).
// Test support stays protected: under internal/ with no tests of its own,
// a public folder named as test support, a public package that exports
// nothing.
func TestProtectGoTestSupportProductCode(t *testing.T) {
	dir, l := protectFixture(t, goLoop, map[string]string{
		"go.mod":      "module example.com/x\n",
		"add.go":      "package x\n",
		"add_test.go": "package x\n\nimport (\n\t_ \"example.com/x/opt\"\n\t_ \"example.com/x/internal/tested\"\n\t_ \"example.com/x/internal/assert\"\n\t_ \"example.com/x/testutil\"\n\t_ \"example.com/x/sidefx\"\n\t_ \"example.com/x/generic\"\n\t_ \"example.com/x/hidden\"\n)\n",
		// the opt-in public package: exported API, only the tests import it
		"opt/opt.go":      "package opt\n\nimport _ \"example.com/x/opt/impl\"\n\n// Do is the public API.\nfunc Do() int { return 1 }\n",
		"opt/impl/imp.go": "package impl\n\nfunc helper() {}\n",
		// under internal/, but tested: product code
		"internal/tested/t.go":      "package tested\n\nfunc Helper() {}\n",
		"internal/tested/t_test.go": "package tested\n",
		// test support
		"internal/assert/eq.go": "package assert\n\nfunc Equal() {}\n",
		"testutil/eq.go":        "package testutil\n\nfunc Equal() {}\n",
		"sidefx/reg.go":         "package sidefx\n\nfunc init() {}\n\ntype hidden struct{}\n\nfunc (hidden) Exported() {}\n",
		// exported through a generic type's method does not count unless the type is exported
		"generic/g.go": "package generic\n\ntype Box[T any] struct{}\n",
		"hidden/h.go":  "package hidden\n\ntype box[T any] struct{}\n\nfunc (*box[T]) Get() {}\n\nvar v, W = 1, 2\n",
	})
	got := resolved(t, dir, l)
	wantProtected(t, got, map[string]string{
		"internal/assert/eq.go": "go-test-support",
		"testutil/eq.go":        "go-test-support",
		"sidefx/reg.go":         "go-test-support",
	}, "opt/opt.go", "opt/impl/imp.go", "internal/tested/t.go", "generic/g.go", "hidden/h.go")
}

// goDeclExported reads each kind of declaration.
func TestGoDeclExportedKinds(t *testing.T) {
	dir, l := protectFixture(t, goLoop, map[string]string{
		"go.mod":      "module example.com/x\n",
		"add_test.go": "package x\n\nimport (\n\t_ \"example.com/x/a\"\n\t_ \"example.com/x/b\"\n\t_ \"example.com/x/c\"\n\t_ \"example.com/x/d\"\n\t_ \"example.com/x/e\"\n)\n",
		"a/a.go":      "package a\n\nconst C = 1\n",
		"b/b.go":      "package b\n\ntype t struct{}\n\nfunc (t) M() {}\n\ntype U struct{}\n\nfunc (*U) m() {}\n\nimport \"fmt\"\n", // does not parse: nothing read
		"c/c.go":      "package c\n\ntype P[K any, V any] struct{}\n\nfunc (p *P[K, V]) Get() {}\n",
		"d/d.go":      "package d\n\ntype p[K any, V any] struct{}\n\nfunc (x *p[K, V]) Get() {}\n\nvar _ = 1\n",
		"e/e.go":      "package e\n\nimport \"fmt\"\n\nvar _ = fmt.Sprint\n\nfunc F() {}\n",
	})
	got := resolved(t, dir, l)
	wantProtected(t, got, map[string]string{"b/b.go": "go-test-support", "d/d.go": "go-test-support"},
		"a/a.go", "c/c.go", "e/e.go")
}
