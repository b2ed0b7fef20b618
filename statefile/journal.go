package statefile

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
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

// The engine's own copy of the state lives in two journal files in its
// private folder, .state.0 and .state.1, each a chain of records: a base
// (the whole state) at its start, then the saves after it, each a record of
// the state's fields that changed since the file's previous record (a
// delta). A record begins with a header line (a sequence number, its
// base's, the payload's length, the digests of the last two public copies
// of the state, a CRC over all of it); a load replays each file's chain up
// to its last whole record and takes the file whose chain ends with the
// highest sequence number, so a record torn by a crash leaves the record
// before it (or the other file) in force.
//
// A save goes to the file that does not hold the last synced save: it is
// appended to that file's chain with one pwrite and, when it must survive a
// power loss, that file's data is synced (fdatasync); the next synced save
// goes to the other file. A save that is not synced (an agent's process
// group, the wall time while it runs) therefore never writes to the file a
// power loss would fall back to. Compaction is a base written over a file's
// start (its first save after the journal is opened, and whenever the
// deltas since its base outgrow the base or 64 KiB): the same file, never
// the one holding the last synced save, so an interrupted compaction leaves
// that one in force. No save creates, renames or removes a file; what is
// left of an older chain past a new one is never read (its records name
// another base).
//
// A file written by a release before the journal's records (format 1: one
// whole state, the slot) is read as a chain of one base.
//
// working-records/state.json (public) and state.json in the private folder
// are copies for people and tools, written when a step ends; neither is
// read by the engine while a journal exists, and the public one is checked
// against the digests the journal keeps.

const journalMagic = "looprinter-state"

// compactAt is how many bytes of deltas a file's chain takes before its
// next save is a base again: its base's length, at least this.
const compactAt = 64 << 10

// Syncs counts the journal's syncs in this process (the engine's
// benchmarks report it per iteration; its tests hold it to one a step).
var Syncs atomic.Int64

// Journal is an open state journal: one writer, the engine that holds the
// loop's lock (or SaveAlone, when no engine runs).
type Journal struct {
	f    [2]*os.File
	seq  uint64
	last int       // the file of the last synced save (or the newest found at open)
	pubs [2]string // digests of the last two public copies written

	// Each file's chain as this journal wrote it: where its next record
	// goes (0: its next save is a base), its base's sequence number and
	// length, the bytes of deltas after it, and the fields changed since
	// its last record.
	end     [2]int64
	base    [2]uint64
	baseLen [2]int
	deltas  [2]int
	dirty   [2]map[string]bool
	// vals are the fields as last saved (nil after a save of a whole
	// payload, Write: the next save to each file is a base).
	vals map[string][]byte

	dropped string
}

// OpenJournal opens (making them when missing) the two files in priv, the
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
		// The files' names reach the disk once; later saves change no name.
		if err := guard.SyncDir(priv); err != nil {
			j.Close()
			return nil, err
		}
	}
	if s, i, ok := ReadJournal(priv); ok {
		j.seq, j.last, j.pubs, j.dropped = s.Seq, i, s.pubs, s.Dropped
		// The newest file may have been written without a sync by an
		// engine that died: sync it before the other file is overwritten.
		fdatasync(j.f[i])
	}
	return j, nil
}

// Close closes the journal's files.
func (j *Journal) Close() {
	for i, f := range j.f {
		if f != nil {
			f.Close()
			j.f[i] = nil
		}
	}
}

// Last is the file (0 or 1) of the last synced save, or of the newest
// found when the journal was opened.
func (j *Journal) Last() int { return j.last }

// Dropped says what the load at open left out of the newest state because
// it did not check out (a record whose CRC does not match), or "".
func (j *Journal) Dropped() string { return j.dropped }

// Write saves payload, the whole state, as the newest state: a base. pub
// is the public copy about to be written after it (nil when this save
// writes none); durable syncs the file's data before Write returns.
func (j *Journal) Write(payload, pub []byte, durable bool) error {
	j.vals = nil
	i := 1 - j.last
	j.end[1-i] = 0 // its chain was not told this state's fields
	return j.put(i, true, payload, pub, durable)
}

// Field is one member of the state's JSON object: its key, its value as
// compact JSON (nil when the state leaves it out) and, once SaveFields has
// made it for a public copy, its value indented as that copy shows it.
type Field struct {
	Key      string
	Value    []byte
	Indented []byte
}

// SaveFields saves the state given as its fields, every one in order, as
// the newest state: a delta of the fields changed since the last record
// of the file it goes to, or a base. pub and durable are Write's.
func (j *Journal) SaveFields(fields []Field, pub []byte, durable bool) error {
	if j.vals == nil {
		j.vals = make(map[string][]byte, len(fields))
		j.end = [2]int64{}
	}
	for _, f := range fields {
		old, ok := j.vals[f.Key]
		if !ok || (old == nil) != (f.Value == nil) || !bytes.Equal(old, f.Value) {
			j.vals[f.Key] = f.Value
			for k := range j.dirty {
				if j.dirty[k] == nil {
					j.dirty[k] = map[string]bool{}
				}
				j.dirty[k][f.Key] = true
			}
		}
	}
	i := 1 - j.last
	if j.end[i] == 0 || j.deltas[i] > max(j.baseLen[i], compactAt) {
		return j.put(i, true, compact(fields), pub, durable)
	}
	buf := make([]byte, 0, 256)
	buf = append(buf, '{')
	for _, f := range fields {
		if !j.dirty[i][f.Key] {
			continue
		}
		if len(buf) > 1 {
			buf = append(buf, ',')
		}
		buf = appendKey(buf, f.Key)
		if f.Value == nil {
			buf = append(buf, "null"...)
		} else {
			buf = append(buf, f.Value...)
		}
	}
	return j.put(i, false, append(buf, '}'), pub, durable)
}

// put writes payload to file i: a base over its start, or a delta after
// its chain's last record.
func (j *Journal) put(i int, base bool, payload, pub []byte, durable bool) error {
	pubs := j.pubs
	if pub != nil {
		sum := sha256.Sum256(pub)
		pubs = [2]string{hex.EncodeToString(sum[:]), j.pubs[0]}
	}
	seq, off := j.seq+1, j.end[i]
	b := j.base[i]
	if base {
		b, off = seq, 0
	}
	buf := encodeRecord(seq, b, pubs, payload)
	if _, err := j.f[i].WriteAt(buf, off); err != nil {
		j.end[i] = 0 // its chain may end in a part of this record
		return err
	}
	if base {
		j.base[i], j.baseLen[i], j.deltas[i] = seq, len(buf), 0
	} else {
		j.deltas[i] += len(buf)
	}
	j.end[i] = off + int64(len(buf))
	clear(j.dirty[i])
	if durable {
		if err := fdatasync(j.f[i]); err != nil {
			return err
		}
		Syncs.Add(1)
		j.last = i
	}
	j.seq = seq
	j.pubs = pubs
	return nil
}

// compact is fields as one JSON object, as json.Marshal writes a struct.
func compact(fields []Field) []byte {
	n := 2
	for _, f := range fields {
		n += len(f.Key) + len(f.Value) + 4
	}
	buf := make([]byte, 0, n)
	buf = append(buf, '{')
	for _, f := range fields {
		if f.Value == nil {
			continue
		}
		if len(buf) > 1 {
			buf = append(buf, ',')
		}
		buf = append(appendKey(buf, f.Key), f.Value...)
	}
	return append(buf, '}')
}

// indented is fields as one JSON object indented as Indented does it,
// each field's indented value made once (and kept in fields) when missing.
func indented(fields []Field) []byte {
	n := 4
	for i := range fields {
		f := &fields[i]
		if f.Value != nil && f.Indented == nil {
			var b bytes.Buffer
			json.Indent(&b, f.Value, "  ", "  ")
			f.Indented = b.Bytes()
		}
		n += len(f.Key) + len(f.Indented) + 8
	}
	buf := make([]byte, 0, n)
	buf = append(buf, '{')
	for _, f := range fields {
		if f.Value == nil {
			continue
		}
		if len(buf) > 1 {
			buf = append(buf, ',')
		}
		buf = append(buf, "\n  "...)
		buf = append(appendKey(buf, f.Key), ' ')
		buf = append(buf, f.Indented...)
	}
	if len(buf) == 1 {
		return append(buf, "}\n"...)
	}
	return append(buf, "\n}\n"...)
}

// appendKey appends key as a JSON string and a colon.
func appendKey(buf []byte, key string) []byte {
	for i := 0; i < len(key); i++ {
		if c := key[i]; c < 0x20 || c >= 0x80 || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return append(append(buf, keyJSON(key)...), ':')
		}
	}
	buf = append(buf, '"')
	buf = append(buf, key...)
	return append(buf, '"', ':')
}

// keyJSON is key as a JSON string: quoted as it is when nothing in it
// needs escaping (a state's keys), else as json.Marshal writes it.
func keyJSON(key string) []byte {
	for i := 0; i < len(key); i++ {
		if c := key[i]; c < 0x20 || c >= 0x80 || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			b, _ := json.Marshal(key)
			return b
		}
	}
	return []byte(`"` + key + `"`)
}

// Slot is the newest state of one of the journal's files: the sequence
// number of its chain's last whole record and the state saved then.
type Slot struct {
	Seq     uint64
	Payload []byte
	pubs    [2]string
	// Dropped says what of the newer saves did not check out and was
	// left out, or "".
	Dropped string
	dropSeq uint64 // the save that did not check out
}

// encodeRecord is a record of the journal (format 2): a base when base is
// seq, else a delta of the chain of that base.
func encodeRecord(seq, base uint64, pubs [2]string, payload []byte) []byte {
	head := fmt.Sprintf("%s 2 %d %d %d %s %s", journalMagic, seq, base, len(payload), orDash(pubs[0]), orDash(pubs[1]))
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

// record is one decoded record: a slot of format 1 (a base), or one of
// format 2.
type record struct {
	seq, base uint64
	payload   []byte
	pubs      [2]string
	size      int  // header and payload
	v1        bool // a slot of format 1, a chain of its own
}

// Why decodeRecord refused a record.
const (
	recOK      = iota
	recNone    // no record there: the end of a chain, a torn header, zeros, an older chain's bytes
	recTorn    // a header whose payload runs past the file's end
	recCorrupt // a whole record whose CRC does not match
)

// decodeRecord reads the record at the start of b. For recCorrupt, the
// header's numbers are in r.
func decodeRecord(b []byte) (r record, why int) {
	nl := bytes.IndexByte(b, '\n')
	if nl < 0 || nl > 512 {
		return r, recNone
	}
	f := strings.Fields(string(b[:nl]))
	var nums []string
	switch {
	case len(f) == 7 && f[0] == journalMagic && f[1] == "1":
		nums, r.v1 = []string{f[2], f[2], f[3]}, true
	case len(f) == 8 && f[0] == journalMagic && f[1] == "2":
		nums = f[2:5]
	default:
		return r, recNone
	}
	seq, err1 := strconv.ParseUint(nums[0], 10, 64)
	base, err2 := strconv.ParseUint(nums[1], 10, 64)
	n, err3 := strconv.Atoi(nums[2])
	want, err4 := strconv.ParseUint(f[len(f)-1], 16, 32)
	if err1 != nil || err2 != nil || err3 != nil || err4 != nil || n < 0 || base > seq {
		return r, recNone
	}
	r.seq, r.base = seq, base
	if nl+1+n > len(b) {
		return r, recTorn
	}
	payload := b[nl+1 : nl+1+n]
	sum := crc32.NewIEEE()
	sum.Write([]byte(strings.Join(f[:len(f)-1], " ")))
	sum.Write(payload)
	if uint64(sum.Sum32()) != want {
		return r, recCorrupt
	}
	r.payload, r.size = payload, nl+1+n
	for k := range r.pubs {
		if p := f[len(f)-3+k]; p != "-" {
			r.pubs[k] = p
		}
	}
	return r, recOK
}

// decodeSlot reads a journal file: the state at the end of its chain; ok
// is false when it holds no whole base (a torn or stale write, a file
// never written).
func decodeSlot(b []byte) (s Slot, ok bool) {
	r, why := decodeRecord(b)
	if why != recOK || r.base != r.seq {
		return s, false
	}
	s.Seq, s.Payload, s.pubs = r.seq, r.payload, r.pubs
	var obj *members
	for off := r.size; off < len(b) && !r.v1; {
		d, why := decodeRecord(b[off:])
		if d.base != r.base || d.seq <= s.Seq {
			break // the end of the chain, or an older one's bytes
		}
		if why == recOK && obj == nil {
			var err error
			if obj, err = parseMembers(s.Payload); err != nil {
				why = recCorrupt
			}
		}
		if why == recOK && obj.apply(d.payload) != nil {
			why = recCorrupt
		}
		if why != recOK {
			if why == recCorrupt {
				s.Dropped = fmt.Sprintf("save %d (byte %d of the file) did not check out (its CRC or its contents: the file was damaged, or a power loss cut its write short): it and anything after it were left out, and the state is save %d's", d.seq, off, s.Seq)
				s.dropSeq = d.seq
			}
			break
		}
		s.Seq, s.pubs = d.seq, d.pubs
		off += d.size
	}
	if obj != nil {
		s.Payload = obj.compact()
	}
	return s, true
}

// members is a JSON object's members in order.
type members struct {
	keys []string
	vals map[string]json.RawMessage
}

func parseMembers(obj []byte) (*members, error) {
	m := &members{vals: map[string]json.RawMessage{}}
	return m, m.apply(obj)
}

// apply sets the members of the JSON object delta in m; a member whose
// value is null is removed (a state's field left out: decoding null or
// nothing into it is the same).
func (m *members) apply(delta []byte) error {
	dec := json.NewDecoder(bytes.NewReader(delta))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return fmt.Errorf("not a JSON object")
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return err
		}
		k, _ := t.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return err
		}
		if _, had := m.vals[k]; !had {
			m.keys = append(m.keys, k)
		}
		if string(v) == "null" {
			v = nil
		}
		m.vals[k] = v
	}
	if t, err := dec.Token(); err != nil || t != json.Delim('}') {
		return fmt.Errorf("not a JSON object")
	}
	return nil
}

func (m *members) compact() []byte {
	fields := make([]Field, len(m.keys))
	for i, k := range m.keys {
		fields[i] = Field{Key: k, Value: m.vals[k]}
	}
	return compact(fields)
}

// ReadJournal returns the newest state of priv's journal and the index of
// the file it is in; ok is false when neither file holds one.
func ReadJournal(priv string) (best Slot, idx int, ok bool) {
	var dropped []Slot
	for i := 0; i < 2; i++ {
		data, err := os.ReadFile(loopdir.Private(priv).Journal(i))
		if err != nil {
			continue
		}
		s, good := decodeSlot(data)
		if good && s.Dropped != "" {
			s.Dropped = loopdir.Private(priv).Journal(i) + ": " + s.Dropped
			dropped = append(dropped, s)
		}
		if good && (!ok || s.Seq > best.Seq) {
			best, idx, ok = s, i, true
		}
	}
	best.Dropped = ""
	for _, d := range dropped {
		if d.dropSeq > best.Seq {
			best.Dropped = d.Dropped
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
