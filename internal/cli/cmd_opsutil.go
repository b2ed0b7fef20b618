package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/looprinter/looprinter/internal/ops"
)

// resolveLoop finds the loop a command acts on: the NAME argument (a
// loop's name, key, directory or loop file), else -f, else ./loop.yaml,
// else the only loop looprinter knows.
func resolveLoop(args []string, file string) (ops.Entry, error) {
	if len(args) > 0 && args[0] != "" {
		e, err := ops.Find(args[0])
		if err != nil {
			return e, &ExitError{Code: ExitUsage, Err: err}
		}
		return e, nil
	}
	if file == "" {
		if _, err := os.Stat("loop.yaml"); err == nil {
			file = "loop.yaml"
		}
	}
	if file != "" {
		abs, err := filepath.Abs(file)
		if err != nil {
			return ops.Entry{}, err
		}
		e, err := ops.Find(abs)
		if err != nil {
			return e, &ExitError{Code: ExitUsage, Err: err}
		}
		return e, nil
	}
	entries, _ := ops.Entries()
	switch len(entries) {
	case 0:
		return ops.Entry{}, &ExitError{Code: ExitUsage, Err: errors.New("no loop here (no loop.yaml) and none started yet: name one, or use -f")}
	case 1:
		return entries[0], nil
	}
	return ops.Entry{}, &ExitError{Code: ExitUsage, Err: fmt.Errorf("%d loops are known; name one (see `looprinter list`)", len(entries))}
}

// runDir is where an entry's loop keeps its files.
func runDir(e ops.Entry) string {
	if e.RunDir != "" {
		return e.RunDir
	}
	return e.Dir
}
