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
		return r.walkParts(v, v.NumField(), depth, func(i int) bool { return v.Type().Field(i).IsExported() }, v.Field, copyOf)
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
		return r.walkParts(v, v.Len(), depth, nil, v.Index, func(v reflect.Value) reflect.Value {
			out := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
			reflect.Copy(out, v)
			return out
		})
	case reflect.Array:
		return r.walkParts(v, v.Len(), depth, nil, v.Index, copyOf)
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

// walkParts redacts the n parts of a struct, slice or array (part(i); only
// those keep(i) allows, all when keep is nil). The value is copied, with
// fresh, only when a part changed, so values with nothing to redact are
// returned as they are.
func (r *Redactor) walkParts(v reflect.Value, n, depth int, keep func(int) bool, part func(int) reflect.Value, fresh func(reflect.Value) reflect.Value) (reflect.Value, bool) {
	var out reflect.Value
	for i := 0; i < n; i++ {
		if keep != nil && !keep(i) {
			continue
		}
		e, changed := r.walk(part(i), depth+1)
		if !changed {
			continue
		}
		if !out.IsValid() {
			out = fresh(v)
		}
		if v.Kind() == reflect.Struct {
			out.Field(i).Set(e)
		} else {
			out.Index(i).Set(e)
		}
	}
	if out.IsValid() {
		return out, true
	}
	return v, false
}

// copyOf returns an addressable copy of a struct or array value.
func copyOf(v reflect.Value) reflect.Value {
	out := reflect.New(v.Type()).Elem()
	out.Set(v)
	return out
}
