// Package statefile is where a loop's state is kept on disk: the engine's
// own copy, a journal of two files of records in its private folder, a
// save appended to one with one data sync when it must survive a power
// loss (journal.go), the copies for people and tools
// (working-records/state.json and the private state.json, written into a
// spare and exchanged: copy_linux.go), the reads that trust the engine's
// copy over the public one (LoadTrusted), and a full disk (diskfull.go).
//
// It reads and writes bytes and knows nothing of what they mean: the state
// itself, its fields and what makes one impossible are the engine's
// (loop.State), given here as a Codec.
package statefile

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/looprinter/looprinter/loopdir"
)

// Codec is what the room needs of the state's meaning. T is the engine's
// state (a pointer: its zero value is "none").
type Codec[T any] struct {
	// Decode reads a state from its JSON.
	Decode func([]byte) (T, error)
	// Problems lists what makes a decoded state impossible.
	Problems func(T) []string
	// Fresh is the state of a loop that never ran.
	Fresh func() T
	// Rebuild is the state of the loop folder dir when its state cannot be
	// trusted; claimed is what an untrusted copy says (the zero T when it
	// says nothing readable).
	Rebuild func(dir string, claimed T) T
}

// EngineCopy is the engine's copy of the state of the loop folder dir as
// saved: the journal's newest slot (j, nil when there is none), else the
// private state.json (a loop last run by a version without a journal);
// path names it. An error satisfying os.IsNotExist when there is neither.
func EngineCopy(dir string) (data []byte, j *Slot, path string, err error) {
	priv := string(loopdir.PrivateOf(dir))
	if s, _, ok := ReadJournal(priv); ok {
		return s.Payload, &s, loopdir.Private(priv).Journal(0), nil
	}
	data, err = os.ReadFile(loopdir.PrivateOf(dir).State())
	return data, nil, loopdir.PrivateOf(dir).State(), err
}

func corrupt(path string, err error) error {
	return fmt.Errorf("%s is corrupt (%v): move it away to start the loop's counters again", path, err)
}

// Read reads the engine's own copy of a loop's state (EngineCopy); an
// error satisfying os.IsNotExist when the engine has none.
func Read[T any](dir string, c Codec[T]) (T, error) {
	var zero T
	data, _, path, err := EngineCopy(dir)
	if err != nil {
		return zero, err
	}
	st, err := c.Decode(data)
	if err != nil {
		return zero, corrupt(path, err)
	}
	return st, nil
}

// Load reads a loop's state for display: the engine's own copy when there
// is one, else the public state.json; a loop that never ran has a fresh
// state.
func Load[T any](dir string, c Codec[T]) (T, error) {
	st, err := Read(dir, c)
	if err == nil || !os.IsNotExist(err) {
		return st, err
	}
	var zero T
	data, err := os.ReadFile(loopdir.Dir(dir).State())
	if os.IsNotExist(err) {
		return c.Fresh(), nil
	}
	if err != nil {
		return zero, err
	}
	st, err = c.Decode(data)
	if err != nil {
		return zero, corrupt(loopdir.Dir(dir).State(), err)
	}
	return st, nil
}

// LoadTrusted is the engine's start: the state comes from the engine's own
// copy, never from the public file an agent could have written. It returns
// the state and what did not check out (each a violation): a public copy
// that differs from the engine's, or a state that has no engine copy or is
// impossible, which is not trusted and is rebuilt (c.Rebuild).
func LoadTrusted[T any](dir string, c Codec[T]) (T, []string, error) {
	var zero T
	priv, js, _, perr := EngineCopy(dir)
	pub, uerr := os.ReadFile(loopdir.Dir(dir).State())
	if perr != nil && !os.IsNotExist(perr) {
		return zero, nil, perr
	}
	if perr == nil {
		st, err := c.Decode(priv)
		var problems []string
		if err == nil {
			problems = c.Problems(st)
		}
		if err == nil && len(problems) == 0 {
			var issues []string
			if uerr == nil && (js == nil && !bytes.Equal(pub, priv) || js != nil && !js.PublicMatches(pub)) {
				issues = append(issues, "working-records/state.json was changed by something other than the engine; it was replaced by the engine's own copy")
			}
			return st, issues, nil
		}
		why := "the engine's copy of the state is unreadable"
		if err == nil {
			why = "the engine's copy of the state is impossible: " + strings.Join(problems, ", ")
		}
		return c.Rebuild(dir, zero), []string{why + "; the state was rebuilt from the records"}, nil
	}
	if os.IsNotExist(uerr) {
		return c.Fresh(), nil, nil
	}
	claimed := zero
	if uerr == nil {
		if st, err := c.Decode(pub); err == nil {
			claimed = st
		}
	}
	return c.Rebuild(dir, claimed), []string{"working-records/state.json has no engine copy to check it against (it was written elsewhere, or by hand): it is not trusted; the loop's counters were rebuilt from the records and its work is judged again from the start"}, nil
}

// Save writes data, the state as JSON, to the journal j (durable: synced
// before Save returns) and, public, the public state.json of the loop
// folder dir, whose contents it returns.
func Save(dir string, j *Journal, data []byte, durable, public bool) ([]byte, error) {
	var view []byte
	if public {
		view = Indented(data)
	}
	if err := j.Write(data, view, durable); err != nil {
		return nil, err
	}
	if !public {
		return nil, nil
	}
	return view, WriteCopy(loopdir.Dir(dir).State(), view)
}

// SaveFields is Save with the state given as its fields, in order
// (Journal.SaveFields): the journal gets what changed, and the public
// copy, when written, is made of each field's indented value, made once
// (and kept in fields) for a field whose value is new. It returns the
// public copy's contents.
func SaveFields(dir string, j *Journal, fields []Field, durable, public bool) ([]byte, error) {
	var view []byte
	if public {
		view = indented(fields)
	}
	if err := j.SaveFields(fields, view, durable); err != nil {
		return nil, err
	}
	if !public {
		return nil, nil
	}
	return view, WriteCopy(loopdir.Dir(dir).State(), view)
}

// SaveAlone writes data, the state as JSON, when no engine runs (a fleet
// worker putting a step's state in place, tests): the engine's journal,
// synced, then the public and the private copies.
func SaveAlone(dir string, data []byte) error {
	priv, err := loopdir.PrivateOf(dir).Ensure()
	if err != nil {
		return err
	}
	j, err := OpenJournal(priv)
	if err != nil {
		return err
	}
	defer j.Close()
	view, err := Save(dir, j, data, true, true)
	if err != nil {
		return err
	}
	return WriteCopy(loopdir.PrivateOf(dir).State(), view)
}

// WritePrivate writes data, the state as JSON, to the state.json of the
// private folder, for what reads the folder when no engine runs (a fleet
// carries it to the next step's worker); the engine itself reads its
// journal.
func WritePrivate(dir string, data []byte) error {
	return WriteCopy(loopdir.PrivateOf(dir).State(), Indented(data))
}

// Indented is the state as people read it (and as state.json always was).
func Indented(data []byte) []byte {
	var b bytes.Buffer
	b.Grow(len(data) * 5 / 4)
	json.Indent(&b, data, "", "  ")
	b.WriteByte('\n')
	return b.Bytes()
}
