package gate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ralph-harness/ralph/internal/plan"
	"github.com/ralph-harness/ralph/internal/snapshot"
	"github.com/ralph-harness/ralph/internal/testutil"
)

// The VIBRANT ENERGY failure of seed 002 §2, replayed against real git
// repositories and real snapshots: task 3 asks for 2 more drinks for
// nighttime on a landing page with 8 flavours.

var (
	dayFlavors = []string{
		"Voltage Citrus", "Chrome Berry", "Static Mango", "Ion Lime",
		"Surge Cherry", "Arc Grape", "Pulse Peach", "Flux Cola",
	}
	nightFlavors = []string{"Moonlit Calm", "Deep Rest", "Midnight Plum", "Velvet Dusk"}
)

const (
	flavorFile  = "src/sections/FlavorGridSection.tsx"
	flavorData  = "src/data/flavors.ts"
	pricingFile = "src/sections/PricingSection.tsx"
)

// flavorGrid renders the flavour grid section with its data inline.
func flavorGrid(names []string) string {
	var b strings.Builder
	b.WriteString("const flavors = [\n")
	for _, n := range names {
		fmt.Fprintf(&b, "  { name: '%s', tagline: 'Tastes like %s.' },\n", n, strings.ToLower(n))
	}
	b.WriteString("]\n\nexport function FlavorGridSection() {\n  return (\n    <section className=\"grid grid-cols-5\">\n" +
		"      {flavors.map((f) => <article key={f.name}><h3>{f.name}</h3><p>{f.tagline}</p></article>)}\n" +
		"    </section>\n  )\n}\n")
	return b.String()
}

// flavorModule renders the flavours as a data file the section imports.
func flavorModule(names []string) string {
	var b strings.Builder
	b.WriteString("export const flavors = [\n")
	for _, n := range names {
		fmt.Fprintf(&b, "  { name: %q },\n", n)
	}
	b.WriteString("]\n")
	return b.String()
}

const flavorGridImporting = `import { flavors } from '../data/flavors'

export function FlavorGridSection() {
  return <div>{flavors.map((f) => <Card key={f.name} {...f} />)}</div>
}
`

// beforePlan is the plan of tasks 1 and 2.
const beforePlan = `<App name="VIBRANT ENERGY" description="Energy drink landing page">
  <Theme mood="industrial" seed={140} pattern="triadic" />
  <Screen name="landing" layout="full-bleed">
    <Content>
      <Section gumdrop="hero" />
      <Section gumdrop="features" cols={4} file="src/sections/FlavorGridSection.tsx" />
      <Section gumdrop="cta" />
    </Content>
  </Screen>
  <Screen name="store">
    <Section gumdrop="pricing" />
  </Screen>
</App>
`

// task3Plan is the plan the agent updated for task 3, marked as seed 002 §6
// shows.
const task3Plan = `<App name="VIBRANT ENERGY" description="Energy drink landing page">
  <Theme mood="industrial" seed={140} pattern="triadic">
    {/* TASK-3 [FIX]: Debug voltage/chrome toggle switching */}
  </Theme>
  <Screen name="landing" layout="full-bleed">
    <Content>
      <Section gumdrop="hero">
        {/* TASK-3 [MODIFY]: Refine copy — less generic, more adult */}
      </Section>
      <Section gumdrop="features" cols={5} file="src/sections/FlavorGridSection.tsx">
        {/* TASK-3 [ADD]: 2 nighttime drink flavors (Moonlit Calm, Deep Rest) */}
        {/* EXISTING 8 flavors PRESERVED — do not remove or convert */}
      </Section>
      <Section gumdrop="cta">
        {/* TASK-3 [MODIFY]: Match refined adult tone from hero */}
      </Section>
    </Content>
  </Screen>
  <Screen name="store">
    {/* NO CHANGES for task-3 — preserve as-is */}
    <Section gumdrop="pricing" />
  </Screen>
</App>
`

// scopeProject is a workspace at the start of task 3: the project of tasks
// 1 and 2 saved as task-3-pre, with the agent's task-3 plan written since.
type scopeProject struct {
	t     *testing.T
	dir   string
	snaps *snapshot.Repo
}

func newScopeProject(t *testing.T, files map[string]string) *scopeProject {
	t.Helper()
	p := &scopeProject{t: t, dir: testutil.GitRepo(t)}
	base := map[string]string{
		"src/sections/HeroSection.tsx": "export const Hero = () => <h1>Energy for everyone</h1>\n",
		"src/sections/CtaSection.tsx":  "export const Cta = () => <a href=\"/store\">Buy now</a>\n",
		pricingFile:                    "export const Pricing = () => <ul><li>Single</li><li>Pack</li></ul>\n",
		flavorFile:                     flavorGrid(dayFlavors),
		".ralph/plan.tsx":              beforePlan,
	}
	for k, v := range files {
		base[k] = v
	}
	for name, content := range base {
		p.write(name, content)
	}
	ctx := context.Background()
	snaps, err := snapshot.Open(ctx, p.dir, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := snaps.Save(ctx, snapshot.TaskPre(3), "before task 3: add 2 more drinks for nighttime"); err != nil {
		t.Fatal(err)
	}
	p.snaps = snaps
	p.write(".ralph/plan.tsx", task3Plan)
	// The agent has done the plan's [MODIFY]s of the hero and the CTA
	// copy; the tests below vary what it did to the flavours.
	p.write("src/sections/HeroSection.tsx", "export const Hero = () => <h1>Energy, for grown-ups</h1>\n")
	p.write("src/sections/CtaSection.tsx", "export const Cta = () => <a href=\"/store\">Stock up for the late shift</a>\n")
	return p
}

func (p *scopeProject) write(name, content string) {
	p.t.Helper()
	path := filepath.Join(p.dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		p.t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		p.t.Fatal(err)
	}
}

func (p *scopeProject) check(g *Scope, task int) Result {
	p.t.Helper()
	if g.Snapshots == nil {
		g.Snapshots = p.snaps
	}
	return g.Check(context.Background(), Env{Root: p.dir, Task: task})
}

func converted(n int) []string {
	out := append([]string(nil), dayFlavors...)
	copy(out[len(out)-n:], nightFlavors[:n])
	return out
}

func appended(n int) []string {
	return append(append([]string(nil), dayFlavors...), nightFlavors[:n]...)
}

// want describes a Result by its status and the lines its message and fix
// must contain.
type want struct {
	status  Status
	message []string
	fix     []string
	not     []string
}

func (w want) check(t *testing.T, r Result) {
	t.Helper()
	if r.Status != w.status {
		t.Errorf("status %s, want %s\nmessage: %s\nfix: %s", r.Status, w.status, r.Message, r.Fix)
	}
	for _, s := range w.message {
		if !strings.Contains(r.Message, s) {
			t.Errorf("message lacks %q:\n%s", s, r.Message)
		}
	}
	for _, s := range w.fix {
		if !strings.Contains(r.Fix, s) {
			t.Errorf("fix lacks %q:\n%s", s, r.Fix)
		}
	}
	for _, s := range w.not {
		if strings.Contains(r.Message, s) || strings.Contains(r.Fix, s) {
			t.Errorf("result has %q:\nmessage: %s\nfix: %s", s, r.Message, r.Fix)
		}
	}
}

func TestScopeVibrantEnergy(t *testing.T) {
	tests := []struct {
		name  string
		agent map[string]string // what the agent wrote during task 3
		want  want
	}{
		{
			name:  "(a) converting 4 of the 8 flavours fails on PRESERVED and ADD",
			agent: map[string]string{flavorFile: flavorGrid(converted(4))},
			want: want{
				status: Fail,
				message: []string{
					"task 3 stepped outside the plan's change markers (2 failures, 0 warnings):",
					`- FAIL PRESERVED violation: features had 8 items, 4 of them changed or gone: "Surge Cherry", "Arc Grape", "Pulse Peach", "Flux Cola" (src/sections/FlavorGridSection.tsx)`,
					"- FAIL features (src/sections/FlavorGridSection.tsx): expected 10 items (8 + 2), found 8",
					"  counted: before: flavors.map over const flavors: 8 items; now: flavors.map over const flavors: 8 items",
				},
				fix: []string{
					`- Restore "Surge Cherry", "Arc Grape", "Pulse Peach", "Flux Cola" exactly as at task-3-pre`,
					"- Append 2 new items to the flavors array; keep the existing 8 unchanged. Do not convert existing items into the new ones.",
				},
			},
		},
		{
			name:  "(a') replacing the 8 with 4 nighttime flavours fails with the PRESERVED count",
			agent: map[string]string{flavorFile: flavorGrid(nightFlavors)},
			want: want{
				status: Fail,
				message: []string{
					"- FAIL PRESERVED violation: features had 8 items, now has 4 (src/sections/FlavorGridSection.tsx)",
					"- FAIL features (src/sections/FlavorGridSection.tsx): expected 10 items (8 + 2), found 4",
				},
			},
		},
		{
			name:  "(b) adding 2 passes",
			agent: map[string]string{flavorFile: flavorGrid(appended(2)), "src/sections/HeroSection.tsx": "export const Hero = () => <h1>Energy, after dark</h1>\n"},
			want: want{
				status:  Pass,
				message: []string{"task 3: every change marker on 4 sections holds", "features (src/sections/FlavorGridSection.tsx): 10 items (8 + 2)", "all 8 preserved items kept (now 10)"},
			},
		},
		{
			name: "(c) adding 2 and touching a NO CHANGES section warns",
			agent: map[string]string{
				flavorFile:  flavorGrid(appended(2)),
				pricingFile: "export const Pricing = () => <ul><li>Single</li><li>Pack</li><li>Night pack</li></ul>\n",
			},
			want: want{
				status: Warn,
				message: []string{
					"task 3: the plan's change markers hold with 1 warning:",
					`- WARN src/sections/PricingSection.tsx was modified but the plan marks section pricing "NO CHANGES for task-3"`,
				},
				fix: []string{"Restore src/sections/PricingSection.tsx to its task-3-pre content (git restore --source=refs/ralph/snapshots/task-3-pre --worktree -- src/sections/PricingSection.tsx)"},
				not: []string{"FAIL"},
			},
		},
		{
			name:  "adding 3 where 2 were asked warns",
			agent: map[string]string{flavorFile: flavorGrid(appended(3))},
			want:  want{status: Warn, message: []string{"expected 10 items (8 + 2), found 11"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newScopeProject(t, nil)
			for name, content := range tt.agent {
				p.write(name, content)
			}
			tt.want.check(t, p.check(&Scope{}, 3))
		})
	}
}

func TestScopeModifiedFileGone(t *testing.T) {
	p := newScopeProject(t, nil)
	p.write(flavorFile, flavorGrid(appended(2)))
	if err := os.Remove(filepath.Join(p.dir, "src/sections/CtaSection.tsx")); err != nil {
		t.Fatal(err)
	}
	want{
		status:  Fail,
		message: []string{"- FAIL cta (src/sections/CtaSection.tsx): [MODIFY] section's file src/sections/CtaSection.tsx is gone"},
		fix:     []string{"Restore src/sections/CtaSection.tsx from task-3-pre"},
	}.check(t, p.check(&Scope{}, 3))
}

// The flavours live in a data file the section imports: both sides follow
// the import, the snapshot side through the snapshot.
func TestScopeImportedData(t *testing.T) {
	tests := []struct {
		name  string
		names []string
		want  want
	}{
		{"converting in the data file fails", converted(2), want{status: Fail, message: []string{
			`PRESERVED violation: features had 8 items, 2 of them changed or gone: "Pulse Peach", "Flux Cola"`,
			"expected 10 items (8 + 2), found 8",
			"before: flavors.map over const flavors in ../data/flavors.ts: 8 items",
		}}},
		{"adding in the data file passes", appended(2), want{status: Pass, message: []string{"10 items (8 + 2)"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newScopeProject(t, map[string]string{flavorFile: flavorGridImporting, flavorData: flavorModule(dayFlavors)})
			p.write(flavorData, flavorModule(tt.names))
			tt.want.check(t, p.check(&Scope{}, 3))
		})
	}
}

// A section without a file prop whose suggested file does not exist is
// found through the Touched hook; without it the failure says how to name
// the file.
func TestScopeSectionFile(t *testing.T) {
	noFileProp := strings.Replace(task3Plan, ` file="src/sections/FlavorGridSection.tsx"`, "", 1)
	t.Run("touched", func(t *testing.T) {
		p := newScopeProject(t, nil)
		p.write(".ralph/plan.tsx", noFileProp)
		p.write(flavorFile, flavorGrid(converted(4)))
		var asked []string
		g := &Scope{Touched: func(s *plan.Node) string {
			asked = append(asked, s.Str("gumdrop"))
			if s.Str("gumdrop") == "features" {
				return flavorFile
			}
			return ""
		}}
		want{status: Fail, message: []string{"PRESERVED violation: features had 8 items, 4 of them changed or gone"}}.check(t, p.check(g, 3))
		if strings.Join(asked, ",") != "features" {
			t.Errorf("Touched asked for %v, want only features (the other files exist)", asked)
		}
	})
	t.Run("not found", func(t *testing.T) {
		p := newScopeProject(t, nil)
		p.write(".ralph/plan.tsx", noFileProp)
		p.write(flavorFile, flavorGrid(appended(2)))
		want{
			status:  Fail,
			message: []string{"features (src/sections/FeaturesSection.tsx): [ADD] expects new items but src/sections/FeaturesSection.tsx does not exist"},
			fix:     []string{`If the section's source is not src/sections/FeaturesSection.tsx, name it with file="…" on its <Section> in the plan.`},
		}.check(t, p.check(&Scope{}, 3))
	})
	t.Run("no gumdrop and no file", func(t *testing.T) {
		p := newScopeProject(t, nil)
		p.write(".ralph/plan.tsx", strings.Replace(noFileProp, `gumdrop="features" cols={5}`, `title="Flavours"`, 1))
		p.write(flavorFile, flavorGrid(appended(2)))
		want{
			status:  Warn,
			message: []string{"- WARN section Flavours has markers for task 3 but no source file"},
			fix:     []string{`Give the <Section> at plan.tsx:10 a gumdrop or a file="src/…" prop`},
		}.check(t, p.check(&Scope{}, 3))
	})
}

func TestScopeWithoutMarkers(t *testing.T) {
	tests := []struct {
		name string
		plan string
		task int
		want want
	}{
		{"the plan of an earlier task", strings.ReplaceAll(strings.ReplaceAll(task3Plan, "TASK-3", "TASK-2"), "task-3", "task-2"), 3,
			want{status: Skip, message: []string{"no change markers for task 3"}}},
		{"an unmarked plan", beforePlan, 3, want{status: Skip, message: []string{"no change markers for task 3"}}},
		{"only the theme is marked", strings.Replace(beforePlan, `<Theme mood="industrial" seed={140} pattern="triadic" />`,
			"<Theme mood=\"industrial\">\n    {/* TASK-3 [FIX]: the toggle */}\n  </Theme>", 1), 3,
			want{status: Skip, message: []string{"the markers of task 3 are on no section with a source file"}}},
		{"no plan", "", 3, want{status: Skip, message: []string{"no change markers for task 3"}}},
		{"no task", task3Plan, 0, want{status: Skip, message: []string{"no current task"}}},
		{"a broken plan", "<App name=>", 3, want{status: Fail, message: []string{"the plan cannot be read, so the scope of task 3 cannot be checked: plan.tsx:1:11"}, fix: []string{"ralph plan validate"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newScopeProject(t, nil)
			p.write(".ralph/plan.tsx", tt.plan)
			p.write(flavorFile, flavorGrid(converted(4)))
			tt.want.check(t, p.check(&Scope{}, tt.task))
		})
	}
}

func TestScopeWithoutSnapshot(t *testing.T) {
	p := newScopeProject(t, nil)
	p.write(".ralph/plan.tsx", strings.ReplaceAll(strings.ReplaceAll(task3Plan, "TASK-3", "TASK-4"), "task-3", "task-4"))
	p.write(flavorFile, flavorGrid(converted(4)))
	want{status: Warn, message: []string{"snapshot task-4-pre does not exist, so the 4 marked sections of task 4 cannot be compared"}}.check(t, p.check(&Scope{}, 4))

	r := (&Scope{}).Check(context.Background(), Env{Root: p.dir, Task: 4})
	want{status: Warn, message: []string{"no snapshots: the 4 marked sections of task 4 cannot be compared with task-4-pre"}}.check(t, r)

	var nilRepo *snapshot.Repo
	r = (&Scope{Snapshots: nilRepo}).Check(context.Background(), Env{Root: p.dir, Task: 4})
	want{status: Warn, message: []string{"no snapshots"}}.check(t, r)

	boom := &fakeSnapshotFiles{existsErr: errors.New("git is gone")}
	want{status: Warn, message: []string{"snapshot task-4-pre cannot be read: git is gone"}}.check(t, p.check(&Scope{Snapshots: boom}, 4))
}

// The Plan hook replaces reading .ralph/plan.tsx.
func TestScopePlanHook(t *testing.T) {
	p := newScopeProject(t, nil)
	p.write(".ralph/plan.tsx", beforePlan)
	p.write(flavorFile, flavorGrid(converted(4)))
	root, err := plan.Parse([]byte(task3Plan))
	if err != nil {
		t.Fatal(err)
	}
	g := &Scope{Plan: func() (*plan.Node, error) { return root, nil }}
	want{status: Fail, message: []string{"PRESERVED violation"}}.check(t, p.check(g, 3))
	g = &Scope{Plan: func() (*plan.Node, error) { return nil, errors.New("store closed") }}
	want{status: Fail, message: []string{"the plan cannot be read, so the scope of task 3 cannot be checked: store closed"}}.check(t, p.check(g, 3))
}

// Through RunAll and Feedback, the failure reaches feedback.md with every
// line and every fix.
func TestScopeFeedback(t *testing.T) {
	p := newScopeProject(t, nil)
	p.write(flavorFile, flavorGrid(converted(4)))
	p.write(".ralph/summary.md", "Added nighttime drinks\n")
	res := RunAll(context.Background(), []Gate{HasSummary{}, &Scope{Snapshots: p.snaps}}, Env{Root: p.dir, Task: 3})
	fb := Feedback(res)
	for _, s := range []string{
		"## FAIL [scope]\n\ntask 3 stepped outside the plan's change markers",
		"PRESERVED violation: features had 8 items, 4 of them changed or gone",
		"expected 10 items (8 + 2), found 8",
		"**Fix:** - Append 2 new items to the flavors array",
		"- Restore \"Surge Cherry\"",
	} {
		if !strings.Contains(fb, s) {
			t.Errorf("feedback lacks %q:\n%s", s, fb)
		}
	}
}

// A [REMOVE] of task 3 outweighs an unnumbered PRESERVED left from an
// earlier task on the same section.
func TestScopeRemoveOutweighsOldPreserved(t *testing.T) {
	p := newScopeProject(t, nil)
	p.write(".ralph/plan.tsx", strings.Replace(task3Plan, "TASK-3 [ADD]: 2 nighttime drink flavors (Moonlit Calm, Deep Rest)", "TASK-3 [REMOVE]: 2 flavors", 1))
	p.write(flavorFile, flavorGrid(dayFlavors[:6]))
	want{status: Pass, message: []string{"6 items (8 - 2)"}, not: []string{"PRESERVED"}}.check(t, p.check(&Scope{}, 3))
}

// Seed 002 Phase 4's tests.
func TestScopePhase4(t *testing.T) {
	tests := []struct {
		name  string
		agent map[string]string
		want  Status
		msg   string
	}{
		{"[ADD] 2, implementation adds 2: pass", map[string]string{flavorFile: flavorGrid(appended(2))}, Pass, "10 items (8 + 2)"},
		{"[ADD] 2, implementation converts 4 (count unchanged): fail", map[string]string{flavorFile: flavorGrid(converted(4))}, Fail, "expected 10 items (8 + 2), found 8"},
		{"PRESERVED, items removed: fail", map[string]string{flavorFile: flavorGrid(dayFlavors[:5])}, Fail, "PRESERVED violation: features had 8 items, now has 5"},
		{"NO CHANGES, file modified: warn", map[string]string{flavorFile: flavorGrid(appended(2)), pricingFile: "export const Pricing = () => null\n"}, Warn, "was modified but the plan marks section pricing \"NO CHANGES for task-3\""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newScopeProject(t, nil)
			for name, content := range tt.agent {
				p.write(name, content)
			}
			want{status: tt.want, message: []string{tt.msg}}.check(t, p.check(&Scope{}, 3))
		})
	}
}

// fakeSnapshotFiles serves one snapshot from a map.
type fakeSnapshotFiles struct {
	files     map[string]string
	existsErr error
}

func (f *fakeSnapshotFiles) ReadFile(_ context.Context, name, path string) ([]byte, error) {
	s, ok := f.files[path]
	if !ok {
		return nil, fmt.Errorf("read %s at %s: %w", path, name, fs.ErrNotExist)
	}
	return []byte(s), nil
}

func (f *fakeSnapshotFiles) Exists(context.Context, string) (bool, error) {
	return f.existsErr == nil, f.existsErr
}

func TestScopeSnapshotFS(t *testing.T) {
	fsys := snapshotFS{ctx: context.Background(), files: &fakeSnapshotFiles{files: map[string]string{"src/a.ts": "export const a = 1\n"}}, name: "task-1-pre"}
	b, err := fs.ReadFile(fsys, "src/a.ts")
	if err != nil || string(b) != "export const a = 1\n" {
		t.Fatalf("ReadFile = %q, %v", b, err)
	}
	f, err := fsys.Open("src/a.ts")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || st.Name() != "a.ts" || st.Size() != int64(len(b)) || st.IsDir() {
		t.Errorf("Stat = %v, %v", st, err)
	}
	if all, err := io.ReadAll(f); err != nil || string(all) != string(b) {
		t.Errorf("Read = %q, %v", all, err)
	}
	for _, name := range []string{"src/missing.ts", "../etc/passwd", "/abs", "."} {
		_, err := fsys.Open(name)
		var pe *fs.PathError
		if err == nil || !errors.As(err, &pe) || pe.Op != "open" {
			t.Errorf("Open(%q) = %v, want an open PathError", name, err)
		}
	}
	if _, err := fsys.Open("src/missing.ts"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Open(missing) = %v, want ErrNotExist", err)
	}
	// A real snapshot's missing file is ErrNotExist through the adapter too.
	p := newScopeProject(t, nil)
	real := snapshotFS{ctx: context.Background(), files: p.snaps, name: "task-3-pre"}
	if _, err := fs.ReadFile(real, "src/nope.ts"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("snapshot ReadFile(missing) = %v, want ErrNotExist", err)
	}
	if b, err := fs.ReadFile(real, ".ralph/plan.tsx"); err != nil || string(b) != beforePlan {
		t.Errorf("snapshot ReadFile(plan) = %q, %v; want the plan at task-3-pre", b, err)
	}
}

// The NO CHANGES fix names a git command that really restores the file.
func TestScopeNoChangesFixRestores(t *testing.T) {
	p := newScopeProject(t, nil)
	p.write(flavorFile, flavorGrid(appended(2)))
	p.write(pricingFile, "export const Pricing = () => null\n")
	r := p.check(&Scope{}, 3)
	i := strings.Index(r.Fix, "(git restore ")
	if r.Status != Warn || i < 0 {
		t.Fatalf("result %s, fix %q: want a warning with a git command", r.Status, r.Fix)
	}
	cmd := r.Fix[i+1:]
	cmd = cmd[:strings.Index(cmd, ")")]
	args := strings.Fields(cmd)[1:]
	c := exec.Command("git", args...)
	c.Dir = p.dir
	if out, err := c.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", cmd, err, out)
	}
	want{status: Pass}.check(t, p.check(&Scope{}, 3))
	st := exec.Command("git", "diff", "--cached", "--name-only")
	st.Dir = p.dir
	if out, err := st.Output(); err != nil || len(out) > 0 {
		t.Errorf("the fix staged files: %q, %v", out, err)
	}
}

// markersPlan marks one section for each of task 3's four requirements.
const markersPlan = `<App name="VIBRANT ENERGY">
  <Screen name="landing">
    <Section gumdrop="hero">{/* TASK-3 [MODIFY]: hero copy, more adult */}</Section>
    <Section gumdrop="features" file="src/sections/FlavorGridSection.tsx">{/* TASK-3 [ADD]: a nighttime flavour */}</Section>
    <Section gumdrop="cta">{/* TASK-3 [FIX]: the button goes to /signup */}</Section>
  </Screen>
  <Screen name="store">
    <Section gumdrop="pricing">{/* TASK-3 [REMOVE]: the Pack option */}</Section>
  </Screen>
</App>
`

// markersTask is task.md for it; the [FIX] carries its own check, an argv.
const markersTask = `# Task: Grown-up copy and a signup CTA
Type: mutation
Previous: task-2-post
Counter: 3

## Requirements
- [MODIFY] Refine the hero copy: less generic, more adult
- [FIX] the CTA button links to /signup — check: ["grep", "-q", "href=\"/signup\"", "src/sections/CtaSection.tsx"]
- [REMOVE] the Pack option from pricing
- [ADD] a nighttime flavour

## Original Message
> grown-up hero copy, the CTA should go to signup, drop the pack, add a night flavour
`

// A task whose four requirements the agent ignored fails on each, by its
// line in task.md; done honestly it passes, the [FIX] only once its own
// check passes.
func TestScopeRequirements(t *testing.T) {
	p := newScopeProject(t, nil)
	// Undo the fixture's copy changes: this agent did nothing at all.
	p.write("src/sections/HeroSection.tsx", "export const Hero = () => <h1>Energy for everyone</h1>\n")
	p.write("src/sections/CtaSection.tsx", "export const Cta = () => <a href=\"/store\">Buy now</a>\n")
	p.write(".ralph/plan.tsx", markersPlan)
	p.write(".ralph/task.md", markersTask)
	want{
		status: Fail,
		message: []string{
			"task 3 is not done: 4 requirements of .ralph/task.md not met (4 failures, 0 warnings):",
			`- FAIL task.md requirement 1 [MODIFY] "Refine the hero copy: less generic, more adult" not done: hero (src/sections/HeroSection.tsx) is unchanged since task-3-pre`,
			`- FAIL task.md requirement 2 [FIX] "the CTA button links to /signup" not done: cta (src/sections/CtaSection.tsx) is unchanged since task-3-pre`,
			`- FAIL task.md requirement 3 [REMOVE] "the Pack option from pricing" not done: pricing (src/sections/PricingSection.tsx) is unchanged since task-3-pre`,
			`- FAIL task.md requirement 4 [ADD] "a nighttime flavour" not done: features (src/sections/FlavorGridSection.tsx) is unchanged since task-3-pre`,
		},
		fix: []string{"Then `grep -q \"href=\\\"/signup\\\"\" src/sections/CtaSection.tsx` must pass."},
		not: []string{"counted:"},
	}.check(t, p.check(&Scope{}, 3))

	// Everything changed, but the CTA still goes to the store: its check
	// fails, and only that requirement is unmet.
	p.write("src/sections/HeroSection.tsx", "export const Hero = () => <h1>Energy, for grown-ups</h1>\n")
	p.write("src/sections/CtaSection.tsx", "export const Cta = () => <a className=\"btn\" href=\"/store\">Sign up</a>\n")
	p.write(pricingFile, "export const Pricing = () => <ul><li>Single</li></ul>\n")
	p.write(flavorFile, flavorGrid(appended(1)))
	want{
		status:  Fail,
		message: []string{"task 3 is not done: 1 requirement of .ralph/task.md not met", "- FAIL cta (src/sections/CtaSection.tsx): changed, but the requirement's check `grep -q \"href=\\\"/signup\\\"\" src/sections/CtaSection.tsx` still fails"},
	}.check(t, p.check(&Scope{}, 3))

	p.write("src/sections/CtaSection.tsx", "export const Cta = () => <a className=\"btn\" href=\"/signup\">Sign up</a>\n")
	want{status: Pass, message: []string{"cta (src/sections/CtaSection.tsx): changed, and `grep -q \"href=\\\"/signup\\\"\" src/sections/CtaSection.tsx` passes"}}.check(t, p.check(&Scope{}, 3))
}

// Without plan markers (a bug fix keeps the plan as it is), requirements
// are still checked: a task that changed nothing is not done.
func TestScopeRequirementsWithoutMarkers(t *testing.T) {
	p := newScopeProject(t, nil)
	p.write(".ralph/plan.tsx", beforePlan)
	p.write(".ralph/task.md", "# Task: toggle\nType: bugfix\n\n## Requirements\n- [FIX] the theme toggle switches moods\n")
	// The fixture's copy changes are changes: restore them.
	p.write("src/sections/HeroSection.tsx", "export const Hero = () => <h1>Energy for everyone</h1>\n")
	p.write("src/sections/CtaSection.tsx", "export const Cta = () => <a href=\"/store\">Buy now</a>\n")
	want{status: Fail, message: []string{`- FAIL task.md requirement 1 [FIX] "the theme toggle switches moods" not done: nothing in the project changed since task-3-pre`}}.check(t, p.check(&Scope{}, 3))
	p.write("src/theme-toggle.ts", "export const toggle = () => {}\n")
	want{status: Pass, message: []string{"the requirement itself is verified by the gates as a whole"}}.check(t, p.check(&Scope{}, 3))
}

// Without task-N-pre (the first task on an empty tree) requirements are
// not compared, but a requirement's own check still holds the task.
func TestScopeRequirementsWithoutSnapshot(t *testing.T) {
	dir := testutil.GitRepo(t)
	snaps, err := snapshot.Open(context.Background(), dir, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	p := &scopeProject{t: t, dir: dir, snaps: snaps}
	p.write(".ralph/task.md", "# Task: hero\nType: fresh\n\n## Requirements\n- [ADD] a hero that names Tideline\n")
	want{status: Skip, message: []string{"no task-1-pre (the first task on an empty tree)"}}.check(t, p.check(&Scope{}, 1))

	p.write(".ralph/task.md", "# Task: hero\nType: fresh\n\n## Requirements\n- [ADD] a hero that names Tideline — check: [\"grep\", \"-q\", \"Tideline\", \"src/Hero.tsx\"]\n")
	want{status: Fail, message: []string{"task 1 is not done: 1 requirement of .ralph/task.md not met", "not done: its check `grep -q Tideline src/Hero.tsx` fails: grep: src/Hero.tsx: No such file or directory"}}.check(t, p.check(&Scope{}, 1))
	p.write("src/Hero.tsx", "export const Hero = () => <h1>Tideline</h1>\n")
	want{status: Skip}.check(t, p.check(&Scope{}, 1))
}
