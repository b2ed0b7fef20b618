package github

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/looprinter/looprinter/guard"
	"github.com/looprinter/looprinter/proc"
)

// Seen remembers delivery ids, so that a delivery replayed (by someone
// who recorded it: its signature stays valid) is refused. It keeps the
// last Max ids (0: no bound), none older than MaxAge (0: no bound). With
// Path it keeps them in that file too, rewritten atomically on each new
// id, so that a restart does not forget them (LoadSeen reads it back).
type Seen struct {
	Max    int
	MaxAge time.Duration
	Path   string
	// Now is the clock (default time.Now).
	Now   func() time.Time
	mu    sync.Mutex
	ids   map[string]bool
	order []SeenID
}

// SeenID is one delivery id and when it was taken.
type SeenID struct {
	ID string    `json:"id"`
	At time.Time `json:"at"`
}

// seenFile is the file a Seen is kept in.
type seenFile struct {
	Version    int      `json:"version"`
	Deliveries []SeenID `json:"deliveries"`
}

// LoadSeen is a Seen kept in path with the bounds max and maxAge, holding
// the ids the file has. A missing file is an empty Seen. A file that
// cannot be read or is not a delivery list gives an empty Seen (that
// rewrites the file on its first id) and an error that says so: the ids
// it held are forgotten, which the caller should warn about.
func LoadSeen(path string, max int, maxAge time.Duration) (*Seen, error) {
	s := &Seen{Max: max, MaxAge: maxAge, Path: path}
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return s, fmt.Errorf("the webhook deliveries taken before cannot be read (%v): a delivery replayed from before this start is not recognised", err)
	}
	var f seenFile
	if err := json.Unmarshal(data, &f); err != nil || f.Version != 1 {
		if err == nil {
			err = fmt.Errorf("version %d, want 1", f.Version)
		}
		return s, fmt.Errorf("%s is not a list of webhook deliveries (%v): it is ignored and rewritten, and a delivery replayed from before this start is not recognised", path, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ids = map[string]bool{}
	s.mergeLocked(f.Deliveries)
	return s, nil
}

// mergeLocked adds the ids of list that s does not hold yet, keeping
// s.order oldest first, and trims.
func (s *Seen) mergeLocked(list []SeenID) {
	if s.ids == nil {
		s.ids = map[string]bool{}
	}
	added := false
	for _, d := range list {
		if d.ID != "" && !s.ids[d.ID] {
			s.ids[d.ID] = true
			s.order = append(s.order, d)
			added = true
		}
	}
	if added {
		sort.SliceStable(s.order, func(i, j int) bool { return s.order[i].At.Before(s.order[j].At) })
	}
	s.trimLocked()
}

// lockFile holds the file lock that makes the read, the check and the
// write of Take one step across processes: two `looprinter serve` on one
// state folder each see the ids the other took. It returns the unlock.
func (s *Seen) lockFile() (func(), error) {
	if err := os.MkdirAll(filepath.Dir(s.Path), 0o700); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(s.Path+".lock", os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	if err := proc.Lock(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { _ = proc.Unlock(f); f.Close() }, nil
}

// reloadLocked merges the ids another process wrote to Path since. A file
// that cannot be read leaves s as it is (its own ids still count).
func (s *Seen) reloadLocked() {
	data, err := os.ReadFile(s.Path)
	if err != nil {
		return
	}
	var f seenFile
	if json.Unmarshal(data, &f) != nil || f.Version != 1 {
		return
	}
	s.mergeLocked(f.Deliveries)
}

// First records id and says whether it is new (an error keeping it
// counts as new: see Take).
func (s *Seen) First(id string) bool {
	fresh, _ := s.Take(id)
	return fresh
}

// Take records id and says whether it is new. With Path, a new id is
// written to the file before Take returns; when that fails the id is not
// recorded and the error says why (the delivery should be refused: it
// would be forgotten by a restart). With Path, the file is locked and
// read again first, so a second process keeping the same file counts
// the ids this one took.
func (s *Seen) Take(id string) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ids == nil {
		s.ids = map[string]bool{}
	}
	if s.Path != "" {
		unlock, err := s.lockFile()
		if err != nil {
			return false, fmt.Errorf("the delivery id cannot be kept (the deliveries file cannot be locked: %v): refused, a replay could not be recognised", err)
		}
		defer unlock()
		s.reloadLocked()
	}
	s.trimLocked()
	if s.ids[id] {
		return false, nil
	}
	s.ids[id] = true
	s.order = append(s.order, SeenID{ID: id, At: s.now().UTC()})
	s.trimLocked()
	if s.Path == "" {
		return true, nil
	}
	if err := s.saveLocked(); err != nil {
		delete(s.ids, id)
		for i := len(s.order) - 1; i >= 0; i-- {
			if s.order[i].ID == id {
				s.order = append(s.order[:i], s.order[i+1:]...)
				break
			}
		}
		return false, fmt.Errorf("the delivery id cannot be kept (%v): refused, a restart would forget it", err)
	}
	return true, nil
}

func (s *Seen) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// trimLocked forgets the ids over Max and those older than MaxAge.
func (s *Seen) trimLocked() {
	drop := 0
	if s.Max > 0 && len(s.order) > s.Max {
		drop = len(s.order) - s.Max
	}
	if s.MaxAge > 0 {
		cut := s.now().Add(-s.MaxAge)
		for drop < len(s.order) && s.order[drop].At.Before(cut) {
			drop++
		}
	}
	for _, d := range s.order[:drop] {
		delete(s.ids, d.ID)
	}
	s.order = s.order[drop:]
}

func (s *Seen) saveLocked() error {
	data, err := json.Marshal(seenFile{Version: 1, Deliveries: s.order})
	if err != nil {
		return err
	}
	return guard.WriteFile(s.Path, append(data, '\n'), 0o600, true)
}
