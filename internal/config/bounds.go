package config

import (
	"fmt"
	"math"
	"time"
)

// Bound is one limit as a person set it, named as they wrote it (a
// ralph.toml key or a flag), and the least it may be.
type Bound struct {
	Name  string
	Value float64
	Min   float64
}

// Int, Float and Dur make Bounds that may not be negative; zero means the
// default or no limit, as each setting's help says.
func Int(name string, v int) Bound           { return Bound{Name: name, Value: float64(v)} }
func Float(name string, v float64) Bound     { return Bound{Name: name, Value: v} }
func Dur(name string, d time.Duration) Bound { return Bound{Name: name, Value: d.Seconds()} }
func AtLeastOne(name string, v int) Bound    { return Bound{Name: name, Value: float64(v), Min: 1} }

// CheckBounds is the one check of limits, for ralph.toml and flags alike:
// a number that is not a number, infinite, or under its least is refused,
// naming the setting.
func CheckBounds(bs ...Bound) error {
	for _, b := range bs {
		switch {
		case math.IsNaN(b.Value) || math.IsInf(b.Value, 0):
			return fmt.Errorf("%s must be a finite number", b.Name)
		case b.Value < b.Min && b.Min == 0:
			return fmt.Errorf("%s must not be negative (0 means the default or no limit)", b.Name)
		case b.Value < b.Min:
			return fmt.Errorf("%s must be at least %v", b.Name, b.Min)
		}
	}
	return nil
}
