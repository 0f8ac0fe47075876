package scope

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ralph-harness/ralph/internal/plan"
)

// flavor is one energy drink of the VIBRANT ENERGY landing page.
type flavor struct{ name, tagline string }

var (
	day = []flavor{
		{"Voltage Citrus", "Sharp, bright, awake."},
		{"Chrome Berry", "Dark fruit, clean finish."},
		{"Static Mango", "Tropical, not sweet."},
		{"Ion Lime", "Tart & electric."},
		{"Surge Cherry", "For the long shift."},
		{"Arc Grape", "Bold, [purple], loud."},
		{"Pulse Peach", "Soft start."},
		{"Flux Cola", "The classic, rewired."},
	}
	night = []flavor{
		{"Moonlit Calm", "Chamomile, low caffeine."},
		{"Deep Rest", "Magnesium, no sugar."},
		{"Midnight Plum", "Slow, dark, late."},
		{"Velvet Dusk", "Lavender, zero caffeine."},
	}
)

const gridFile = "src/sections/FlavorGridSection.tsx"

// grid renders the flavour grid section the way the agent wrote it.
func grid(fs []flavor) []byte {
	var b strings.Builder
	b.WriteString("import { motion } from 'framer-motion'\n\nconst flavors: Flavor[] = [\n")
	for _, f := range fs {
		fmt.Fprintf(&b, "  { name: '%s', tagline: '%s' },\n", f.name, f.tagline)
	}
	b.WriteString(`]

export function FlavorGridSection() {
  return (
    <section className="grid grid-cols-5 gap-6">
      {flavors.map((f) => (
        <motion.article key={f.name}>
          <h3>{f.name}</h3>
          <p>{f.tagline}</p>
        </motion.article>
      ))}
    </section>
  )
}
`)
	return []byte(b.String())
}

// gridPrettier is grid after a formatter pass: double quotes, one property
// per line, a comment, and an extra field on some items.
func gridPrettier(fs []flavor, mood func(flavor) string) []byte {
	var b strings.Builder
	b.WriteString("import { motion } from \"framer-motion\";\n\nconst flavors: Flavor[] = [\n")
	for _, f := range fs {
		fmt.Fprintf(&b, "  {\n    name: %q,\n    tagline: %q,\n", f.name, f.tagline)
		if m := mood(f); m != "" {
			fmt.Fprintf(&b, "    mood: %q, // for the night theme\n", m)
		}
		b.WriteString("  },\n")
	}
	b.WriteString("];\n\nexport function FlavorGridSection() {\n  return <div>{flavors.map((f) => <Card key={f.name} {...f} />)}</div>;\n}\n")
	return []byte(b.String())
}

// gridSplit keeps the day flavours untouched and adds a second array.
func gridSplit(dayFs, nightFs []flavor) []byte {
	var b strings.Builder
	b.WriteString("const flavors: Flavor[] = [\n")
	for _, f := range dayFs {
		fmt.Fprintf(&b, "  { name: '%s', tagline: '%s' },\n", f.name, f.tagline)
	}
	b.WriteString("]\n\nconst nightFlavors = [\n")
	for _, f := range nightFs {
		fmt.Fprintf(&b, "  { name: '%s', tagline: '%s' },\n", f.name, f.tagline)
	}
	b.WriteString("]\n\nexport const FlavorGridSection = () => (\n  <section>\n    {flavors.map((f) => <Card key={f.name} {...f} />)}\n    {nightFlavors.map((f) => <Card key={f.name} night {...f} />)}\n  </section>\n)\n")
	return []byte(b.String())
}

// gridImported moves the data to ./flavors.ts.
func gridImported(fs []flavor) ([]byte, func(string) ([]byte, bool)) {
	src := []byte("import { flavors } from './flavors'\n\nexport function FlavorGridSection() {\n  return <div>{flavors.map((f) => <Card key={f.name} {...f} />)}</div>\n}\n")
	var b strings.Builder
	b.WriteString("export const flavors = [\n")
	for _, f := range fs {
		fmt.Fprintf(&b, "  { name: '%s', tagline: '%s' },\n", f.name, f.tagline)
	}
	b.WriteString("]\n")
	data := []byte(b.String())
	return src, func(spec string) ([]byte, bool) {
		if spec == "./flavors.ts" {
			return data, true
		}
		return nil, false
	}
}

func cat(parts ...[]flavor) []flavor {
	var out []flavor
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

func reversed(fs []flavor) []flavor {
	out := make([]flavor, len(fs))
	for i, f := range fs {
		out[len(fs)-1-i] = f
	}
	return out
}

// converted returns day with the flavours at the given indexes turned into
// night ones: the VIBRANT ENERGY failure.
func converted(idx ...int) []flavor {
	out := append([]flavor(nil), day...)
	for i, j := range idx {
		out[j] = night[i]
	}
	return out
}

const storeFile = "src/sections/StoreSection.tsx"

var storePre = []byte(`export function StoreSection() {
  return <a href="/store">Buy a 12-pack</a>
}
`)

// task3 is the plan of the VIBRANT ENERGY iteration 3: the flavour grid
// gains 2 night drinks and keeps its 8; the store is out of scope.
func task3(now []byte, nowSiblings func(string) ([]byte, bool), store []byte) Input {
	return Input{Targets: []Target{
		{
			Section: Section{Name: "flavors", File: gridFile, Markers: []plan.Marker{
				{Kind: plan.Add, Task: 3, Text: "TASK-3 [ADD]: 2 nighttime drink flavors (Moonlit Calm, Deep Rest)"},
				{Kind: plan.Preserved, Task: 3, Text: "EXISTING 8 flavors PRESERVED — do not remove or convert"},
			}},
			Before: Version{Present: true, Src: grid(day)},
			Now:    Version{Present: now != nil, Src: now, Siblings: nowSiblings},
		},
		{
			Section: Section{Name: "store", File: storeFile, Markers: []plan.Marker{
				{Kind: plan.NoChanges, Task: 3, Text: "NO CHANGES for task-3 — preserve as-is"},
			}},
			Before: Version{Present: true, Src: storePre},
			Now:    Version{Present: store != nil, Src: store},
		},
	}}
}

// verdicts renders findings as "section marker-index status" lines for
// comparison, keeping the messages for failures.
func verdict(fs []Finding, section string, i int) Finding {
	n := 0
	for _, f := range fs {
		if f.Section == section {
			if n == i {
				return f
			}
			n++
		}
	}
	return Finding{}
}

func TestCheckVibrantEnergy(t *testing.T) {
	importedSrc, importedSiblings := gridImported(cat(day, night[:2]))
	tests := []struct {
		name      string
		now       []byte
		siblings  func(string) ([]byte, bool)
		store     []byte
		add, pres Status
		storeWant Status
		addMsg    string // substring of the ADD message
		presMsg   string // substring of the PRESERVED message
	}{
		{
			name: "converted 4 instead of adding 2", now: grid(converted(1, 3, 5, 7)), store: storePre,
			add: Fail, pres: Fail, storeWant: Pass,
			addMsg:  "flavors (src/sections/FlavorGridSection.tsx): expected 10 items (8 + 2), found 8",
			presMsg: `PRESERVED violation: flavors had 8 items, 4 of them changed or gone: "Chrome Berry", "Ion Lime", "Arc Grape", "Flux Cola"`,
		},
		{
			name: "converted 4 and reordered", now: grid(reversed(converted(0, 1, 2, 3))), store: storePre,
			add: Fail, pres: Fail, storeWant: Pass,
			addMsg: "expected 10 items (8 + 2), found 8", presMsg: "4 of them changed or gone",
		},
		{
			name: "converted 2 and added 2: the count is right", now: grid(cat(converted(2, 6)[:8], night[2:4])), store: storePre,
			add: Pass, pres: Fail, storeWant: Pass,
			addMsg: "10 items (8 + 2)", presMsg: `2 of them changed or gone: "Static Mango", "Pulse Peach"`,
		},
		{
			name: "converted 4 and added 2", now: grid(cat(converted(0, 2, 4, 6), night[:2])), store: storePre,
			add: Pass, pres: Fail, storeWant: Pass, presMsg: "4 of them changed or gone",
		},
		{
			name: "removed 4", now: grid(day[:4]), store: storePre,
			add: Fail, pres: Fail, storeWant: Pass,
			addMsg: "expected 10 items (8 + 2), found 4", presMsg: "PRESERVED violation: flavors had 8 items, now has 4 (src/sections/FlavorGridSection.tsx)",
		},
		{
			name: "removed 2 and added 2", now: grid(cat(day[2:], night[:2])), store: storePre,
			add: Fail, pres: Fail, storeWant: Pass,
			addMsg: "found 8", presMsg: `"Voltage Citrus", "Chrome Berry"`,
		},
		{
			name: "section file deleted", now: nil, store: storePre,
			add: Fail, pres: Fail, storeWant: Pass,
			presMsg: "PRESERVED violation: flavors had 8 items, now has 0",
		},
		{
			name: "added 2", now: grid(cat(day, night[:2])), store: storePre,
			add: Pass, pres: Pass, storeWant: Pass, addMsg: "10 items (8 + 2)",
		},
		{
			name: "added 2 and reordered", now: grid(reversed(cat(night[:2], day))), store: storePre,
			add: Pass, pres: Pass, storeWant: Pass,
		},
		{
			name: "added 2 and edited a NO CHANGES section", now: grid(cat(day, night[:2])),
			store: []byte("export function StoreSection() {\n  return <a href=\"/store\">Shop the night range</a>\n}\n"),
			add:   Pass, pres: Pass, storeWant: Warn,
		},
		{
			name: "added 2 after a formatter pass and a new field", now: gridPrettier(cat(day, night[:2]), func(f flavor) string {
				if f.name == "Moonlit Calm" || f.name == "Deep Rest" {
					return "night"
				}
				return "day"
			}), store: storePre,
			add: Pass, pres: Pass, storeWant: Pass,
		},
		{
			name: "added 2 in a second array", now: gridSplit(day, night[:2]), store: storePre,
			add: Pass, pres: Pass, storeWant: Pass,
		},
		{
			name: "added 2 with the data moved to a file", now: importedSrc, siblings: importedSiblings, store: storePre,
			add: Pass, pres: Pass, storeWant: Pass,
		},
		{
			name: "added 3", now: grid(cat(day, night[:3])), store: storePre,
			add: Warn, pres: Pass, storeWant: Pass, addMsg: "expected 10 items (8 + 2), found 11",
		},
		{
			name: "added 1", now: grid(cat(day, night[:1])), store: storePre,
			add: Fail, pres: Pass, storeWant: Pass, addMsg: "expected 10 items (8 + 2), found 9",
		},
		{
			name: "store deleted", now: grid(cat(day, night[:2])), store: nil,
			add: Pass, pres: Pass, storeWant: Warn,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := Check(task3(tt.now, tt.siblings, tt.store))
			if len(fs) != 3 {
				t.Fatalf("got %d findings, want 3: %+v", len(fs), fs)
			}
			add, pres, store := verdict(fs, "flavors", 0), verdict(fs, "flavors", 1), verdict(fs, "store", 0)
			check := func(what string, f Finding, want Status, msg string) {
				t.Helper()
				if f.Status != want {
					t.Errorf("%s: status %v, want %v\n  message: %s\n  detail: %s", what, f.Status, want, f.Message, f.Detail)
				}
				if msg != "" && !strings.Contains(f.Message, msg) {
					t.Errorf("%s: message %q\n  want it to contain %q", what, f.Message, msg)
				}
				if f.Status != Pass && f.Fix == "" {
					t.Errorf("%s: %v without a fix", what, f.Status)
				}
			}
			check("ADD", add, tt.add, tt.addMsg)
			check("PRESERVED", pres, tt.pres, tt.presMsg)
			check("NO CHANGES", store, tt.storeWant, "")
		})
	}
}

func TestCheckFixes(t *testing.T) {
	fs := Check(task3(grid(converted(1, 3, 5, 7)), nil, storePre))
	add, pres := verdict(fs, "flavors", 0), verdict(fs, "flavors", 1)
	if want := "Append 2 new items to the flavors array; keep the existing 8 unchanged."; !strings.HasPrefix(add.Fix, want) {
		t.Errorf("ADD fix = %q, want prefix %q", add.Fix, want)
	}
	if !strings.Contains(pres.Fix, "task-3-pre") || !strings.Contains(pres.Fix, `"Chrome Berry"`) {
		t.Errorf("PRESERVED fix = %q, want it to name task-3-pre and the converted items", pres.Fix)
	}

	fs = Check(task3(grid(day[:4]), nil, storePre))
	if want := "PRESERVED violation: flavors had 8 items, now has 4"; !strings.HasPrefix(verdict(fs, "flavors", 1).Message, want) {
		t.Errorf("message = %q, want prefix %q", verdict(fs, "flavors", 1).Message, want)
	}

	fs = Check(task3(grid(day), nil, []byte("changed")))
	store := verdict(fs, "store", 0)
	if want := `src/sections/StoreSection.tsx was modified but the plan marks section store "NO CHANGES for task-3"`; store.Message != want {
		t.Errorf("NO CHANGES message = %q, want %q", store.Message, want)
	}
	// Snapshots are refs under refs/ralph/snapshots/, not tags: the fix
	// names the command that reads them, and leaves the index alone.
	if want := "(git restore --source=refs/ralph/snapshots/task-3-pre --worktree -- src/sections/StoreSection.tsx)"; !strings.Contains(store.Fix, want) {
		t.Errorf("NO CHANGES fix = %q, want it to contain %q", store.Fix, want)
	}
	gone := Check(Input{Targets: []Target{{
		Section: Section{Name: "flavors", File: gridFile, Markers: []plan.Marker{{Kind: plan.Modify, Task: 3}}},
		Before:  Version{Present: true, Src: grid(day)},
	}}})
	if want := "(git restore --source=refs/ralph/snapshots/task-3-pre --worktree -- " + gridFile + ")"; len(gone) != 1 || !strings.Contains(gone[0].Fix, want) {
		t.Errorf("MODIFY fix = %+v, want it to contain %q", gone, want)
	}
}

func TestCheckMarkers(t *testing.T) {
	pre := Version{Present: true, Src: grid(day)}
	touched := Version{Present: true, Src: grid(reversed(day))} // changed, same items
	tests := []struct {
		name   string
		marker plan.Marker
		before Version
		now    Version
		want   Status
		msg    string
	}{
		{"modify changed in place", plan.Marker{Kind: plan.Modify, Task: 3}, pre, Version{Present: true, Src: grid(converted(0))}, Pass, "changed in place"},
		{"modify untouched", plan.Marker{Kind: plan.Modify, Task: 3, Text: "TASK-3 [MODIFY]: refine the taglines"}, pre, pre, Fail, `[MODIFY] "refine the taglines" of the plan not done: flavors (src/sections/FlavorGridSection.tsx) is unchanged since task-3-pre`},
		{"modify changed the count", plan.Marker{Kind: plan.Modify, Task: 3}, pre, Version{Present: true, Src: grid(day[:6])}, Warn, "[MODIFY] asks for changed content, but its item count went from 8 to 6"},
		{"modify changed the structure", plan.Marker{Kind: plan.Modify, Task: 3}, Version{Present: true, Src: []byte(`export const Hero = () => <h1>Energy for everyone</h1>`)},
			Version{Present: true, Src: []byte(`export const Hero = () => <h2>Energy for grown-ups</h2>`)}, Warn, "its elements changed (<h1> became <h2>)"},
		{"fix untouched", plan.Marker{Kind: plan.Fix, Task: 3, Text: "TASK-3 [FIX]: the toggle"}, pre, pre, Fail, "not done: flavors (src/sections/FlavorGridSection.tsx) is unchanged since task-3-pre"},
		{"fix changed, no check", plan.Marker{Kind: plan.Fix, Task: 3}, pre, touched, Pass, "the fix itself is verified by the gates as a whole (task.md gives it no check of its own)"},
		{"remove untouched", plan.Marker{Kind: plan.Remove, Task: 3, Text: "TASK-3 [REMOVE]: Ion Lime"}, pre, pre, Fail, `[REMOVE] "Ion Lime" of the plan not done`},
		{"add without count, untouched", plan.Marker{Kind: plan.Add, Task: 3, Text: "[ADD]: night drinks"}, pre, pre, Fail, "not done"},
		{"modify gone", plan.Marker{Kind: plan.Modify, Task: 3}, pre, Version{}, Fail, "[MODIFY] section's file src/sections/FlavorGridSection.tsx is gone"},
		{"remove gone", plan.Marker{Kind: plan.Remove, Task: 3}, pre, Version{}, Pass, "removed"},
		{"remove still there", plan.Marker{Kind: plan.Remove, Task: 3, Text: "TASK-3 [REMOVE]: the flavor grid"}, pre, touched, Warn, "still present"},
		{"remove 2 done", plan.Marker{Kind: plan.Remove, Task: 3, Count: 2}, pre, Version{Present: true, Src: grid(day[:6])}, Pass, "6 items (8 - 2)"},
		{"remove 2 not done", plan.Marker{Kind: plan.Remove, Task: 3, Text: "[REMOVE]: two old flavors"}, pre, touched, Warn, "expected at most 6 items (8 - 2), found 8"},
		{"remove fewer items", plan.Marker{Kind: plan.Remove, Task: 3}, pre, Version{Present: true, Src: grid(day[:7])}, Pass, "fell from 8 to 7"},
		{"add without count, grew", plan.Marker{Kind: plan.Add, Task: 3, Text: "[ADD]: night drinks"}, pre, Version{Present: true, Src: grid(cat(day, night))}, Pass, "rose from 8 to 12"},
		{"add without count, same", plan.Marker{Kind: plan.Add, Task: 3, Text: "[ADD]: night drinks"}, pre, touched, Warn, "no new items detected"},
		{"add to a new file", plan.Marker{Kind: plan.Add, Task: 3, Count: 2}, Version{}, Version{Present: true, Src: grid(night[:2])}, Pass, "2 items (0 + 2)"},
		{"preserved new file", plan.Marker{Kind: plan.Preserved, Task: 3}, Version{}, pre, Pass, "nothing to preserve"},
		{"no changes unchanged", plan.Marker{Kind: plan.NoChanges, Task: 3}, pre, pre, Pass, "unchanged"},
		{"no changes created", plan.Marker{Kind: plan.NoChanges, Task: 3}, Version{}, pre, Warn, "was created"},
		{"no changes both absent", plan.Marker{Kind: plan.NoChanges, Task: 3}, Version{}, Version{}, Pass, "unchanged"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := Check(Input{Targets: []Target{{
				Section: Section{Name: "flavors", File: gridFile, Markers: []plan.Marker{tt.marker}},
				Before:  tt.before, Now: tt.now,
			}}})
			if len(fs) != 1 {
				t.Fatalf("got %d findings, want 1", len(fs))
			}
			if fs[0].Status != tt.want || !strings.Contains(fs[0].Message, tt.msg) {
				t.Errorf("got %v %q, want %v containing %q", fs[0].Status, fs[0].Message, tt.want, tt.msg)
			}
		})
	}
}

func TestMarkerCount(t *testing.T) {
	tests := []struct {
		m    plan.Marker
		want int
	}{
		{plan.Marker{Count: 5, Text: "3 things"}, 5},
		{plan.Marker{Text: "TASK-3 [ADD]: 2 nighttime drink flavors (Moonlit Calm, Deep Rest)"}, 2},
		{plan.Marker{Text: "TASK-12 [ADD]: two more drinks for the h2 grid"}, 2},
		{plan.Marker{Text: "TASK-3 [ADD]: nighttime drinks"}, 0},
		{plan.Marker{Text: "[REMOVE]: 3D hero"}, 0},
	}
	for _, tt := range tests {
		if got := markerCount(tt.m); got != tt.want {
			t.Errorf("markerCount(%+v) = %d, want %d", tt.m, got, tt.want)
		}
	}
}
