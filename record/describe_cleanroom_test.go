package record

import "testing"

// A gate's record names its clean room's verdict: pass or FAIL, the files
// set aside only when there are some, and the holdout count only when a
// holdout check ran (passed of all of them).
func TestDescribeCleanRoom(t *testing.T) {
	yes := Bool(true)
	gate := func(cr *CleanRoom) Event {
		return Event{Event: Verify, Gate: "objective", Pass: yes, Checks: []Check{{Command: "go test", Pass: true}}, CleanRoom: cr}
	}
	for _, c := range []struct {
		cr   *CleanRoom
		want string
	}{
		{nil, "objective gate PASS: go test (ok)"},
		{&CleanRoom{Pass: true}, "objective gate PASS: go test (ok); clean room pass"},
		{&CleanRoom{Pass: true, SetAside: []string{}}, "objective gate PASS: go test (ok); clean room pass"},
		{&CleanRoom{Pass: false, SetAside: []string{"a_test.go"}}, "objective gate PASS: go test (ok); clean room FAIL (set aside: a_test.go)"},
		{&CleanRoom{Pass: false, SetAside: []string{"a_test.go", "b.test.js"}, HoldoutPassed: 2, HoldoutFailed: 1}, "objective gate PASS: go test (ok); clean room FAIL (set aside: a_test.go, b.test.js) holdout 2/3"},
		{&CleanRoom{Pass: true, HoldoutPassed: 1, HoldoutFailed: 1}, "objective gate PASS: go test (ok); clean room pass holdout 1/2"},
		{&CleanRoom{Pass: false, HoldoutFailed: 1}, "objective gate PASS: go test (ok); clean room FAIL holdout 0/1"},
		{&CleanRoom{Pass: true, HoldoutPassed: 1}, "objective gate PASS: go test (ok); clean room pass holdout 1/1"},
	} {
		if got := Describe(gate(c.cr)); got != c.want {
			t.Errorf("Describe(%+v): %q, want %q", c.cr, got, c.want)
		}
	}
}
