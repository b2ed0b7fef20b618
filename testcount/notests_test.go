package testcount

import "testing"

// A runner's output that proves no test ran is read as such; one where a
// test ran, or nothing readable, is not.
func TestNoTests(t *testing.T) {
	for _, tc := range []struct {
		name, out string
		want      bool
	}{
		{"go no test files", "?   \texample.com/m\t[no test files]\n?   \texample.com/m/sub\t[no test files]\n", true},
		{"go no tests to run", "ok  \texample.com/m\t0.002s [no tests to run]\n", true},
		{"go cached none", "ok  \texample.com/m\t(cached) [no tests to run]\n?   \texample.com/m/x\t[no test files]\n", true},
		{"go -v none", "testing: warning: no tests to run\nPASS\nok  \texample.com/m\t0.002s [no tests to run]\n", true},
		{"go some ran", "?   \texample.com/m\t[no test files]\nok  \texample.com/m/sub\t0.003s\n", false},
		{"go -v some ran", "?   \texample.com/m\t[no test files]\n=== RUN   TestA\n--- PASS: TestA (0.00s)\nPASS\nok  \texample.com/m/sub\t0.003s\n", false},
		{"go ran, no -v", "ok  \texample.com/m\t0.003s\n", false},
		{"pytest", "============ no tests ran in 0.01s ============\n", true},
		{"pytest ran", "===== 2 passed in 0.01s =====\n", false},
		{"pytest deselected", "collected 1 item / 1 deselected / 0 selected\n\n===== 1 deselected in 0.02s =====\n", true},
		{"pytest skipped only", "===== 2 skipped in 0.01s =====\n", true},
		{"pytest failed only", "===== 1 failed in 0.01s =====\n", false},
		{"jest", "No tests found, exiting with code 0\n", true},
		{"vitest", "No test files found, exiting with code 0\n", true},
		{"node spec", "ℹ tests 0\nℹ suites 0\nℹ pass 0\nℹ fail 0\nℹ cancelled 0\nℹ skipped 0\nℹ todo 0\n", true},
		{"node tap", "TAP version 13\n1..0\n# tests 0\n# pass 0\n", true},
		{"cargo none", "running 0 tests\n\ntest result: ok. 0 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s\n\n   Doc-tests m\n\nrunning 0 tests\n\ntest result: ok. 0 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s\n", true},
		{"cargo some", "running 0 tests\n\ntest result: ok. 0 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s\n\nrunning 1 test\ntest t ... ok\n\ntest result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s\n", false},
		{"pytest none, cargo some", "no tests ran in 0.01s\nrunning 1 test\ntest t ... ok\n\ntest result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s\n", false},
		{"unreadable", "all good\n", false},
		{"empty", "", false},
		{"go none, pytest ran", "?   \texample.com/m\t[no test files]\n===== 2 passed in 0.01s =====\n", false},
	} {
		c, err := ParseString(tc.out, nil)
		if err != nil {
			t.Fatal(err)
		}
		if c.NoTests != tc.want {
			t.Errorf("%s: NoTests %v, want %v (%+v)", tc.name, c.NoTests, tc.want, c)
		}
	}
}

// go test -json: a package's "skip" (no test files) ran none.
func TestNoTestsGoJSON(t *testing.T) {
	for _, tc := range []struct {
		name, out string
		want      bool
	}{
		{"none", `{"Action":"output","Package":"example.com/m","Output":"?   \texample.com/m\t[no test files]\n"}` + "\n" + `{"Action":"skip","Package":"example.com/m","Elapsed":0}` + "\n", true},
		{"some", `{"Action":"skip","Package":"example.com/m","Elapsed":0}` + "\n" + `{"Action":"run","Package":"example.com/m/sub","Test":"TestA"}` + "\n" + `{"Action":"pass","Package":"example.com/m/sub","Test":"TestA","Elapsed":0}` + "\n" + `{"Action":"pass","Package":"example.com/m/sub","Elapsed":0.01}` + "\n", false},
		{"ran, no test events", `{"Action":"pass","Package":"example.com/m","Elapsed":0.01}` + "\n", false},
	} {
		c, _ := ParseString(tc.out, nil)
		if c.NoTests != tc.want {
			t.Errorf("%s: NoTests %v, want %v (%+v)", tc.name, c.NoTests, tc.want, c)
		}
	}
}
