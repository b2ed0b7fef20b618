package statefile

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/looprinter/looprinter/guard"
	"github.com/looprinter/looprinter/loopdir"
)

// The engine's own copy of the state lives in two slot files in its private
// folder, .state.0 and .state.1. A save overwrites one slot in place (one
// pwrite) and, when it must survive a power loss, syncs that file's data
// (fdatasync): no temporary file, no rename, no sync of the folder, whose
// entries never change after the slots are made. A slot begins with a
// header line (a sequence number, the payload's length, the digests of the
// last two public copies of the state, a CRC over all of it); a load takes
// the whole slot with the highest sequence number, so a write torn by a
// crash leaves the other slot, the previous save, in force.
//
// A write never goes to the slot that holds the last synced save: a save
// that is not synced (an agent's process group, the wall time while it
// runs) cannot tear the state a power loss would fall back to.
//
// working-records/state.json (public) and state.json in the private folder
// are copies for people and tools, written when a step ends; neither is
// read by the engine while a journal exists, and the public one is checked
// against the digests the journal keeps.

const journalMagic = "looprinter-state"

// Syncs counts the journal's syncs in this process (the engine's
// benchmarks report it per iteration; its tests hold it to one a step).
var Syncs atomic.Int64

// Journal is an open state journal: one writer, the engine that holds the
// loop's lock (or SaveAlone, when no engine runs).
type Journal struct {
	f    [2]*os.File
	seq  uint64
	last int       // the slot of the last synced save (or the newest found at open)
	pubs [2]string // digests of the last two public copies written
}

// OpenJournal opens (making them when missing) the two slots in priv, the
// engine's private folder of a loop.
func OpenJournal(priv string) (*Journal, error) {
	j := &Journal{last: 1}
	made := false
	for i := range j.f {
		p := loopdir.Private(priv).Journal(i)
		if _, err := os.Lstat(p); errors.Is(err, os.ErrNotExist) {
			made = true
		}
		f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE|guard.ONoFollow, 0o600)
		if err != nil {
			j.Close()
			return nil, err
		}
		j.f[i] = f
	}
	if made {
		// The slots' names reach the disk once; later saves change no name.
		if err := guard.SyncDir(priv); err != nil {
			j.Close()
			return nil, err
		}
	}
	if s, i, ok := ReadJournal(priv); ok {
		j.seq, j.last, j.pubs = s.Seq, i, s.pubs
		// The newest slot may have been written without a sync by an
		// engine that died: sync it before the other slot is overwritten.
		fdatasync(j.f[i])
	}
	return j, nil
}

// Close closes the slots' files.
func (j *Journal) Close() {
	for i, f := range j.f {
		if f != nil {
			f.Close()
			j.f[i] = nil
		}
	}
}

// Last is the slot (0 or 1) of the last synced save, or of the newest
// found when the journal was opened.
func (j *Journal) Last() int { return j.last }

// Write saves payload as the newest state. pub is the public copy about to
// be written after it (nil when this save writes none); durable syncs the
// slot's data before Write returns.
func (j *Journal) Write(payload, pub []byte, durable bool) error {
	pubs := j.pubs
	if pub != nil {
		sum := sha256.Sum256(pub)
		pubs = [2]string{hex.EncodeToString(sum[:]), j.pubs[0]}
	}
	i := 1 - j.last
	buf := encodeSlot(j.seq+1, pubs, payload)
	if _, err := j.f[i].WriteAt(buf, 0); err != nil {
		return err
	}
	if durable {
		if err := fdatasync(j.f[i]); err != nil {
			return err
		}
		Syncs.Add(1)
		j.last = i
	}
	j.seq++
	j.pubs = pubs
	return nil
}

// Slot is one decoded slot of the journal: its sequence number and the
// state saved in it.
type Slot struct {
	Seq     uint64
	Payload []byte
	pubs    [2]string
}

func encodeSlot(seq uint64, pubs [2]string, payload []byte) []byte {
	head := fmt.Sprintf("%s 1 %d %d %s %s", journalMagic, seq, len(payload), orDash(pubs[0]), orDash(pubs[1]))
	sum := crc32.NewIEEE()
	sum.Write([]byte(head))
	sum.Write(payload)
	buf := make([]byte, 0, len(head)+10+len(payload))
	buf = append(buf, head...)
	buf = fmt.Appendf(buf, " %08x\n", sum.Sum32())
	return append(buf, payload...)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// decodeSlot reads a slot's contents; ok is false for anything but a whole
// slot whose CRC matches (a torn or stale write, a file never written).
func decodeSlot(b []byte) (s Slot, ok bool) {
	nl := bytes.IndexByte(b, '\n')
	if nl < 0 || nl > 512 {
		return s, false
	}
	f := strings.Fields(string(b[:nl]))
	if len(f) != 7 || f[0] != journalMagic || f[1] != "1" {
		return s, false
	}
	seq, err1 := strconv.ParseUint(f[2], 10, 64)
	n, err2 := strconv.Atoi(f[3])
	want, err3 := strconv.ParseUint(f[6], 16, 32)
	if err1 != nil || err2 != nil || err3 != nil || n < 0 || nl+1+n > len(b) {
		return s, false
	}
	payload := b[nl+1 : nl+1+n]
	sum := crc32.NewIEEE()
	sum.Write([]byte(strings.Join(f[:6], " ")))
	sum.Write(payload)
	if uint64(sum.Sum32()) != want {
		return s, false
	}
	s.Seq, s.Payload = seq, payload
	for k := range s.pubs {
		if f[4+k] != "-" {
			s.pubs[k] = f[4+k]
		}
	}
	return s, true
}

// ReadJournal returns the newest whole slot of priv's journal and its
// index; ok is false when neither slot holds one.
func ReadJournal(priv string) (best Slot, idx int, ok bool) {
	for i := 0; i < 2; i++ {
		data, err := os.ReadFile(loopdir.Private(priv).Journal(i))
		if err != nil {
			continue
		}
		if s, good := decodeSlot(data); good && (!ok || s.Seq > best.Seq) {
			best, idx, ok = s, i, true
		}
	}
	return best, idx, ok
}

// RemoveJournal deletes priv's journal (a fresh start).
func RemoveJournal(priv string) {
	for i := 0; i < 2; i++ {
		os.Remove(loopdir.Private(priv).Journal(i))
	}
}

// PublicMatches says whether pub, the public state.json, is one the engine
// wrote: one of the last two whose digests the journal keeps (the newer may
// not have reached the file when the engine stopped).
func (s Slot) PublicMatches(pub []byte) bool {
	sum := sha256.Sum256(pub)
	h := hex.EncodeToString(sum[:])
	return h == s.pubs[0] || h == s.pubs[1]
}
