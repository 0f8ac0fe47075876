package serve

import "strings"

// diffLine is one line of a text diff: Op is ' ', '-' or '+'.
type diffLine struct {
	Op   string
	Text string
	// Skip, when set, stands for that many unchanged lines left out.
	Skip int
}

// maxDiffCells caps the work of the line diff: past it, the diff shows
// every old line removed and every new line added.
const maxDiffCells = 4_000_000

// context is how many unchanged lines are kept around a change.
const diffContext = 3

// lineDiff returns the line diff from a to b, with unchanged runs longer
// than the context folded.
func lineDiff(a, b string) []diffLine { return fold(fullDiff(a, b)) }

// fullDiff returns every line of the diff from a to b: the unchanged
// lines and the removed lines are a's, the unchanged and added ones b's.
func fullDiff(a, b string) []diffLine {
	x, y := splitLines(a), splitLines(b)
	// Trim the common head and tail, which most edits leave long.
	head := 0
	for head < len(x) && head < len(y) && x[head] == y[head] {
		head++
	}
	tail := 0
	for tail < len(x)-head && tail < len(y)-head && x[len(x)-1-tail] == y[len(y)-1-tail] {
		tail++
	}
	var all []diffLine
	for _, l := range x[:head] {
		all = append(all, diffLine{Op: " ", Text: l})
	}
	all = append(all, lcsDiff(x[head:len(x)-tail], y[head:len(y)-tail])...)
	for _, l := range x[len(x)-tail:] {
		all = append(all, diffLine{Op: " ", Text: l})
	}
	return all
}

func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

func lcsDiff(x, y []string) []diffLine {
	var out []diffLine
	if len(x)*len(y) > maxDiffCells {
		for _, l := range x {
			out = append(out, diffLine{Op: "-", Text: l})
		}
		for _, l := range y {
			out = append(out, diffLine{Op: "+", Text: l})
		}
		return out
	}
	// lcs[i][j] is the LCS length of x[i:] and y[j:].
	w := len(y) + 1
	lcs := make([]int32, (len(x)+1)*w)
	for i := len(x) - 1; i >= 0; i-- {
		for j := len(y) - 1; j >= 0; j-- {
			if x[i] == y[j] {
				lcs[i*w+j] = lcs[(i+1)*w+j+1] + 1
			} else {
				lcs[i*w+j] = max(lcs[(i+1)*w+j], lcs[i*w+j+1])
			}
		}
	}
	i, j := 0, 0
	for i < len(x) && j < len(y) {
		switch {
		case x[i] == y[j]:
			out = append(out, diffLine{Op: " ", Text: x[i]})
			i, j = i+1, j+1
		case lcs[(i+1)*w+j] >= lcs[i*w+j+1]:
			out = append(out, diffLine{Op: "-", Text: x[i]})
			i++
		default:
			out = append(out, diffLine{Op: "+", Text: y[j]})
			j++
		}
	}
	for ; i < len(x); i++ {
		out = append(out, diffLine{Op: "-", Text: x[i]})
	}
	for ; j < len(y); j++ {
		out = append(out, diffLine{Op: "+", Text: y[j]})
	}
	return out
}

// fold replaces unchanged runs far from any change with a Skip line.
func fold(lines []diffLine) []diffLine {
	keep := make([]bool, len(lines))
	for i, l := range lines {
		if l.Op != " " {
			for k := max(0, i-diffContext); k <= min(len(lines)-1, i+diffContext); k++ {
				keep[k] = true
			}
		}
	}
	var out []diffLine
	skipped := 0
	for i, l := range lines {
		if keep[i] {
			if skipped > 0 {
				out = append(out, diffLine{Skip: skipped})
				skipped = 0
			}
			out = append(out, l)
			continue
		}
		skipped++
	}
	if skipped > 0 {
		out = append(out, diffLine{Skip: skipped})
	}
	return out
}
