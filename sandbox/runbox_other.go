//go:build !linux

package sandbox

import (
	"errors"
	"os/exec"
	"syscall"
)

// Run boxes need Linux (see runbox_linux.go); elsewhere Wrap never
// offers one.

// EnvRunBox, set to "off", starts every run's own helper and bubblewrap.
const EnvRunBox = "LOOPRINTER_RUN_BOX"

// A BoxedRun is one run Wrap prepared for a box: never, here.
type BoxedRun struct{}

// ErrBoxOff is Start's error where the run must start the classic way.
var ErrBoxOff = errors.New("the run box cannot serve this run")

// TakeBoxedRun is nil here.
func TakeBoxedRun(string) *BoxedRun { return nil }

// Classic is never called here.
func (b *BoxedRun) Classic() (string, []string) { return "", nil }

// Start fails here.
func (b *BoxedRun) Start(*exec.Cmd, int) (*BoxedProcess, error) { return nil, ErrBoxOff }

// A BoxedProcess is an agent a box started: never, here.
type BoxedProcess struct{ Pid int }

// Wait never returns here.
func (p *BoxedProcess) Wait() (int, syscall.Signal, error) { select {} }

// Signal fails here.
func (p *BoxedProcess) Signal(syscall.Signal) error { return ErrBoxOff }

// CloseRunBoxes does nothing here.
func CloseRunBoxes() {}

// CloseRunBoxesOf does nothing here.
func CloseRunBoxesOf(string) {}

func runBoxesOn() bool { return false }

func boxRun([]Layer, []string, []string, string, []string, *Network, string, []string) string {
	return ""
}
