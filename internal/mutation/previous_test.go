package mutation

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"testing"

	"github.com/ralph-harness/ralph/internal/snapshot"
)

// fakeSnapshots serves files by snapshot name and path.
type fakeSnapshots struct {
	files map[string]string // "name:path" → content
	err   error
}

func (f fakeSnapshots) ReadFile(_ context.Context, name, path string) ([]byte, error) {
	if f.err != nil {
		return nil, f.err
	}
	if s, ok := f.files[name+":"+path]; ok {
		return []byte(s), nil
	}
	if _, ok := f.files[name+":"]; ok {
		return nil, fmt.Errorf("read %s at %s: %w", path, name, fs.ErrNotExist)
	}
	return nil, fmt.Errorf("read %s: %w", path, &snapshot.UnknownSnapshotError{Name: name})
}

var _ Snapshots = (*snapshot.Repo)(nil)

func TestPreviousPlan(t *testing.T) {
	ctx := context.Background()
	boom := errors.New("git exploded")
	snaps := fakeSnapshots{files: map[string]string{
		"task-3-pre:":                `<App name="x" />`,
		"task-3-pre:.ralph/plan.tsx": `<App name="x"><Screen name="home" /></App>`,
		"task-4-pre:":                "",
		"task-5-pre:.ralph/plan.tsx": `<App name=>`,
	}}
	tests := []struct {
		name    string
		s       Snapshots
		n       int
		wantApp bool
		wantErr error
	}{
		{"the plan at task start", snaps, 3, true, nil},
		{"a snapshot without a plan", snaps, 4, false, nil},
		{"a plan that does not parse", snaps, 5, false, nil},
		{"no such snapshot", snaps, 6, false, nil},
		{"no task number", snaps, 0, false, nil},
		{"no snapshots", nil, 3, false, nil},
		{"a nil repository", (*snapshot.Repo)(nil), 3, false, nil},
		{"git failing", fakeSnapshots{err: boom}, 3, false, boom},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root, err := PreviousPlan(ctx, tt.s, tt.n)
			if !errors.Is(err, tt.wantErr) || (err == nil) != (tt.wantErr == nil) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if got := root != nil && root.Component == "App"; got != tt.wantApp {
				t.Errorf("root = %+v, want an App: %v", root, tt.wantApp)
			}
		})
	}
}
