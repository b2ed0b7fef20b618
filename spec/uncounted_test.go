package spec

import "testing"

func TestUncountedTests(t *testing.T) {
	cases := map[string]string{
		"go test ./...":                 "go test -v ./...",
		"go test":                       "go test -v",
		"cd sub && go test -race ./...": "cd sub && go test -v -race ./...",
		"go test -v ./...":              "",
		"go test -json ./...":           "",
		"go vet ./...":                  "",
		"python3 -m pytest -qq":         "",
		"cargo test":                    "",
		"echo go testing is fun":        "",
	}
	for cmd, want := range cases {
		why := UncountedTests(cmd)
		got := CountedTestCommand(cmd)
		switch {
		case want == "" && cmd == "python3 -m pytest -qq":
			if why == "" {
				t.Errorf("%q: no warning", cmd)
			}
		case want == "":
			if why != "" || got != cmd {
				t.Errorf("%q: warned %q, rewrote %q", cmd, why, got)
			}
		default:
			if why == "" || got != want {
				t.Errorf("%q: warned %q, rewrote %q, want %q", cmd, why, got, want)
			}
		}
	}
}
