package calc

import (
	"errors"
	"testing"
)

func TestAdd(t *testing.T) {
	if got := Add(2, 3); got != 5 {
		t.Fatalf("Add(2, 3) = %d, want 5", got)
	}
}

func TestDiv(t *testing.T) {
	if got, err := Div(7, 2); got != 3 || err != nil {
		t.Fatalf("Div(7, 2) = %d, %v; want 3, nil", got, err)
	}
	if _, err := Div(1, 0); !errors.Is(err, ErrDivByZero) {
		t.Fatalf("Div(1, 0) error = %v, want ErrDivByZero", err)
	}
}

func TestMean(t *testing.T) {
	if got := Mean([]float64{1, 2, 3}); got != 2 {
		t.Fatalf("Mean(1, 2, 3) = %v, want 2", got)
	}
	if got := Mean(nil); got != 0 {
		t.Fatalf("Mean(nil) = %v, want 0", got)
	}
}
