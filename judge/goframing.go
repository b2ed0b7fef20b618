package judge

import (
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/looprinter/looprinter/tells"
)

// In the clean room the agent's new test files are set aside, so every Go
// test a run names must be a test function of the loop's own test files
// (as they were at the start: they are protected) or of the holdout files.
// A pass of any other name was printed by code under test, not by the
// testing package: the check fails there. (Forged output that names only
// real tests is not seen here; the tells of the code that prints it are.)

// forgedGoHead starts the line of a run whose output named unknown tests.
const forgedGoHead = "the run names tests that"

// maxGoLog bounds the check log read for forged names.
const maxGoLog = 16 << 20

// forgedGo fails each passing Go check of results whose output names a
// test no start or holdout test file declares.
func (j *Judge) forgedGo(results []CheckResult) {
	var known map[string]bool
	for i := range results {
		r := &results[i]
		if !r.Pass || r.Tests.Runner != "go" || r.Output == "" {
			continue
		}
		if known == nil {
			known = j.goTestNames()
		}
		data, err := readHead(r.Output, maxGoLog)
		if err != nil {
			continue
		}
		forged := tells.GoFramingForged(data, known)
		if len(forged) == 0 {
			continue
		}
		var names []string
		for _, f := range forged {
			if len(names) == 5 {
				names = append(names, "…")
				break
			}
			names = append(names, fmt.Sprintf("%s (%s, line %d of its output)", f.Test, f.Action, f.Line))
		}
		why := forgedGoHead + " no test file of the loop (as it started) or of the holdout declares: " + strings.Join(names, ", ") + ": that output was printed by code under test, not by Go's testing package"
		r.Pass, r.Check.Pass = false, false
		r.Lines = append([]string{why}, r.Lines...)
		r.Signal = strings.TrimSpace(why + "\n" + r.Signal)
	}
}

// goTestNames are the test functions of the Go test files the loop
// started with and of the holdout files.
func (j *Judge) goTestNames() map[string]bool {
	known := map[string]bool{}
	var files []string
	if j.StartFiles != nil {
		files = j.StartFiles()
	}
	files = append(files, j.holdouts...)
	sort.Strings(files)
	for _, f := range files {
		if !strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := readHead(j.holdoutSource(f), maxGoLog)
		if err != nil {
			continue
		}
		names, _ := tells.GoTestFuncs(src)
		for _, n := range names {
			known[n] = true
		}
	}
	return known
}

func readHead(path string, max int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	buf := make([]byte, 0, 64<<10)
	for int64(len(buf)) < max {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := f.Read(buf[len(buf):min(int64(cap(buf)), max)])
		buf = buf[:len(buf)+n]
		if err != nil {
			break
		}
	}
	return buf, nil
}
