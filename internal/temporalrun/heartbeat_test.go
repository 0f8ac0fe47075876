package temporalrun

import (
	"context"
	"errors"
	"testing"

	"go.temporal.io/api/workflowservice/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	grpcstatus "google.golang.org/grpc/status"
)

// A heartbeat that timed out or found the cluster busy is not an error
// the SDK may end the activity for; anything else, and any other call,
// keeps its error.
func TestMissedHeartbeatIsNotAnError(t *testing.T) {
	hb := workflowservice.WorkflowService_RecordActivityTaskHeartbeat_FullMethodName
	for _, tc := range []struct {
		method  string
		err     error
		swallow bool
	}{
		{hb, grpcstatus.Error(codes.DeadlineExceeded, "context deadline exceeded"), true},
		{hb, grpcstatus.Error(codes.Unavailable, "connection refused"), true},
		{hb, grpcstatus.Error(codes.ResourceExhausted, "workflow is busy"), true},
		{hb, grpcstatus.Error(codes.Canceled, "context canceled"), true},
		{workflowservice.WorkflowService_RecordActivityTaskHeartbeatById_FullMethodName, grpcstatus.Error(codes.DeadlineExceeded, "x"), true},
		{hb, grpcstatus.Error(codes.NotFound, "activity not found"), false},
		{hb, grpcstatus.Error(codes.InvalidArgument, "details too large"), false},
		{workflowservice.WorkflowService_RespondActivityTaskCompleted_FullMethodName, grpcstatus.Error(codes.DeadlineExceeded, "x"), false},
		{hb, nil, false},
	} {
		invoke := func(context.Context, string, any, any, *grpc.ClientConn, ...grpc.CallOption) error { return tc.err }
		got := missedHeartbeats(nil)(context.Background(), tc.method, nil, nil, nil, invoke)
		switch {
		case tc.swallow && got != nil:
			t.Errorf("%s: %v came through; a missed heartbeat must not end the activity", tc.method, got)
		case !tc.swallow && !errors.Is(got, tc.err):
			t.Errorf("%s: %v became %v", tc.method, tc.err, got)
		}
	}
}
