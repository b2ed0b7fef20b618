package testcount

import (
	"reflect"
	"strings"
	"testing"
)

// The cheats an agent uses to make a gate pass, each against its baseline,
// all from real runner output.
func TestCompareCatchesCheats(t *testing.T) {
	for _, tc := range []struct {
		name, base, cur string
		want            []string
	}{
		{"go t.Skip added", "go-json.txt", "go-json-skip-added.txt", []string{
			"passing tests fell from 5 to 4; no longer passing: example.com/sample/a.TestPass",
			"skipped tests rose from 2 to 3; newly skipped: example.com/sample/a.TestPass",
		}},
		{"go -v t.Skip added", "go-v.txt", "go-v-skip-added.txt", []string{
			"passing tests fell from 5 to 4; no longer passing: example.com/sample/a.TestPass",
			"skipped tests rose from 2 to 3; newly skipped: example.com/sample/a.TestPass",
		}},
		{"go -json to -v keeps names comparable", "go-json.txt", "go-v-skip-added.txt", []string{
			"passing tests fell from 5 to 4; no longer passing: example.com/sample/a.TestPass",
			"skipped tests rose from 2 to 3; newly skipped: example.com/sample/a.TestPass",
		}},
		{"go test deleted", "go-json.txt", "go-json-removed.txt", []string{
			"passing tests fell from 5 to 4; no longer passing: example.com/sample/b.TestOther",
		}},
		{"pytest.mark.skip added", "pytest-v.txt", "pytest-v-skip-added.txt", []string{
			"passing tests fell from 3 to 2; no longer passing: test_pyt.py::test_pass",
			"skipped tests rose from 2 to 3; newly skipped: test_pyt.py::test_pass",
		}},
		{"pytest -k filter", "pytest-v.txt", "pytest-v-k.txt", []string{
			"passing tests fell from 3 to 1; no longer passing: test_pyt.py::test_param[1], test_pyt.py::test_param[2]",
			"skipped tests rose from 2 to 4",
		}},
		{"pytest -k filter, summary only", "pytest-default.txt", "pytest-k.txt", []string{
			"passing tests fell from 3 to 1",
			"skipped tests rose from 2 to 4",
		}},
		{"pytest summary silenced with -qq", "pytest-default.txt", "pytest-qq.txt", []string{
			"no test results could be read from the output, but the baseline's had them (pytest: 3 passed, 2 failed, 2 skipped)",
		}},
		{"unittest.skip added", "unittest-v.txt", "unittest-v-skip-added.txt", []string{
			"passing tests fell from 3 to 2; no longer passing: test_sample.TestA.test_pass",
			"skipped tests rose from 2 to 3; newly skipped: test_sample.TestA.test_pass",
		}},
		{"cargo filter", "cargo.txt", "cargo-filtered.txt", []string{
			"passing tests fell from 3 to 1; no longer passing: doc-tests sample src/lib.rs - add (line 3), tests/it.rs integration_passes",
			"skipped tests rose from 2 to 3",
		}},
		// t.Fatal turned into t.Log: the test now passes, nothing got worse
		// by count; catching that is a review's job, not the ratchet's.
		{"go t.Fatal to t.Log", "go-json.txt", "go-json-fatal-to-log.txt", nil},
		{"same output", "pytest-v.txt", "pytest-v.txt", nil},
		{"fewer skips is fine", "go-json-skip-added.txt", "go-json.txt", nil},
		{"baseline unreadable: no ratchet", "go-plain.txt", "go-json-removed.txt", nil},
		{"plain go test on both sides", "go-plain.txt", "go-plain.txt", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Compare(parseFile(t, tc.base), parseFile(t, tc.cur))
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}

func TestCompareNames(t *testing.T) {
	base := Counts{Known: true, Runner: "go", Passed: 30, PassedNames: names("T", 30)}
	cur := Counts{Known: true, Runner: "go", Passed: 5, PassedNames: names("T", 5)}
	v := Compare(base, cur)
	if len(v) != 1 || !strings.HasSuffix(v[0], " and 5 more") || strings.Count(v[0], ", ") != MaxListed-1 {
		t.Errorf("%q", v)
	}
	// Truncated names are not compared: the counts still are.
	cur.NamesTruncated = true
	if v := Compare(base, cur); !reflect.DeepEqual(v, []string{"passing tests fell from 30 to 5"}) {
		t.Errorf("%q", v)
	}
	// A count that drops while every baseline name still passes (names
	// qualified differently) says only the counts.
	cur = Counts{Known: true, Passed: 29, PassedNames: names("T", 30)}
	if v := Compare(base, cur); !reflect.DeepEqual(v, []string{"passing tests fell from 30 to 29"}) {
		t.Errorf("%q", v)
	}
}

func names(prefix string, n int) []string {
	var out []string
	for i := range n {
		out = append(out, prefix+string(rune('A'+i/26))+string(rune('a'+i%26)))
	}
	return out
}

func TestMinus(t *testing.T) {
	for _, tc := range []struct{ a, b, want []string }{
		{nil, nil, nil},
		{[]string{"a", "b", "c"}, []string{"b"}, []string{"a", "c"}},
		{[]string{"a", "c"}, []string{"b", "d"}, []string{"a", "c"}},
		{[]string{"b"}, []string{"a", "b", "c"}, nil},
	} {
		if got := minus(tc.a, tc.b); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("minus(%q, %q) = %q, want %q", tc.a, tc.b, got, tc.want)
		}
	}
}

func TestSum(t *testing.T) {
	goC := parseFile(t, "go-json.txt")
	py := parseFile(t, "pytest-v.txt")
	s := Sum(goC, Counts{}, py, parseFile(t, "go-v.txt"))
	if !s.Known || s.Runner != "go-json,pytest,go" || s.Passed != 13 || s.Failed != 4 || s.Skipped != 6 || len(s.PassedNames) != 5+3 || len(s.SkippedNames) != 2+2 {
		t.Errorf("%+v", s)
	}
	if s := Sum(Counts{}, Counts{Passed: 3}); s.Known || s.Passed != 0 {
		t.Errorf("unknown counts were added: %+v", s)
	}
	// Summing one Counts gives it back.
	if s := Sum(py); !reflect.DeepEqual(s, py) {
		t.Errorf("%+v\n%+v", s, py)
	}
}
