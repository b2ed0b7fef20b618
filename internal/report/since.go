package report

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// ParseSince reads the period of `report --since`: a Go duration (90m,
// 12h, 1h30m) or a number of days or weeks (7d, 2w, 1.5d), the two
// joined (1w2d, 1d12h). It must be positive.
func ParseSince(s string) (time.Duration, error) {
	bad := fmt.Errorf("--since %q: want a positive period like 12h, 7d or 2w", s)
	rest := strings.TrimSpace(s)
	var d time.Duration
	for _, u := range []struct {
		suffix string
		unit   time.Duration
	}{{"w", 7 * 24 * time.Hour}, {"d", 24 * time.Hour}} {
		i := strings.Index(rest, u.suffix)
		if i < 0 {
			continue
		}
		n, err := strconv.ParseFloat(rest[:i], 64)
		if err != nil || n < 0 || n > 1e5 {
			return 0, bad
		}
		d += time.Duration(n * float64(u.unit))
		rest = rest[i+1:]
	}
	if rest != "" {
		x, err := time.ParseDuration(rest)
		if err != nil || x < 0 {
			return 0, bad
		}
		d += x
	}
	if d <= 0 {
		return 0, bad
	}
	return d, nil
}
