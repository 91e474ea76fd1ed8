package gateway_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/convo-go/convo/gateway"
	"github.com/convo-go/convo/server"
	"github.com/convo-go/convo/store"
	"github.com/convo-go/convo/store/postgres"
	"github.com/convo-go/convo/store/storetest"
)

// TestTwoGatewaysOnePostgres: two gateways, each with its own connection
// pool and spool, record into one PostgreSQL database at once, and two
// history servers (convo serve's handler), each on a pool of its own, read
// it. Every exchange sent is there exactly once, no other conversation is,
// and every conversation's export is the same bytes through either server.
// It runs on an unpartitioned schema and on one partitioned by tenant.
func TestTwoGatewaysOnePostgres(t *testing.T) {
	for _, parts := range []int{0, 4} {
		t.Run(map[int]string{0: "unpartitioned", 4: "partitioned"}[parts], func(t *testing.T) {
			twoGateways(t, storetest.PostgresDSN(t), parts)
		})
	}
}

func twoGateways(t *testing.T, dsn string, parts int) {
	var rigs [2]*rig
	var servers [2]*httptest.Server
	var stores [2]store.Store
	for i := range rigs {
		st, err := postgres.Options{Partitions: parts}.Open(context.Background(), dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		stores[i] = st
		rigs[i] = newRig(t, "anthropic", func(o *gateway.Options) { o.Store, o.SpoolDir = st, t.TempDir() })
		// The servers' own pools: what a convo serve beside the gateways
		// would have.
		sst, err := postgres.Open(context.Background(), dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer sst.Close()
		h, err := server.New(sst, server.Options{Tokens: map[string]string{token: tenant}, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		servers[i] = httptest.NewServer(h)
		defer servers[i].Close()
	}
	var xs []answered
	for i := range 40 {
		xs = append(xs, rigs[i%2].ask(t, i))
	}
	for _, rg := range rigs {
		rg.drain(t)
	}
	checkRecorded(t, stores[0], xs)
	// Exactly these conversations, each once, seen through either pool.
	for i, st := range stores {
		seen := map[string]int{}
		for after := ""; ; {
			cs, next, err := st.List(context.Background(), tenant, store.ListOptions{Limit: 7, After: after})
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range cs {
				seen[c.ID]++
			}
			if after = next; after == "" {
				break
			}
		}
		for _, x := range xs {
			if seen[x.conv] != 1 {
				t.Fatalf("pool %d lists %s %d times, want once", i, x.conv, seen[x.conv])
			}
		}
		if len(seen) != len(xs) {
			t.Fatalf("pool %d lists %d conversations, want the %d exchanged", i, len(seen), len(xs))
		}
	}
	for _, x := range xs {
		a, b := exportVia(t, servers[0].URL, x.conv), exportVia(t, servers[1].URL, x.conv)
		if len(a) == 0 || !bytes.Equal(a, b) {
			t.Fatalf("%s exports otherwise through the two servers:\n%s\n%s", x.conv, a, b)
		}
	}
}

// exportVia returns conversation id's export through the history server
// at url.
func exportVia(t *testing.T, url, id string) []byte {
	t.Helper()
	req, _ := http.NewRequest("GET", url+"/convo/v1/conversations/"+id+"/export", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("export of %s: %d %v %s", id, resp.StatusCode, err, body)
	}
	return body
}
