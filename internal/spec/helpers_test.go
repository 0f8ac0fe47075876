package spec

import "time"

func testNow() time.Time { return time.Date(2026, 2, 8, 12, 0, 0, 0, time.UTC) }
