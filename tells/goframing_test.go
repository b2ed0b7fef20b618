package tells

import (
	"reflect"
	"strings"
	"testing"
)

const realTests = `package calc

import "testing"

func TestAdd(t *testing.T) {}
func TestMain(m *testing.M) {}
func Testify(t *testing.T) {}
func Test(t *testing.T) {}
func Test_under(t *testing.T) {}
func BenchmarkAdd(b *testing.B) {}
func ExampleAdd() {}
func FuzzAdd(f *testing.F) {}
func (s suite) TestMethod(t *testing.T) {}
func helper() {}
`

func TestGoTestFuncs(t *testing.T) {
	got, err := GoTestFuncs([]byte(realTests))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"BenchmarkAdd", "ExampleAdd", "FuzzAdd", "Test", "TestAdd", "Test_under"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	if _, err := GoTestFuncs([]byte("package p\nfunc TestX(")); err == nil || !strings.HasPrefix(err.Error(), "2:") {
		t.Fatalf("want a line:column error, got %v", err)
	}
}

func TestGoFramingForged(t *testing.T) {
	known := map[string]bool{"TestAdd": true, "TestMul": true}
	// -v output with test2json's framing: TestAdd is real (subtests too),
	// TestHidden is what forged code printed for the holdout's -test.run.
	v := "\x16=== RUN   TestAdd\n\x16=== RUN   TestAdd/small\n\x16--- PASS: TestAdd/small (0.00s)\n\x16--- PASS: TestAdd (0.00s)\n" +
		"=== RUN   TestHidden\n--- PASS: TestHidden (0.00s)\n    --- PASS: TestHidden/x (0.00s)\nPASS\nok  \tcalc\t0.01s\n"
	got := GoFramingForged([]byte(v), known)
	want := []Forged{{Line: 5, Test: `"TestHidden"`, Action: "run"}, {Line: 6, Test: `"TestHidden"`, Action: "pass"}, {Line: 7, Test: `"TestHidden/x"`, Action: "pass"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("-v: got %v, want %v", got, want)
	}
	// -json output.
	j := `{"Action":"run","Package":"calc","Test":"TestMul"}
{"Action":"output","Package":"calc","Test":"TestMul","Output":"--- PASS: TestFakeInOutput (0.00s)\n"}
{"Action":"pass","Package":"calc","Test":"TestMul","Elapsed":0}
{"Action":"pass","Package":"calc","Test":"TestGhost\u001b[2J","Elapsed":0}
{"Action":"pass","Package":"calc","Elapsed":0.01}
not json {"Action":"pass","Test":"TestX"}
`
	got = GoFramingForged([]byte(j), known)
	want = []Forged{{Line: 4, Test: `"TestGhost\x1b[2J"`, Action: "pass"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("-json: got %v, want %v", got, want)
	}
	if got := GoFramingForged([]byte(v), map[string]bool{"TestAdd": true, "TestHidden": true}); len(got) != 0 {
		t.Fatalf("every name known: got %v", got)
	}
}
