//go:build fleet

package main

// With -tags fleet: the worker, submit and fleet commands (Temporal SDK).
import _ "github.com/looprinter/looprinter/internal/fleetcmd"
