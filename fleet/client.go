package fleet

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/looprinter/looprinter/proc"
)

// Conn says how to reach a Temporal frontend.
type Conn struct {
	HostPort  string // HOST:PORT of the frontend
	Namespace string
	// TLS: on when any TLS field is set or TLS is true.
	TLS           bool
	TLSCert       string // client certificate (PEM), for mTLS
	TLSKey        string // its key
	TLSCA         string // the server's CA (PEM), when not a public one
	TLSServerName string
	APIKey        string // Temporal Cloud API key (implies TLS)
	// Logger gets the SDK's log lines; nil drops them below warnings.
	Logger log.Logger
}

// DefaultHostPort is where a Temporal frontend listens by default.
const DefaultHostPort = "127.0.0.1:7233"

// Dial connects to the frontend.
func Dial(c Conn) (client.Client, error) {
	if c.HostPort == "" {
		c.HostPort = DefaultHostPort
	}
	if c.Namespace == "" {
		c.Namespace = "default"
	}
	o := client.Options{HostPort: c.HostPort, Namespace: c.Namespace, Logger: c.Logger}
	if o.Logger == nil {
		o.Logger = log.NewStructuredLogger(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	}
	if c.TLS || c.TLSCert != "" || c.TLSCA != "" || c.TLSServerName != "" || c.APIKey != "" {
		cfg := &tls.Config{ServerName: c.TLSServerName, MinVersion: tls.VersionTLS12}
		if c.TLSCert != "" || c.TLSKey != "" {
			pair, err := tls.LoadX509KeyPair(c.TLSCert, c.TLSKey)
			if err != nil {
				return nil, fmt.Errorf("--tls-cert/--tls-key: %w", err)
			}
			cfg.Certificates = []tls.Certificate{pair}
		}
		if c.TLSCA != "" {
			pem, err := os.ReadFile(c.TLSCA)
			if err != nil {
				return nil, fmt.Errorf("--tls-ca: %w", err)
			}
			pool := x509.NewCertPool()
			if !pool.AppendCertsFromPEM(pem) {
				return nil, fmt.Errorf("--tls-ca: %s holds no PEM certificate", c.TLSCA)
			}
			cfg.RootCAs = pool
		}
		o.ConnectionOptions.TLS = cfg
	}
	if c.APIKey != "" {
		o.Credentials = client.NewAPIKeyStaticCredentials(c.APIKey)
	}
	cl, err := client.Dial(o)
	if err != nil {
		return nil, fmt.Errorf("cannot reach the fleet at %s (Temporal frontend, namespace %s): %w", c.HostPort, c.Namespace, err)
	}
	return cl, nil
}

// WorkflowID is the workflow id of a loop: one running workflow per loop name.
func WorkflowID(name string) string { return "looprinter-" + name }

// Register registers the loop workflow and, when w is not nil, the step
// activity on a Temporal worker.
func Register(r worker.Registry, w *Worker) {
	r.RegisterWorkflowWithOptions(LoopWorkflow, workflow.RegisterOptions{Name: WorkflowName})
	if w != nil {
		r.RegisterActivityWithOptions(w.Step, activity.RegisterOptions{Name: StepName})
	}
}

// RunWorker serves the task queue until ctx ends: the loop workflows and
// their steps, and the steps offered to this worker alone (its own queue,
// queue@identity) because it ran the loop's previous step. It holds a lock
// on its work folder: two workers never share one.
func RunWorker(ctx context.Context, c client.Client, queue string, w *Worker) error {
	if err := os.MkdirAll(w.Dir, 0o700); err != nil {
		return err
	}
	lock, err := os.OpenFile(filepath.Join(w.Dir, ".worker-lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return err
	}
	defer lock.Close()
	if err := proc.TryLock(lock); err != nil {
		return fmt.Errorf("another worker uses the work folder %s: give this one its own (--dir or --identity)", w.Dir)
	}
	if w.Queue == "" {
		w.Queue = queue + "@" + w.Identity
	}
	slots := max(w.Slots, 1)
	// Heartbeats carry what a step has spent, sent every second by the step
	// itself through this client (Worker.heartbeat), so that a worker that
	// dies right after an agent starts still has that run counted.
	if w.Client == nil {
		w.Client = c
	}
	opts := worker.Options{Identity: w.Identity, MaxConcurrentActivityExecutionSize: slots, WorkerStopTimeout: 5 * time.Second}
	shared := worker.New(c, queue, opts)
	Register(shared, w)
	ownOpts := opts
	ownOpts.DisableWorkflowWorker = true
	own := worker.New(c, w.Queue, ownOpts)
	own.RegisterActivityWithOptions(w.Step, activity.RegisterOptions{Name: StepName})
	if err := shared.Start(); err != nil {
		return err
	}
	defer shared.Stop()
	if err := own.Start(); err != nil {
		return err
	}
	defer own.Stop()
	<-ctx.Done()
	return nil
}

// Wait waits for a fleet loop to end and returns its result.
func Wait(ctx context.Context, c client.Client, name string) (*Result, error) {
	id, _, err := resolve(ctx, c, name)
	if err != nil {
		return nil, err
	}
	var r Result
	if err := c.GetWorkflow(ctx, id, "").Get(ctx, &r); err != nil {
		return nil, err
	}
	return &r, nil
}
