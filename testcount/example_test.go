package testcount_test

import (
	"fmt"
	"strings"

	"github.com/looprinter/looprinter/testcount"
)

// How a gate uses the package: count the baseline's output once, count each
// gate's output, and fail the gate on what Compare returns.
func Example() {
	baselineOutput := "=== RUN   TestA\n--- PASS: TestA (0.00s)\n=== RUN   TestB\n--- PASS: TestB (0.00s)\nok  \texample.com/p\t0.01s\n"
	gateOutput := "=== RUN   TestA\n--- PASS: TestA (0.00s)\n=== RUN   TestB\n    p_test.go:9: flaky\n--- SKIP: TestB (0.00s)\nok  \texample.com/p\t0.01s\n"
	patterns := []testcount.Pattern{{Name: "mocha", Passed: `^\s*(\d+) passing`, Failed: `^\s*(\d+) failing`, Skipped: `^\s*(\d+) pending`}}

	base, err := testcount.Parse(strings.NewReader(baselineOutput), patterns) // err: a bad pattern or a read error
	if err != nil {
		panic(err)
	}
	cur, _ := testcount.Parse(strings.NewReader(gateOutput), patterns)
	fmt.Println(cur)
	for _, v := range testcount.Compare(base, cur) {
		fmt.Println("violation:", v)
	}
	// Output:
	// go: 1 passed, 0 failed, 1 skipped
	// violation: passing tests fell from 2 to 1; no longer passing: example.com/p.TestB
	// violation: skipped tests rose from 0 to 1; newly skipped: example.com/p.TestB
}
