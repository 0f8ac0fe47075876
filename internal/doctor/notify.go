package doctor

import (
	"context"
	"os"
	"time"

	"github.com/ralph-harness/ralph/internal/notify"
)

// checker is a channel that can say who it is to its service.
type checker interface {
	Check(ctx context.Context) (string, error)
}

// checkNotify checks each channel [notify] configures: that the
// variables it names hold its secrets, and, for Telegram and Slack, that
// the service knows the token. A channel that cannot send is a warning:
// a run goes on without it.
func checkNotify(ctx context.Context, env *doctorEnv) []finding {
	chans, errs := notify.Channels(env.cfg.Notify, os.Getenv)
	if len(chans) == 0 && len(errs) == 0 {
		return []finding{{Status: findingInfo, Message: "no [notify] channels configured"}}
	}
	var out []finding
	for _, err := range errs {
		out = append(out, finding{Status: findingWarn, Message: err.Error()})
	}
	for _, ch := range chans {
		c, ok := ch.(checker)
		if !ok {
			out = append(out, finding{Status: findingOK, Message: ch.Name() + ": configured, its secret set"})
			continue
		}
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		who, err := c.Check(cctx)
		cancel()
		if err != nil {
			out = append(out, finding{Status: findingWarn, Message: ch.Name() + ": " + errorText(err)})
			continue
		}
		out = append(out, finding{Status: findingOK, Message: ch.Name() + ": the token works (" + who + ")"})
	}
	return out
}
