//go:build !linux

package sandbox

import (
	"errors"
	"time"
)

// CgroupPrefix starts the name of every cgroup the engine makes.
const CgroupPrefix = "looprinter-"

// Cgroup is the cgroup of one agent run; there are none here.
type Cgroup struct{ Path string }

// CgroupProbe says why runs get no cgroup here.
func CgroupProbe() error { return errors.New("cgroups are Linux's") }

// NewCgroup fails here.
func NewCgroup(name string) (*Cgroup, error) { return nil, CgroupProbe() }

// FD is -1.
func (g *Cgroup) FD() int { return -1 }

// CPU is not known here.
func (g *Cgroup) CPU() (time.Duration, bool) { return 0, false }

// End does nothing.
func (g *Cgroup) End() ([]int, error) { return nil, nil }

// EndCgroup does nothing: no cgroup was made.
func EndCgroup(path string) ([]int, error) { return nil, nil }

// PruneCgroups does nothing: no cgroup was made.
func PruneCgroups() int { return 0 }

// SweepCgroups is Sweep: there are no cgroups here.
func SweepCgroups(groups []*Cgroup, keep ...int) []int { return Sweep(keep...) }
