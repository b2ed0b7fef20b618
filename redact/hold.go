package redact

import "sync"

// held are secrets the engine holds in no environment variable (a forge's
// token, read from gh and removed from the environment): every redactor
// built after Hold redacts them by value, whatever its environment.
var held struct {
	sync.Mutex
	values []literalValue
}

type literalValue struct{ name, value string }

// Hold makes every redactor built from now on (New) redact value as
// [REDACTED:name]. Values shorter than MinValue are ignored, as in New.
func Hold(name, value string) {
	held.Lock()
	defer held.Unlock()
	for _, v := range held.values {
		if v.value == value {
			return
		}
	}
	held.values = append(held.values, literalValue{name, value})
}

// heldValues is a copy of what Hold was given.
func heldValues() []literalValue {
	held.Lock()
	defer held.Unlock()
	return append([]literalValue(nil), held.values...)
}
