// Package temporalrun runs ralph tasks and specs as Temporal workflows
// (SPEC §16): one workflow per task or spec, the ralph run it drives as
// one heartbeating activity on a worker, <Human> answers and stop
// requests as signals, status as a query.
//
// The activity is a whole `ralph run` or `ralph specs run --only REL`
// on the worker, in a git worktree of the remote the submitter named, as
// a supervised child process group (internal/proc). Running the engine's
// task loop as one activity, rather than one activity per agent
// iteration, keeps the loop's rules (gates, stalls, resume, spec retries
// and invalidation) in one place and keeps the workspace on one disk for
// the life of an attempt; Temporal gives the attempt durability: a worker
// that dies stops heartbeating, the attempt times out and is retried on
// another worker from the pushed starting commit. The heartbeat carries
// the iteration number and event count read from the child's store.
//
// Transcripts stay in the worker's local SQLite store (the worktree's
// .ralph/ralph.db); the workflow's result references them by worker and
// path. Payloads stay small and carry nothing secret: a git URL, a
// commit, a branch and ralph's argv.
package temporalrun

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"os"

	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	"google.golang.org/grpc"

	"github.com/ralph-harness/ralph/internal/config"
)

// Defaults of the [temporal] table.
const (
	DefaultNamespace = "default"
	DefaultTaskQueue = "ralph"
)

// Settings are where the cluster is and how to reach it.
type Settings struct {
	Address   string
	Namespace string
	TaskQueue string
	TLSCert   string
	TLSKey    string
	TLS       bool
	APIKeyEnv string
}

// FromConfig fills Settings from ralph.toml's [temporal] table; address,
// namespace and queue, when not empty, override it.
func FromConfig(c config.Temporal, address, namespace, queue string) Settings {
	s := Settings{Address: c.Address, Namespace: c.Namespace, TaskQueue: c.TaskQueue,
		TLSCert: c.TLSCert, TLSKey: c.TLSKey, TLS: c.TLS, APIKeyEnv: c.APIKeyEnv}
	if address != "" {
		s.Address = address
	}
	if namespace != "" {
		s.Namespace = namespace
	}
	if queue != "" {
		s.TaskQueue = queue
	}
	if s.Namespace == "" {
		s.Namespace = DefaultNamespace
	}
	if s.TaskQueue == "" {
		s.TaskQueue = DefaultTaskQueue
	}
	return s
}

// ErrNoAddress means neither --temporal nor [temporal] address named a
// cluster.
var ErrNoAddress = errors.New("no Temporal address: pass --temporal HOST:PORT or set [temporal] address in ralph.toml")

// ClientOptions turns s into the SDK's client options: mTLS from the
// certificate files, an API key from the environment (which implies TLS).
func (s Settings) ClientOptions(log *slog.Logger) (client.Options, error) {
	if s.Address == "" {
		return client.Options{}, ErrNoAddress
	}
	o := client.Options{HostPort: s.Address, Namespace: s.Namespace}
	if log != nil {
		o.Logger = sdklog.NewStructuredLogger(log)
	}
	var tc *tls.Config
	if s.TLS {
		tc = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	if s.TLSCert != "" || s.TLSKey != "" {
		if s.TLSCert == "" || s.TLSKey == "" {
			return o, errors.New("[temporal] tls_cert and tls_key go together")
		}
		cert, err := tls.LoadX509KeyPair(s.TLSCert, s.TLSKey)
		if err != nil {
			return o, fmt.Errorf("temporal client certificate: %w", err)
		}
		tc = &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{cert}}
	}
	if s.APIKeyEnv != "" {
		key := os.Getenv(s.APIKeyEnv)
		if key == "" {
			return o, fmt.Errorf("[temporal] api_key_env names %s, which is not set", s.APIKeyEnv)
		}
		o.Credentials = client.NewAPIKeyStaticCredentials(key)
		if tc == nil {
			tc = &tls.Config{MinVersion: tls.VersionTLS12}
		}
	}
	o.ConnectionOptions.TLS = tc
	o.ConnectionOptions.DialOptions = append(o.ConnectionOptions.DialOptions, grpc.WithChainUnaryInterceptor(missedHeartbeats(log)))
	return o, nil
}

// Dial connects to the cluster s names.
func Dial(ctx context.Context, s Settings, log *slog.Logger) (client.Client, error) {
	o, err := s.ClientOptions(log)
	if err != nil {
		return nil, err
	}
	c, err := client.DialContext(ctx, o)
	if err != nil {
		return nil, fmt.Errorf("connect to Temporal at %s: %w", s.Address, err)
	}
	return c, nil
}
