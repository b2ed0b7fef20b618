package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/spf13/cobra"

	"github.com/looprinter/looprinter/internal/ops"
	"github.com/looprinter/looprinter/internal/serve"
	"github.com/looprinter/looprinter/sandbox"
)

func init() { register(newServeCmd) }

type serveOptions struct {
	addr        string
	allowHosts  []string
	rotate      bool
	readToken   bool
	tlsCert     string
	tlsKey      string
	behindProxy bool
	tokenFile   string
	loops       []string
}

func newServeCmd(io *IO) *cobra.Command {
	o := &serveOptions{}
	cmd := &cobra.Command{
		Use:   "serve [--addr 127.0.0.1:7878]",
		Short: "A web dashboard and an HTTP API over every loop looprinter knows",
		Long: `Serve a web dashboard (the loops, each loop's plan, gates, cost and failure
charts, live records, agent runs with prompt, transcript and diff, the final
report) and an HTTP API under /api/ (docs/api.md), over every loop in the
registry.

It listens on 127.0.0.1:7878 by default. On a loopback address anyone on this
machine may read; every action (pause, resume, stop, answer, guide) needs the
admin token. On any other address every request needs a token. The admin
token is made at the first start, printed once, and kept (hashed) in
$LOOPRINTER_STATE_DIR/serve/tokens.json, mode 0600. --rotate-token revokes
every token and prints a new admin token; --read-token prints a new token
that may only read. Every action is written to serve/audit.jsonl.`,
		Example: `  looprinter serve
  looprinter serve --addr 127.0.0.1:0
  looprinter serve --rotate-token
  looprinter serve --addr 0.0.0.0:7878 --tls-cert cert.pem --tls-key key.pem`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runServe(cmd.Context(), io, o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.addr, "addr", "127.0.0.1:7878", "where to listen (host:port; port 0 picks a free one)")
	f.StringSliceVar(&o.allowHosts, "allow-host", nil, "a host name the server answers to besides IP addresses and localhost (e.g. a reverse proxy's)")
	f.BoolVar(&o.rotate, "rotate-token", false, "revoke every token, print a new admin token and exit")
	f.BoolVar(&o.readToken, "read-token", false, "print a new read-only token and exit")
	f.StringVar(&o.tlsCert, "tls-cert", "", "serve HTTPS with this certificate (PEM)")
	f.StringVar(&o.tlsKey, "tls-key", "", "the certificate's key (PEM)")
	f.BoolVar(&o.behindProxy, "behind-tls-proxy", false, "a TLS reverse proxy is in front: do not warn about plain HTTP")
	f.StringSliceVarP(&o.loops, "file", "f", nil, "a loop file to serve even before it first runs (GitHub's webhooks may start it: docs/forge.md)")
	f.StringVar(&o.tokenFile, "token-file", "", "the token file (default $LOOPRINTER_STATE_DIR/serve/tokens.json)")
	f.MarkHidden("token-file")
	return cmd
}

func runServe(ctx context.Context, io *IO, o *serveOptions) error {
	sandbox.Undumpable() // its environment and tokens stay out of /proc
	path := o.tokenFile
	if path == "" {
		path = serve.DefaultTokenPath()
	}
	for _, file := range o.loops {
		l, err := loadLoop(file)
		if err != nil {
			return err
		}
		if _, err := ops.Update(ops.Entry{Name: l.Name, LoopFile: l.Path, Dir: l.Dir, RunDir: l.Dir, RunFile: l.Path}, func(*ops.Entry) {}); err != nil {
			return fmt.Errorf("cannot register %s in %s: %w", l.Path, ops.StateDir(), err)
		}
	}
	tokens, created, err := serve.OpenTokens(path)
	if err != nil {
		return &ExitError{Code: 1, Err: err}
	}
	switch {
	case o.rotate:
		tok, err := tokens.Rotate()
		if err != nil {
			return err
		}
		fmt.Fprintln(io.Err, "every earlier token is revoked; the new admin token (shown once):")
		fmt.Fprintln(io.Out, tok)
		return nil
	case o.readToken:
		tok, err := tokens.AddRead()
		if err != nil {
			return err
		}
		fmt.Fprintln(io.Err, "a new read-only token (shown once):")
		fmt.Fprintln(io.Out, tok)
		return nil
	}
	if (o.tlsCert == "") != (o.tlsKey == "") {
		return &ExitError{Code: ExitUsage, Err: errors.New("--tls-cert and --tls-key go together")}
	}
	seen, err := serve.OpenDeliveries(serve.DefaultDeliveriesPath())
	if err != nil {
		fmt.Fprintf(io.Err, "WARNING: %v\n", err)
	}
	srv, err := serve.New(serve.Config{
		Addr:         o.addr,
		AllowedHosts: o.allowHosts,
		Tokens:       tokens,
		Audit:        serve.OpenAudit(serve.DefaultAuditPath()),
		Deliveries:   seen,
	})
	if err != nil {
		return err
	}
	loopback := serve.Loopback(o.addr)
	if !loopback && o.tlsCert == "" && !o.behindProxy {
		fmt.Fprintf(io.Err, "WARNING: serving on %s without TLS: tokens and pages cross the network in clear text. Use --tls-cert/--tls-key, or a TLS reverse proxy in front (then --behind-tls-proxy).\n", o.addr)
	}
	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		return &ExitError{Code: 1, Err: err}
	}
	scheme := "http"
	if o.tlsCert != "" {
		scheme = "https"
	}
	url := fmt.Sprintf("%s://%s/", scheme, ln.Addr())
	fmt.Fprintf(io.Err, "looprinter serve: %s\n", url)
	if loopback {
		fmt.Fprintln(io.Err, "anyone on this machine may read; actions need the admin token")
	} else {
		fmt.Fprintln(io.Err, "every request needs a token")
	}
	if created != "" {
		fmt.Fprintf(io.Err, "the admin token (made now, shown once; `looprinter serve --rotate-token` makes a new one):\n  %s\nsign in: %slogin#token=%s\n", created, url, created)
	}
	hs := &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 10 * time.Second}
	done := make(chan error, 1)
	go func() {
		if o.tlsCert != "" {
			done <- hs.ServeTLS(ln, o.tlsCert, o.tlsKey)
			return
		}
		done <- hs.Serve(ln)
	}()
	select {
	case err := <-done:
		return &ExitError{Code: 1, Err: err}
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if hs.Shutdown(sctx) != nil {
		hs.Close() // live streams do not end by themselves
	}
	return nil
}
