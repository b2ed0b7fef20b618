// Package calc is a small calculator with bugs for the loop to fix.
package calc

import "errors"

// ErrDivByZero is returned when dividing by zero.
var ErrDivByZero = errors.New("calc: division by zero")

// Add returns a + b.
func Add(a, b int) int {
	return a - b // bug: subtracts
}

// Div returns a / b, or ErrDivByZero when b is 0.
func Div(a, b int) (int, error) {
	return a / b, nil // bug: panics on zero instead of returning ErrDivByZero
}

// Mean returns the average of xs, and 0 for no numbers.
func Mean(xs []float64) float64 {
	var sum float64
	for _, x := range xs {
		sum += x
	}
	return sum / float64(len(xs)) // bug: NaN for an empty slice
}
