package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"github.com/convo-go/convo/gateway"
	"github.com/convo-go/convo/internal/prom"
	"github.com/convo-go/convo/pricing"
	"github.com/convo-go/convo/store"
	"github.com/convo-go/convo/store/backends"
)

func init() {
	commands["gateway"] = command{
		usage:   "[--addr ADDR [--allow-anonymous]] [--db FILE|postgres://…] [--tokens FILE] [--otlp URL [--otel-content]] [--upstream NAME=PROTOCOL@URL[,key-env=VAR] …] [--route MODEL_GLOB=NAME …] [--config FILE]",
		summary: "a proxy for provider SDKs that records every conversation in the store",
		run:     runGateway,
	}
}

// listFlag collects a repeated flag.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, " ") }
func (l *listFlag) Set(s string) error { *l = append(*l, s); return nil }

// gatewayConfig is a parsed "convo gateway" command line.
type gatewayConfig struct {
	addr, db  string
	opts      gateway.Options
	tokenFrom string
	ready     func(addr string) // tests: told the address listened on
	// otlp is the OTLP/HTTP traces endpoint spans go to ("": none);
	// otelContent puts the messages in them.
	otlp        string
	otelContent bool
	// retention is the retention policy file ("": none), swept every
	// sweepEvery.
	retention  string
	sweepEvery time.Duration
}

func runGateway(e *env, args []string) error {
	cfg, err := parseGateway(e, args)
	if err != nil {
		return err
	}
	return untilSignal(func(ctx context.Context) error { return runGatewayServer(ctx, e, cfg) })
}

// parseGateway reads the command line and the environment into a config.
// Whatever is wrong in them — flags, the configuration file, the
// upstreams and routes, the credentials a Bedrock upstream needs — is a
// usage error (exit 2), found before anything is opened.
func parseGateway(e *env, args []string) (gatewayConfig, error) {
	fs := flags(e, "gateway")
	addr := fs.String("addr", "127.0.0.1:8787", "listen on `ADDR` (host:port)")
	db := fs.String("db", e.envOr("CONVO_DB", backends.DefaultDSN), "the store: a SQLite `FILE` (sqlite:FILE?synchronous=normal skips the fsync of each commit), or a postgres:// URL ($CONVO_DB when set)")
	tokens := fs.String("tokens", "", "gateway tokens from `FILE`: \"TOKEN TENANT\" a line, as convo serve (default: $CONVO_TOKENS)")
	anonymous := fs.Bool("allow-anonymous", false, "without tokens, listen on a non-loopback ADDR too (a container's): whoever reaches it uses the upstreams' keys")
	maxBody := fs.Int64("max-body", gateway.DefaultMaxBodyBytes, "refuse request bodies larger than `N` bytes")
	queue := fs.Int("queue", gateway.DefaultQueueSize, "hold at most `N` exchanges waiting to be recorded (more are dropped and counted)")
	queueBytes := fs.Int64("queue-bytes", gateway.DefaultQueueBytes, "and at most about `N` bytes of them (replies and messages)")
	batchDelay := fs.Duration("batch-delay", gateway.DefaultBatchDelay, "let the recording writer wait up to `DURATION` for more exchanges to commit together (negative: never)")
	otlp := fs.String("otlp", "", "export an OpenTelemetry span per exchange to the OTLP/HTTP traces endpoint `URL` (http://127.0.0.1:4318/v1/traces)")
	otelContent := fs.Bool("otel-content", false, "with --otlp, put the messages in the spans (off: they may be sensitive)")
	retention := fs.String("retention", "", "prune by the per-tenant retention policy in JSON `FILE` (docs/store.md)")
	sweepEvery := fs.Duration("sweep-every", time.Hour, "apply --retention every `DURATION`")
	models := addModelsFlag(fs)
	spoolDir := fs.String("spool", "", "keep recordings the store cannot take in directory `DIR` until it can (default: FILE.spool beside a SQLite --db, else convo-gateway.spool; off: no spool)")
	spoolMax := fs.Int64("spool-max-bytes", gateway.DefaultSpoolMaxBytes, "bound the spool's files to `N` bytes (past it recordings are dropped and counted)")
	prices := fs.String("prices", "", "price replies by the JSON `FILE` of USD per million tokens by model glob, before the catalogue (docs/gateway.md)")
	upstreams := newUpstreamFlags(fs)
	if _, err := parse(fs, args, 0); err != nil {
		return gatewayConfig{}, err
	}
	cat, _, err := e.loadModels(*models, false)
	if err != nil {
		return gatewayConfig{}, err // a bad file, as for every command: exit 1
	}
	cfg := gatewayConfig{addr: *addr, db: *db, otlp: *otlp, otelContent: *otelContent, retention: *retention, sweepEvery: *sweepEvery}
	cfg.opts.Models = cat
	if cfg.opts.Config, err = upstreams.read(); err != nil {
		return gatewayConfig{}, err
	}
	if err := cfg.opts.Config.Validate(); err != nil {
		// The command's name already says "gateway".
		return gatewayConfig{}, usageError{strings.TrimPrefix(err.Error(), "gateway: ")}
	}
	for _, u := range cfg.opts.Config.Upstreams {
		if u.Protocol == "bedrock" && cfg.opts.SignBedrock == nil {
			if cfg.opts.SignBedrock, err = bedrockSigner(e.getenv); err != nil {
				return gatewayConfig{}, usageError{err.Error()}
			}
		}
	}
	cfg.opts.MaxBodyBytes, cfg.opts.QueueSize, cfg.opts.QueueBytes, cfg.opts.BatchDelay = *maxBody, *queue, *queueBytes, *batchDelay
	cfg.opts.SpoolDir, cfg.opts.SpoolMaxBytes = spoolPath(*spoolDir, *db), *spoolMax
	if cfg.opts.Pricer, err = pricing.Default(*prices, cat); err != nil {
		// Never a silent default: the gateway does not start (exit 2).
		return gatewayConfig{}, usageError{err.Error()}
	}
	// The same tokens and tenants as convo serve.
	sc := serveConfig{addr: *addr, anywhere: *anonymous, anywhereFlag: "--allow-anonymous"}
	if err := sc.loadTokens(e, *tokens); err != nil {
		return gatewayConfig{}, err
	}
	cfg.opts.Tokens, cfg.opts.Anonymous, cfg.tokenFrom = sc.opts.Tokens, sc.opts.Anonymous, sc.tokenFrom
	if err := cfg.opts.Config.CheckTokens(cfg.opts.Tokens); err != nil {
		return gatewayConfig{}, usageError{strings.TrimPrefix(err.Error(), "gateway: ")}
	}
	return cfg, nil
}

// runGatewayServer serves until ctx is done, then stops accepting
// connections, lets the exchanges in flight finish, and writes every
// recording they queued before it closes the store.
func runGatewayServer(ctx context.Context, e *env, cfg gatewayConfig) (err error) {
	st, err := backends.Open(ctx, cfg.db)
	if err != nil {
		return err
	}
	if wrapGatewayStore != nil {
		st = wrapGatewayStore(st)
	}
	defer func() {
		if cerr := st.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("closing %s: %w", redact(cfg.db), cerr)
		}
	}()
	log := slog.New(slog.NewTextHandler(e.stderr, nil))
	cfg.opts.Store, cfg.opts.Logger, cfg.opts.Getenv = st, log, e.getenv
	cfg.opts.Metrics = prom.NewRegistry()
	if err := startSweeper(ctx, cfg.retention, cfg.sweepEvery, st, log); err != nil {
		return err
	}
	stopTelemetry, err := cfg.setupTelemetry(ctx)
	if err != nil {
		return err
	}
	gw, err := gateway.New(cfg.opts)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		return err
	}
	hs := httpServer(gw, log)
	auth := "tokens from " + cfg.tokenFrom
	if cfg.opts.Anonymous {
		auth = "no gateway tokens"
	}
	var names []string
	for _, u := range cfg.opts.Config.Upstreams {
		// Whose key each upstream gets, never the key.
		key := ""
		switch {
		case u.KeyEnv != "" && e.getenv(u.KeyEnv) != "":
			key = " with $" + u.KeyEnv
		case u.Protocol != "bedrock":
			key = " with clients' keys"
		}
		names = append(names, u.Name+"="+u.Protocol+key)
	}
	fmt.Fprintf(e.stderr, "convo gateway: listening on http://%s (store %s, %s; upstreams %s)\n", ln.Addr(), redact(cfg.db), auth, strings.Join(names, ", "))
	if cfg.ready != nil {
		cfg.ready(ln.Addr().String())
	}
	done, err := serveUntil(ctx, hs, ln)
	if err != nil {
		return err
	}
	fmt.Fprintln(e.stderr, "convo gateway: shutting down: finishing exchanges in flight and their recordings (signal again to quit at once)")
	sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		hs.Close()
	}
	if err := gw.Close(sctx); err != nil {
		return err
	}
	if err := stopTelemetry(sctx); err != nil { // the last recordings' spans
		fmt.Fprintf(e.stderr, "convo gateway: exporting spans: %v\n", err)
	}
	if err := <-done; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	s := gw.Stats()
	fmt.Fprintf(e.stderr, "convo gateway: stopped (%d exchanges recorded, %d dropped, %d failed)\n", s.Recorded, s.Dropped, s.Failed)
	return nil
}

// wrapGatewayStore, when set (by tests of faults), wraps the gateway's
// store.
var wrapGatewayStore func(store.Store) store.Store

// spoolPath is the spool directory --spool names: beside a SQLite file
// by default, "" when it is off.
func spoolPath(flag, db string) string {
	switch {
	case flag == "off":
		return ""
	case flag != "":
		return flag
	}
	if path, ok := sqlitePath(db); ok {
		return path + ".spool"
	}
	return "convo-gateway.spool"
}

// bedrockSigner signs Bedrock requests with AWS SigV4 using the AWS SDK's
// signer and the credentials of the environment (AWS_ACCESS_KEY_ID,
// AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN). The region is the upstream
// host's (bedrock-runtime.REGION.amazonaws.com), else $AWS_REGION.
func bedrockSigner(getenv func(string) string) (func(*http.Request, []byte) error, error) {
	creds := aws.Credentials{AccessKeyID: getenv("AWS_ACCESS_KEY_ID"), SecretAccessKey: getenv("AWS_SECRET_ACCESS_KEY"), SessionToken: getenv("AWS_SESSION_TOKEN")}
	if creds.AccessKeyID == "" || creds.SecretAccessKey == "" {
		return nil, errors.New("a bedrock upstream needs AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY")
	}
	fallback := getenv("AWS_REGION")
	signer := v4.NewSigner()
	return func(req *http.Request, body []byte) error {
		region := fallback
		if parts := strings.Split(req.URL.Hostname(), "."); len(parts) >= 3 && strings.HasPrefix(parts[0], "bedrock") {
			region = parts[1]
		}
		if region == "" {
			return fmt.Errorf("no AWS region for %s: set AWS_REGION", req.URL.Host)
		}
		sum := sha256.Sum256(body)
		return signer.SignHTTP(req.Context(), creds, req, hex.EncodeToString(sum[:]), "bedrock", region, time.Now())
	}, nil
}
