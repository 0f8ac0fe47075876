package temporalrun

import (
	"context"
	"log/slog"

	"go.temporal.io/api/workflowservice/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	grpcstatus "google.golang.org/grpc/status"
)

// missedHeartbeats is a client interceptor that keeps a heartbeat that
// did not get through from ending the activity that sent it.
//
// The Go SDK cancels an activity when a heartbeat call fails with an
// error it takes for transient, and it takes a call that ran past its
// deadline for one: its error conversion turns the code into Unknown,
// which it retries, and a failed retry cancels. With ralph's heartbeat
// throttle of two seconds the call has one second, so on a loaded
// machine one slow heartbeat ended a task's session ("session failed due
// to worker shutdown") or its iteration ("context canceled" seconds
// into it), with no worker lost. Whether a worker is lost is the
// cluster's call, made when the heartbeat timeout passes; a beat that did
// not get through is sent again with the next one. A cancellation the
// cluster asks for comes in an answer, not an error, and still cancels.
func missedHeartbeats(log *slog.Logger) grpc.UnaryClientInterceptor {
	return func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		err := invoker(ctx, method, req, reply, cc, opts...)
		if err == nil || !missable(method, err) {
			return err
		}
		if log != nil {
			log.Info("a heartbeat did not reach the Temporal cluster; the next one tries again", "err", err)
		}
		return nil
	}
}

// missable reports whether err, from a call to method, is a heartbeat
// that did not get through: the call timed out, was cancelled here, or
// the cluster could not take it now.
func missable(method string, err error) bool {
	switch method {
	case workflowservice.WorkflowService_RecordActivityTaskHeartbeat_FullMethodName,
		workflowservice.WorkflowService_RecordActivityTaskHeartbeatById_FullMethodName:
	default:
		return false
	}
	switch grpcstatus.Code(err) {
	case codes.DeadlineExceeded, codes.Canceled, codes.Unavailable, codes.ResourceExhausted, codes.Aborted, codes.Unknown, codes.Internal:
		return true
	}
	return false
}
