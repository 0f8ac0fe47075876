package temporalclient

import (
	"context"
	"strings"
	"testing"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/ralph-harness/ralph/internal/temporalrun"
)

// slowCluster is a cluster whose running workflow's worker heartbeats
// (as of the last beat) and answers the status query only after its
// first try has timed out: a worker alive on a busy machine.
type slowCluster struct {
	client.Client
	lastBeat time.Time
	queries  int
}

func (c *slowCluster) DescribeWorkflowExecution(ctx context.Context, id, runID string) (*workflowservice.DescribeWorkflowExecutionResponse, error) {
	details, err := converter.GetDefaultDataConverter().ToPayloads(temporalrun.Progress{Worker: "worker-a", Attempt: 1, Iteration: 2, Events: 7, Phase: "build"})
	if err != nil {
		return nil, err
	}
	return &workflowservice.DescribeWorkflowExecutionResponse{
		WorkflowExecutionInfo: &workflowpb.WorkflowExecutionInfo{Status: enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING},
		PendingActivities: []*workflowpb.PendingActivityInfo{{
			ActivityType:      &commonpb.ActivityType{Name: temporalrun.TaskIterationActivity},
			State:             enumspb.PENDING_ACTIVITY_STATE_STARTED,
			LastStartedTime:   timestamppb.New(c.lastBeat),
			LastHeartbeatTime: timestamppb.New(c.lastBeat),
			HeartbeatDetails:  details,
		}},
	}, nil
}

func (c *slowCluster) QueryWorkflow(ctx context.Context, id, runID, queryType string, args ...any) (converter.EncodedValue, error) {
	c.queries++
	if c.queries == 1 {
		<-ctx.Done() // the worker is busy past the first deadline
		return nil, ctx.Err()
	}
	return status{temporalrun.Status{Job: temporalrun.Job{Kind: "task", Name: "ship"}, Attempts: 1}}, nil
}

// status is a query's answer.
type status struct{ s temporalrun.Status }

func (v status) HasValue() bool { return true }
func (v status) Get(p any) error {
	*p.(*temporalrun.Status) = v.s
	return nil
}

// A worker that heartbeats but is slow to answer the status query is
// given longer, and never reported as missing ("no worker answered").
func TestStatusWaitsForABusyWorker(t *testing.T) {
	c := &slowCluster{lastBeat: time.Now()}
	s, err := describeRun(context.Background(), c, submitted{ID: "ralph-task-1", Kind: "task", Name: "ship"})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(s.Error, "no worker answered") || s.Error != "" || c.queries != 2 {
		t.Errorf("after %d queries, error %q; want the second, longer query answered", c.queries, s.Error)
	}
	if s.Running == nil || s.Running.Worker != "worker-a" || !s.SilentSince.IsZero() {
		t.Errorf("running = %+v, silent since %v; want worker-a heard from", s.Running, s.SilentSince)
	}
}
