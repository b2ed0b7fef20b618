package loop

import (
	"encoding/binary"
	"encoding/json"
	"hash/maphash"
	"math"
	"reflect"
	"strings"
	"time"

	"github.com/looprinter/looprinter/redact"
	"github.com/looprinter/looprinter/statefile"
)

// The state is saved field by field (statefile.SaveFields): each member of
// its JSON object is encoded, redacted and indented only when its value
// changed since the last save, which a digest of the value tells (a walk
// of it, a fraction of encoding it); the journal gets only what changed.

// stateField is a member of the state's JSON object: its key, where it is
// in State (a field of the embedded rollbacks.Marks is promoted, as
// encoding/json does), and its tag's options.
type stateField struct {
	key                 string
	index               []int
	omitEmpty, omitZero bool
}

// stateFields are State's members in the order json.Marshal writes them;
// stateFieldsOK is false when State has a field this encoder does not
// encode as json.Marshal does (then a save encodes the whole state).
var stateFields, stateFieldsOK = fieldsOf(reflect.TypeFor[State](), nil)

func fieldsOf(t reflect.Type, at []int) (out []stateField, ok bool) {
	ok = true
	seen := map[string]bool{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" || !f.IsExported() && !f.Anonymous {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		index := append(append([]int(nil), at...), i)
		if f.Anonymous && name == "" {
			if f.Type.Kind() != reflect.Struct {
				return nil, false
			}
			inner, good := fieldsOf(f.Type, index)
			for _, g := range inner {
				if seen[g.key] {
					return nil, false
				}
				seen[g.key] = true
			}
			out, ok = append(out, inner...), ok && good
			continue
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		sf := stateField{key: name, index: index}
		for o := range strings.SplitSeq(opts, ",") {
			switch o {
			case "":
			case "omitempty":
				sf.omitEmpty = true
			case "omitzero":
				sf.omitZero = true
			default:
				ok = false
			}
		}
		if seen[name] {
			return nil, false
		}
		seen[name] = true
		out = append(out, sf)
	}
	return out, ok
}

// stateEncoder keeps each member of the state as last encoded, with its
// value's digest; a redactor other than the last one's encodes them all.
type stateEncoder struct {
	red    *redact.Redactor
	seed   maphash.Seed
	fields []statefile.Field
	sums   []uint64
	known  []bool
}

// encode is st's members, as json.Marshal(redact.Value(red, st)) would
// write them; the slice is the encoder's, kept for the next save.
func (c *stateEncoder) encode(st *State, red *redact.Redactor) ([]statefile.Field, error) {
	if c.fields == nil || c.red != red {
		c.red, c.seed = red, maphash.MakeSeed()
		c.fields = make([]statefile.Field, len(stateFields))
		c.sums, c.known = make([]uint64, len(stateFields)), make([]bool, len(stateFields))
	}
	v := reflect.ValueOf(st).Elem()
	for i, f := range stateFields {
		fv := v.FieldByIndex(f.index)
		var h maphash.Hash
		h.SetSeed(c.seed)
		ok := hashValue(&h, c.seed, fv, 0)
		sum := h.Sum64()
		if ok && c.known[i] && sum == c.sums[i] {
			continue
		}
		val, err := encodeField(fv, f, red)
		if err != nil {
			c.fields = nil
			return nil, err
		}
		c.fields[i] = statefile.Field{Key: f.key, Value: val}
		c.sums[i], c.known[i] = sum, ok
	}
	return c.fields, nil
}

// encodeField is one member's value as JSON, redacted; nil when its tag
// leaves it out.
func encodeField(fv reflect.Value, f stateField, red *redact.Redactor) ([]byte, error) {
	if f.omitEmpty && isEmptyValue(fv) || f.omitZero && isZeroValue(fv) {
		return nil, nil
	}
	// Through a pointer, as a field of *State is marshalled (its methods
	// with a pointer receiver count).
	return json.Marshal(redact.Value(red, fv.Addr().Interface()))
}

// isEmptyValue is encoding/json's omitempty.
func isEmptyValue(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Interface, reflect.Pointer:
		return v.IsZero()
	}
	return false
}

// isZeroValue is encoding/json's omitzero.
func isZeroValue(v reflect.Value) bool {
	if z, ok := v.Interface().(interface{ IsZero() bool }); ok {
		if v.Kind() == reflect.Pointer && v.IsNil() {
			return true
		}
		return z.IsZero()
	}
	return v.IsZero()
}

var timeType = reflect.TypeFor[time.Time]()

// hashValue writes v's contents to h; false when it cannot tell them
// (too deep, a kind JSON does not write), and the member is encoded at
// every save.
func hashValue(h *maphash.Hash, seed maphash.Seed, v reflect.Value, depth int) bool {
	if depth > 32 {
		return false
	}
	word := func(x uint64) { h.Write(binary.LittleEndian.AppendUint64(make([]byte, 0, 8), x)) }
	switch v.Kind() {
	case reflect.Bool:
		if v.Bool() {
			h.WriteByte(1)
		} else {
			h.WriteByte(0)
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		word(uint64(v.Int()))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		word(v.Uint())
	case reflect.Float32, reflect.Float64:
		word(math.Float64bits(v.Float()))
	case reflect.String:
		word(uint64(v.Len()))
		h.WriteString(v.String())
	case reflect.Slice:
		if v.IsNil() {
			h.WriteByte(0)
			return true
		}
		h.WriteByte(1)
		fallthrough
	case reflect.Array:
		word(uint64(v.Len()))
		for i := 0; i < v.Len(); i++ {
			if !hashValue(h, seed, v.Index(i), depth+1) {
				return false
			}
		}
	case reflect.Map:
		if v.IsNil() {
			h.WriteByte(0)
			return true
		}
		word(uint64(v.Len()) + 1)
		var sum uint64 // the entries in any order
		var k, val reflect.Value
		if v.CanInterface() { // one key and one value reused, not one made an entry
			k, val = reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		}
		for it := v.MapRange(); it.Next(); {
			if k.IsValid() {
				k.SetIterKey(it)
				val.SetIterValue(it)
			} else {
				k, val = it.Key(), it.Value()
			}
			var e maphash.Hash
			e.SetSeed(seed)
			if !hashValue(&e, seed, k, depth+1) || !hashValue(&e, seed, val, depth+1) {
				return false
			}
			sum += e.Sum64()
			if !v.CanInterface() {
				k, val = reflect.Value{}, reflect.Value{}
			}
		}
		word(sum)
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			h.WriteByte(0)
			return true
		}
		h.WriteByte(1)
		if v.Kind() == reflect.Interface {
			h.WriteString(v.Elem().Type().String())
		}
		return hashValue(h, seed, v.Elem(), depth+1)
	case reflect.Struct:
		if v.Type() == timeType && v.CanInterface() {
			// Its instant and its zone, which is what its JSON says (not
			// its location's tables).
			t := v.Interface().(time.Time)
			name, off := t.Zone()
			word(uint64(t.Unix()))
			word(uint64(t.Nanosecond()))
			word(uint64(off))
			h.WriteString(name)
			return true
		}
		for i := 0; i < v.NumField(); i++ {
			if !hashValue(h, seed, v.Field(i), depth+1) {
				return false
			}
		}
	default:
		return false
	}
	return true
}
