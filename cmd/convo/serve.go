package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/convo-go/convo/gateway"
	"github.com/convo-go/convo/internal/prom"
	"github.com/convo-go/convo/pricing"
	"github.com/convo-go/convo/provider/all"
	"github.com/convo-go/convo/provider/openai"
	"github.com/convo-go/convo/replay"
	"github.com/convo-go/convo/server"
	"github.com/convo-go/convo/store"
	"github.com/convo-go/convo/store/backends"
)

func init() {
	commands["serve"] = command{
		usage:   "[--addr ADDR] [--db FILE|postgres://…] [--tokens FILE] [--prices FILE] [--upstream … --route … | --config FILE]",
		summary: "serve the conversation history API over a store",
		run:     runServe,
	}
}

// shutdownGrace is how long a stopping server waits for requests in flight.
const shutdownGrace = 30 * time.Second

// serveConfig is a parsed "convo serve" command line.
type serveConfig struct {
	addr      string
	db        string
	opts      server.Options
	tokenFrom string // where the tokens came from, for the start-up line
	// anywhere lets the server run without tokens on a non-loopback
	// address (convo gateway --allow-anonymous); anywhereFlag names the
	// flag that allows it, for the refusal ("": none).
	anywhere     bool
	anywhereFlag string
	jsonLog      bool // log JSON lines, not text
	// retention is the retention policy file ("": none), swept every
	// sweepEvery.
	retention  string
	sweepEvery time.Duration
	// ready, when set, is told the address the server listens on.
	ready func(addr string)
	// wrap, when set, wraps the store (tests inject faults with it).
	wrap func(store.Store) store.Store
	// replay, when set, are the upstreams and routes replays go to.
	replay *gateway.Config
}

func runServe(e *env, args []string) error {
	cfg, err := parseServe(e, args)
	if err != nil {
		return err
	}
	return untilSignal(func(ctx context.Context) error { return serve(ctx, e, cfg) })
}

// untilSignal runs a server until SIGINT or SIGTERM starts its shutdown;
// once shutdown starts, a second signal ends the process at once.
func untilSignal(run func(context.Context) error) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		stop()
	}()
	return run(ctx)
}

// parseServe reads the command line and the environment into a config.
func parseServe(e *env, args []string) (serveConfig, error) {
	fs := flags(e, "serve")
	addr := fs.String("addr", e.envOr("CONVO_ADDR", "127.0.0.1:8080"), "listen on `ADDR` (host:port; default $CONVO_ADDR, else 127.0.0.1:8080)")
	db := fs.String("db", e.envOr("CONVO_DB", backends.DefaultDSN), "the store: a SQLite `FILE`, or a postgres:// URL (default $CONVO_DB, else "+backends.DefaultDSN+")")
	logFormat := fs.String("log-format", "text", "the request log's `FORMAT` on stderr: text or json")
	tokens := fs.String("tokens", "", "bearer tokens from `FILE`: \"TOKEN TENANT\" a line (default: $CONVO_TOKENS, \"tok=tenant,…\")")
	maxBody := fs.Int64("max-body", server.DefaultMaxBodyBytes, "refuse request bodies larger than `N` bytes")
	maxMsg := fs.Int64("max-message", server.DefaultMaxMessageBytes, "refuse messages larger than `N` bytes")
	maxInflight := fs.Int64("max-inflight", server.DefaultMaxInflightBytes, "hold at most `N` bytes of request bodies at once (503 beyond)")
	viewer := fs.Bool("ui", true, "serve the transcript viewer under /ui/")
	retention := fs.String("retention", "", "prune by the per-tenant retention policy in JSON `FILE` (docs/store.md)")
	sweepEvery := fs.Duration("sweep-every", time.Hour, "apply --retention every `DURATION`")
	models := addModelsFlag(fs)
	prices := fs.String("prices", "", "price appended replies that carry usage and no cost by the JSON `FILE` of USD per million tokens by model glob, before the catalogue (as convo gateway)")
	ups := newUpstreamFlags(fs) // replays go there (convo replay's)
	if _, err := parse(fs, args, 0); err != nil {
		return serveConfig{}, err
	}
	cat, _, err := e.loadModels(*models, false)
	if err != nil {
		return serveConfig{}, err
	}
	if *maxBody <= 0 || *maxMsg <= 0 || *maxInflight <= 0 {
		return serveConfig{}, usagef("--max-body, --max-message and --max-inflight must be positive")
	}
	if *logFormat != "text" && *logFormat != "json" {
		return serveConfig{}, usagef("--log-format: want text or json, got %q", *logFormat)
	}
	cfg := serveConfig{addr: *addr, db: *db, jsonLog: *logFormat == "json", retention: *retention, sweepEvery: *sweepEvery}
	cfg.opts.MaxBodyBytes, cfg.opts.MaxMessageBytes, cfg.opts.MaxInflightBytes = *maxBody, *maxMsg, *maxInflight
	cfg.opts.UI = *viewer
	if cfg.opts.Pricer, err = pricing.Default(*prices, cat); err != nil {
		// Never a silent default: the server does not start (exit 2).
		return serveConfig{}, usageError{err.Error()}
	}
	if ups.set() {
		c, err := ups.read()
		if err != nil {
			return serveConfig{}, err
		}
		cfg.replay = &c
	}
	if err := cfg.loadTokens(e, *tokens); err != nil {
		return serveConfig{}, err
	}
	return cfg, nil
}

// loadTokens reads the tokens from file, else from $CONVO_TOKENS. With
// neither, the server runs without authentication, which it allows only on
// a loopback address.
func (cfg *serveConfig) loadTokens(e *env, file string) error {
	var err error
	switch {
	case file != "":
		f, oerr := os.Open(file)
		if oerr != nil {
			return oerr
		}
		defer f.Close()
		if cfg.opts.Tokens, err = server.ParseTokens(f); err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
		cfg.tokenFrom = file
	case e.getenv("CONVO_TOKENS") != "":
		if cfg.opts.Tokens, err = server.ParseTokenList(e.getenv("CONVO_TOKENS")); err != nil {
			return fmt.Errorf("$CONVO_TOKENS: %w", err)
		}
		cfg.tokenFrom = "$CONVO_TOKENS"
	}
	if len(cfg.opts.Tokens) > 0 {
		return nil
	}
	if cfg.tokenFrom != "" {
		return fmt.Errorf("%s lists no tokens", cfg.tokenFrom)
	}
	if !loopback(cfg.addr) && !cfg.anywhere {
		or := ""
		if cfg.anywhereFlag != "" {
			or = ", or " + cfg.anywhereFlag + " to serve anyone who reaches it"
		}
		return usagef("refusing to serve %s without authentication: give --tokens FILE or set CONVO_TOKENS%s", cfg.addr, or)
	}
	cfg.opts.Anonymous = true
	return nil
}

// loopback reports whether addr (host:port) can only be reached from this
// machine.
func loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// serve runs the server until ctx is done, then stops accepting connections,
// lets the requests in flight finish (appends included) and closes the
// store.
func serve(ctx context.Context, e *env, cfg serveConfig) (err error) {
	st, err := backends.Open(ctx, cfg.db)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := st.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("closing %s: %w", redact(cfg.db), cerr)
		}
	}()
	if cfg.wrap != nil {
		st = cfg.wrap(st)
	}
	var lh slog.Handler = slog.NewTextHandler(e.stderr, nil)
	if cfg.jsonLog {
		lh = slog.NewJSONHandler(e.stderr, nil)
	}
	log := slog.New(lh)
	cfg.opts.Logger = log
	if err := startSweeper(ctx, cfg.retention, cfg.sweepEvery, st, log); err != nil {
		return err
	}
	cfg.opts.Metrics = prom.NewRegistry()
	cfg.opts.Formats = all.Formats()
	cfg.opts.Items = server.ItemFuncs{Encode: openai.EncodeItems, Decode: openai.DecodeItems}
	if cfg.replay != nil {
		if err := replayKeys(e, *cfg.replay); err != nil {
			return err
		}
		// Within the server's request timeout: a replay answers the
		// request that asked for it.
		if cfg.opts.Replay, err = newReplayer(e, replay.Options{Store: st, Config: *cfg.replay, Timeout: 90 * time.Second}); err != nil {
			return err
		}
	}
	h, err := server.New(st, cfg.opts)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		return err
	}
	hs := httpServer(h, log)
	auth := "tokens from " + cfg.tokenFrom
	if cfg.opts.Anonymous {
		auth = "no authentication (loopback only)"
	}
	// The start and stop lines are for a person, unless the log is JSON:
	// then they are log lines like the others.
	say := func(msg string) { fmt.Fprintln(e.stderr, "convo serve: "+msg) }
	if cfg.jsonLog {
		say = func(msg string) { log.Info(msg) }
	}
	say(fmt.Sprintf("listening on http://%s (store %s, %s)", ln.Addr(), redact(cfg.db), auth))
	if cfg.opts.UI {
		say(fmt.Sprintf("the viewer is at http://%s/ui/", ln.Addr()))
	}
	if cfg.ready != nil {
		cfg.ready(ln.Addr().String())
	}
	done, err := serveUntil(ctx, hs, ln)
	if err != nil {
		return err
	}
	say("shutting down: finishing requests in flight (signal again to quit at once)")
	sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		hs.Close()
		return fmt.Errorf("shutting down: %w", err)
	}
	if err := <-done; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	say("stopped")
	return nil
}

// httpServer is the http.Server convo serve and convo gateway run h in:
// bounded header and idle times, and the server's own errors in log.
func httpServer(h http.Handler, log *slog.Logger) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
}

// serveUntil serves hs on ln until ctx ends, and returns the channel
// Serve's result arrives on once hs is shut down; an error when the server
// failed before that.
func serveUntil(ctx context.Context, hs *http.Server, ln net.Listener) (<-chan error, error) {
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	select {
	case err := <-done:
		if err == nil {
			err = http.ErrServerClosed // Serve never returns nil; never block on a drained channel
		}
		return nil, err
	case <-ctx.Done():
		return done, nil
	}
}

// redact hides the password of a database URL, for the start-up line.
func redact(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil || u.User == nil {
		return dsn
	}
	return u.Redacted()
}

// replayKeys checks that every upstream named for replays has its key:
// a replay sends no client's key, so one without its own is a mistake to
// say at start.
func replayKeys(e *env, c gateway.Config) error {
	for _, u := range c.Upstreams {
		if u.KeyEnv != "" && e.getenv(u.KeyEnv) == "" {
			return fmt.Errorf("replay upstream %q: $%s is empty", u.Name, u.KeyEnv)
		}
	}
	return nil
}
