package gateway_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/gateway"
	"github.com/convo-go/convo/store"
	"github.com/convo-go/convo/store/postgres"
	"github.com/convo-go/convo/store/sqlite"
	"github.com/convo-go/convo/store/storetest"
	"github.com/jackc/pgx/v5"
)

// TestCredentialsNeverStored sends canary credentials through every route
// of the gateway — the gateway token in Authorization, x-api-key,
// x-goog-api-key and key=, a refused token, the upstream's key and a
// password inside the upstream's URL — with a failing upstream too, then
// searches the logs and everything the store wrote for them: the SQLite
// database file and its WAL, or every row of every PostgreSQL table.
func TestCredentialsNeverStored(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) {
		st, files := sqliteDump(t)
		credentialsNeverStored(t, st, files)
	})
	t.Run("postgres", func(t *testing.T) {
		st, rows := postgresDump(t)
		credentialsNeverStored(t, st, rows)
	})
}

// dumpFunc gives search everything a store wrote, a part at a time.
type dumpFunc func(search func(what string, data []byte))

// sqliteDump opens a SQLite store in a new directory, and a dump of its
// files: the WAL and the database, to search before and after the store
// closes (a checkpoint moves the WAL into the file).
func sqliteDump(t *testing.T) (store.Store, dumpFunc) {
	dir := t.TempDir()
	st, err := sqlite.Open(context.Background(), filepath.Join(dir, "gw.db"))
	if err != nil {
		t.Fatal(err)
	}
	return st, func(search func(string, []byte)) {
		names, _ := filepath.Glob(filepath.Join(dir, "gw.db*"))
		if len(names) == 0 {
			t.Fatal("no database files")
		}
		for _, f := range names {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			search(filepath.Base(f), data)
		}
	}
}

// postgresDump opens a PostgreSQL store in a schema of its own (skipping
// without CONVO_TEST_POSTGRES), and a dump of every row of every table of
// the schema, each value as the server holds it (bytea as its bytes).
func postgresDump(t *testing.T) (store.Store, dumpFunc) {
	dsn := storetest.PostgresDSN(t)
	st, err := postgres.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	return st, func(search func(string, []byte)) {
		conn, err := pgx.Connect(context.Background(), dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(context.Background())
		var tables []string
		r, err := conn.Query(context.Background(), `SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()`)
		if err != nil {
			t.Fatal(err)
		}
		for r.Next() {
			var name string
			if err := r.Scan(&name); err != nil {
				t.Fatal(err)
			}
			tables = append(tables, name)
		}
		if len(tables) == 0 {
			t.Fatal("no tables")
		}
		for _, table := range tables {
			search("table "+table, tableBytes(t, conn, table))
		}
	}
}

// tableBytes is every value of every row of table, run together.
func tableBytes(t *testing.T, conn *pgx.Conn, table string) []byte {
	r, err := conn.Query(context.Background(), `SELECT * FROM `+pgx.Identifier{table}.Sanitize())
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var data []byte
	for r.Next() {
		vals, err := r.Values()
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range vals {
			if b, ok := v.([]byte); ok {
				data = append(data, b...)
			} else {
				data = fmt.Appendf(data, "%v ", v)
			}
		}
	}
	return data
}

// credentialsNeverStored runs the canaries through a gateway recording into
// st, then gives dump a search to run over everything st wrote, before and
// after st is closed.
func credentialsNeverStored(t *testing.T, st store.Store, dump dumpFunc) {
	const (
		canaryToken = "gwtok-CANARY-4f1d9e"
		canaryBad   = "gwtok-CANARY-refused-77ab"
		canaryKey   = "upkey-CANARY-0c3b2a"
		canaryPass  = "urlpass-CANARY-9e8d"
	)
	canaries := []string{canaryToken, canaryBad, canaryKey, canaryPass,
		base64.StdEncoding.EncodeToString([]byte("user:" + canaryPass))}

	defer st.Close()
	var logs bytes.Buffer
	up := newFake(t, "openai-chat")
	u, _ := url.Parse(up.URL)
	u.User = url.UserPassword("user", canaryPass)
	down := "http://user:" + canaryPass + "@127.0.0.1:1" // nothing listens: the exchange fails
	gw, err := gateway.New(gateway.Options{
		Config: gateway.Config{
			Upstreams: []gateway.Upstream{
				{Name: "up", Protocol: "openai-chat", URL: u.String() + "/v1", KeyEnv: "UP_KEY"},
				{Name: "down", Protocol: "openai-chat", URL: down, KeyEnv: "UP_KEY"},
			},
			Routes: []gateway.Route{{Model: "down-*", Upstream: "down"}, {Model: "*", Upstream: "up"}},
		},
		Store:  st,
		Tokens: map[string]string{canaryToken: tenant},
		Getenv: func(string) string { return canaryKey },
		Logger: slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := newServer(t, gw)

	h := convo.History{convo.User("hello")}
	send := func(proto, model string, stream bool, carrier, tok string) int {
		t.Helper()
		path := clientPath(proto, model, stream)
		if carrier == "key" {
			sep := "?"
			if strings.Contains(path, "?") {
				sep = "&"
			}
			path += sep + "key=" + tok
		}
		req, _ := http.NewRequest("POST", srv+path, bytes.NewReader(requestBody(t, proto, model, h, stream)))
		switch carrier {
		case "bearer":
			req.Header.Set("Authorization", "Bearer "+tok)
		case "x-api-key":
			req.Header.Set("X-Api-Key", tok)
		case "x-goog-api-key":
			req.Header.Set("X-Goog-Api-Key", tok)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		for _, c := range canaries {
			if bytes.Contains(body, []byte(c)) || strings.Contains(strings.Join(flatten(resp.Header), " "), c) {
				t.Errorf("%s %s: the response echoes a credential", proto, carrier)
			}
		}
		return resp.StatusCode
	}
	for _, proto := range protos {
		for _, carrier := range []string{"bearer", "x-api-key", "x-goog-api-key", "key"} {
			for _, stream := range []bool{false, true} {
				if code := send(proto, "m-1", stream, carrier, canaryToken); code != 200 {
					t.Errorf("%s via %s: status %d", proto, carrier, code)
				}
			}
			if code := send(proto, "down-1", false, carrier, canaryToken); code < 500 {
				t.Errorf("%s to a dead upstream: status %d", proto, code)
			}
			if code := send(proto, "m-1", false, carrier, canaryBad); code != 401 {
				t.Errorf("%s with a refused token via %s: status %d", proto, carrier, code)
			}
		}
	}
	req, _ := http.NewRequest("GET", srv+"/v1/models", nil)
	req.Header.Set("Authorization", "Bearer "+canaryToken)
	if resp, err := http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10e9)
	defer cancel()
	if err := gw.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if s := gw.Stats(); s.Recorded == 0 {
		t.Fatalf("nothing recorded: %+v", s)
	}
	search := func(what string, data []byte) {
		for _, c := range canaries {
			if bytes.Contains(data, []byte(c)) {
				t.Errorf("credential %q found in %s", c, what)
			}
		}
	}
	search("the logs", logs.Bytes())
	dump(search)
	st.Close()
	dump(search)
	if logs.Len() == 0 {
		t.Error("no log lines: the search proved nothing")
	}
}

func flatten(h http.Header) []string {
	var out []string
	for k, v := range h {
		out = append(out, k+": "+strings.Join(v, ","))
	}
	return out
}

func newServer(t *testing.T, h http.Handler) string {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}
