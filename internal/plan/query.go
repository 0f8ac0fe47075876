package plan

import "strings"

// Collect returns the nodes of component under root (root included), in
// document order.
func Collect(root *Node, component string) []*Node {
	var out []*Node
	root.Walk(func(n *Node) bool {
		if n.Component == component {
			out = append(out, n)
		}
		return true
	})
	return out
}

// Sections returns the plan's sections in document order: every <Section>
// that is a child of a <Screen>, directly or inside its <Content>.
func Sections(root *Node) []*Node {
	var out []*Node
	for _, s := range Collect(root, "Screen") {
		out = append(out, ScreenSections(s)...)
	}
	return out
}

// ScreenSections returns the sections of one screen in document order,
// direct children and children of its <Content> elements.
func ScreenSections(screen *Node) []*Node {
	var out []*Node
	for _, c := range screen.Children {
		switch c.Component {
		case "Section":
			out = append(out, c)
		case "Content":
			out = append(out, childrenOf(c, "Section")...)
		}
	}
	return out
}

// Theme returns the root's <Theme> child, nil when there is none.
func Theme(root *Node) *Node {
	if root == nil {
		return nil
	}
	for _, c := range root.Children {
		if c.Component == "Theme" {
			return c
		}
	}
	return nil
}

// StepRef is one entry of an orchestration plan's walk: a <Step>, <Human>
// or <Stop>, and the <Phase> it is in (nil at the top level).
type StepRef struct {
	Node  *Node
	Phase *Node
}

// Steps walks an orchestration plan in document order and returns its
// <Step>, <Human> and <Stop> elements, top-level ones and those inside a
// <Phase>, each with its phase. The engine runs them in this order.
func Steps(root *Node) []StepRef {
	var out []StepRef
	if root == nil {
		return nil
	}
	for _, c := range root.Children {
		switch c.Component {
		case "Step", "Human", "Stop":
			out = append(out, StepRef{Node: c})
		case "Phase":
			for _, s := range c.Children {
				switch s.Component {
				case "Step", "Human", "Stop":
					out = append(out, StepRef{Node: s, Phase: c})
				}
			}
		}
	}
	return out
}

// Persona returns the persona declared by n's <Persona> children (its
// text prop, else its text), joined by blank lines; "" when none. Call it
// with the root for the plan-wide persona and with a Step for the step's.
func Persona(n *Node) string {
	var parts []string
	for _, c := range childrenOf(n, "Persona") {
		t := c.Str("text")
		if t == "" {
			t = c.Text
		}
		if t = strings.TrimSpace(t); t != "" {
			parts = append(parts, t)
		}
	}
	return strings.Join(parts, "\n\n")
}

// Constraints returns the constraints declared by n's <Constraints>
// children, one per line, with list bullets (-, *, •) removed. Call it with
// the root for plan-wide constraints and with a Step for the step's.
func Constraints(n *Node) []string {
	var out []string
	for _, c := range childrenOf(n, "Constraints") {
		for _, t := range []string{c.Str("text"), c.Text} {
			for _, line := range strings.Split(t, "\n") {
				line = strings.TrimSpace(line)
				line = strings.TrimSpace(strings.TrimLeft(line, "-*•"))
				if line != "" {
					out = append(out, line)
				}
			}
		}
	}
	return out
}

// Path returns the chain of nodes from root down to target, both included;
// nil when target is not in root's tree. Use it to see a section's screen,
// or markers an enclosing element sets.
func Path(root, target *Node) []*Node {
	if root == nil {
		return nil
	}
	if root == target {
		return []*Node{root}
	}
	for _, c := range root.Children {
		if p := Path(c, target); p != nil {
			return append([]*Node{root}, p...)
		}
	}
	return nil
}

// childrenOf returns n's direct children of component.
func childrenOf(n *Node, component string) []*Node {
	if n == nil {
		return nil
	}
	var out []*Node
	for _, c := range n.Children {
		if c.Component == component {
			out = append(out, c)
		}
	}
	return out
}

// hasDescendant reports whether n has a descendant of component.
func hasDescendant(n *Node, component string) bool {
	found := false
	for _, c := range n.Children {
		c.Walk(func(d *Node) bool {
			if d.Component == component {
				found = true
			}
			return !found
		})
		if found {
			return true
		}
	}
	return false
}
