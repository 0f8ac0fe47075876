package theme

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// RecordFile is where the last applied theme is recorded, relative to the
// workspace directory.
const RecordFile = ".ralph/theme.json"

// ErrNoRecord is returned by LoadRecord when no theme has been applied.
var ErrNoRecord = errors.New("no theme has been applied yet")

// Record is the last theme applied to a workspace: what was asked for and
// where it was written. `ralph theme modify` starts from it.
type Record struct {
	Request    Request `json:"request"`
	Stylesheet string  `json:"stylesheet"`
	Vars       int     `json:"vars"`
}

// SaveRecord writes r to path as JSON, atomically, creating directories.
func SaveRecord(path string, r Record) error {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("save theme record: %w", err)
	}
	if err := writeAtomic(path, append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("save theme record: %w", err)
	}
	return nil
}

// LoadRecord reads the record at path. A missing file is ErrNoRecord.
func LoadRecord(path string) (Record, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Record{}, ErrNoRecord
	}
	if err != nil {
		return Record{}, fmt.Errorf("load theme record: %w", err)
	}
	var r Record
	if err := json.Unmarshal(data, &r); err != nil {
		return Record{}, fmt.Errorf("load theme record %s: %w", path, err)
	}
	return r, nil
}
