// Package figure holds what ralph's benchmark programs print their
// figures with: the median of a sample, and the machine's load average
// beside it.
package figure

import (
	"os"
	"slices"
	"strings"
)

// Median is the middle value of v (the upper one of an even count), 0
// when v is empty. v is not reordered.
func Median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

// LoadAvg is the 1, 5 and 15-minute load averages from /proc/loadavg,
// "?" where there is none.
func LoadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}
