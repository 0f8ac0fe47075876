package temporalrun

import (
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	workflowpb "go.temporal.io/api/workflow/v1"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// A worker that stopped heartbeating is named as silent before the
// cluster's heartbeat timeout declares it lost; a live one, or an
// attempt no worker has started, is not.
func TestSilentSinceNamesAQuietWorker(t *testing.T) {
	now := time.Date(2026, 11, 26, 1, 0, 0, 0, time.UTC)
	at := func(ago time.Duration) *timestamppb.Timestamp { return timestamppb.New(now.Add(-ago)) }
	started := enumspb.PENDING_ACTIVITY_STATE_STARTED
	for _, tc := range []struct {
		name string
		a    *workflowpb.PendingActivityInfo
		want time.Time
	}{
		{"beating", &workflowpb.PendingActivityInfo{State: started, LastStartedTime: at(time.Minute), LastHeartbeatTime: at(time.Second)}, time.Time{}},
		{"silent for 20s", &workflowpb.PendingActivityInfo{State: started, LastStartedTime: at(time.Minute), LastHeartbeatTime: at(20 * time.Second)}, now.Add(-20 * time.Second)},
		{"started 20s ago, never beat", &workflowpb.PendingActivityInfo{State: started, LastStartedTime: at(20 * time.Second)}, now.Add(-20 * time.Second)},
		{"just started", &workflowpb.PendingActivityInfo{State: started, LastStartedTime: at(2 * time.Second)}, time.Time{}},
		{"waiting for a worker", &workflowpb.PendingActivityInfo{State: enumspb.PENDING_ACTIVITY_STATE_SCHEDULED, LastHeartbeatTime: at(time.Hour)}, time.Time{}},
		{"no times", &workflowpb.PendingActivityInfo{State: started}, time.Time{}},
	} {
		if got := silentSince(tc.a, now); !got.Equal(tc.want) {
			t.Errorf("%s: silentSince = %v, want %v", tc.name, got, tc.want)
		}
	}
}
