package theme

// RadiusStop is a named corner radius.
type RadiusStop struct {
	Name  string
	Value string // a CSS length
}

// RadiusStops returns the five radius stops, squarest first.
func RadiusStops() []RadiusStop {
	return []RadiusStop{
		{"none", "0rem"},
		{"subtle", "0.25rem"},
		{"moderate", "0.5rem"},
		{"rounded", "0.875rem"},
		{"pill", "1.5rem"},
	}
}

// LookupRadius finds a radius stop by name.
func LookupRadius(name string) (RadiusStop, error) {
	for _, r := range RadiusStops() {
		if sameName(r.Name, name) {
			return r, nil
		}
	}
	return RadiusStop{}, unknown("radius", name, names(RadiusStops(), func(r RadiusStop) string { return r.Name }))
}
