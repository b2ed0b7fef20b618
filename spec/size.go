package spec

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// DefaultPrivateBudget is private_budget when the loop file does not set
// it.
const DefaultPrivateBudget = "1GiB"

// ParseSize reads a size: a number of bytes, or a number with a unit, B,
// KB, MB, GB, TB (powers of 1000), KiB, MiB, GiB, TiB or K, M, G, T
// (powers of 1024); it must be positive.
func ParseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	i := strings.IndexFunc(t, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	num, unit := t, ""
	if i >= 0 {
		num, unit = t[:i], strings.TrimSpace(t[i:])
	}
	mult := map[string]float64{"": 1, "b": 1, "k": 1 << 10, "kib": 1 << 10, "kb": 1e3, "m": 1 << 20, "mib": 1 << 20, "mb": 1e6,
		"g": 1 << 30, "gib": 1 << 30, "gb": 1e9, "t": 1 << 40, "tib": 1 << 40, "tb": 1e12}[strings.ToLower(unit)]
	n, err := strconv.ParseFloat(num, 64)
	if err != nil || mult == 0 || n <= 0 || n*mult < 1 || n*mult > math.MaxInt64/2 {
		return 0, fmt.Errorf("%q is not a size (write it like 1GiB, 500MB or 2G)", s)
	}
	return int64(n * mult), nil
}

// PrivateBudgetBytes is private_budget in bytes (the default's when it
// does not read).
func (l *Loop) PrivateBudgetBytes() int64 {
	if n, err := ParseSize(l.PrivateBudget); err == nil {
		return n
	}
	n, _ := ParseSize(DefaultPrivateBudget)
	return n
}
