package redact

import (
	"encoding/json"
	"reflect"
)

var typeRawJSON = reflect.TypeOf(json.RawMessage(nil))

// Value returns a copy of v with every string in it redacted: struct
// fields, pointers, slices, maps (keys and values), json.RawMessage. It
// redacts before a value is marshalled, so a secret holding a quote or a
// backslash is matched as it is, not in its escaped form. v itself is not
// changed; parts without a secret are shared with it. Unexported fields are
// copied as they are.
func Value[T any](r *Redactor, v T) T {
	if r == nil {
		return v
	}
	rv := reflect.ValueOf(&v).Elem()
	if out, changed := r.walk(rv, 0); changed {
		return out.Interface().(T)
	}
	return v
}

// walk returns the redacted copy of v and whether anything changed.
func (r *Redactor) walk(v reflect.Value, depth int) (reflect.Value, bool) {
	if depth > 64 || !v.IsValid() {
		return v, false
	}
	switch v.Kind() {
	case reflect.String:
		s := v.String()
		red := r.String(s)
		if red == s {
			return v, false
		}
		out := reflect.New(v.Type()).Elem()
		out.SetString(red)
		return out, true
	case reflect.Pointer:
		if v.IsNil() {
			return v, false
		}
		e, changed := r.walk(v.Elem(), depth+1)
		if !changed {
			return v, false
		}
		p := reflect.New(v.Type().Elem())
		p.Elem().Set(e)
		return p, true
	case reflect.Interface:
		if v.IsNil() {
			return v, false
		}
		e, changed := r.walk(v.Elem(), depth+1)
		if !changed {
			return v, false
		}
		out := reflect.New(v.Type()).Elem()
		out.Set(e)
		return out, true
	case reflect.Struct:
		var out reflect.Value
		for i := 0; i < v.NumField(); i++ {
			if !v.Type().Field(i).IsExported() {
				continue
			}
			f, changed := r.walk(v.Field(i), depth+1)
			if !changed {
				continue
			}
			if !out.IsValid() {
				out = reflect.New(v.Type()).Elem()
				out.Set(v)
			}
			out.Field(i).Set(f)
		}
		if out.IsValid() {
			return out, true
		}
		return v, false
	case reflect.Slice:
		if v.IsNil() {
			return v, false
		}
		if v.Type() == typeRawJSON || v.Type().Elem().Kind() == reflect.Uint8 {
			b := v.Bytes()
			red := r.redact(b, true)
			if red == nil {
				return v, false
			}
			out := reflect.MakeSlice(v.Type(), len(red), len(red))
			reflect.Copy(out, reflect.ValueOf(red))
			return out, true
		}
		var out reflect.Value
		for i := 0; i < v.Len(); i++ {
			e, changed := r.walk(v.Index(i), depth+1)
			if !changed {
				continue
			}
			if !out.IsValid() {
				out = reflect.MakeSlice(v.Type(), v.Len(), v.Len())
				reflect.Copy(out, v)
			}
			out.Index(i).Set(e)
		}
		if out.IsValid() {
			return out, true
		}
		return v, false
	case reflect.Array:
		var out reflect.Value
		for i := 0; i < v.Len(); i++ {
			e, changed := r.walk(v.Index(i), depth+1)
			if !changed {
				continue
			}
			if !out.IsValid() {
				out = reflect.New(v.Type()).Elem()
				out.Set(v)
			}
			out.Index(i).Set(e)
		}
		if out.IsValid() {
			return out, true
		}
		return v, false
	case reflect.Map:
		if v.IsNil() {
			return v, false
		}
		changedAny := false
		type kv struct{ k, v reflect.Value }
		var all []kv
		it := v.MapRange()
		for it.Next() {
			k, kc := r.walk(it.Key(), depth+1)
			e, ec := r.walk(it.Value(), depth+1)
			changedAny = changedAny || kc || ec
			all = append(all, kv{k, e})
		}
		if !changedAny {
			return v, false
		}
		out := reflect.MakeMapWithSize(v.Type(), len(all))
		for _, p := range all {
			out.SetMapIndex(p.k, p.v)
		}
		return out, true
	}
	return v, false
}
