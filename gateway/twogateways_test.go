package gateway_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/convo-go/convo/gateway"
	"github.com/convo-go/convo/store"
	"github.com/convo-go/convo/store/postgres"
	"github.com/convo-go/convo/store/storetest"
)

// TestTwoGatewaysOnePostgres: two gateways, each with its own connection
// pool and spool, record into one PostgreSQL database at once; every
// exchange is there once, and the two connections export every
// conversation identically.
func TestTwoGatewaysOnePostgres(t *testing.T) {
	dsn := storetest.PostgresDSN(t)
	var rigs [2]*rig
	var stores [2]store.Store
	for i := range rigs {
		st, err := postgres.Open(context.Background(), dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		stores[i] = st
		rigs[i] = newRig(t, "anthropic", func(o *gateway.Options) { o.Store, o.SpoolDir = st, t.TempDir() })
	}
	var xs []answered
	for i := range 40 {
		xs = append(xs, rigs[i%2].ask(t, i))
	}
	for _, rg := range rigs {
		rg.drain(t)
	}
	checkRecorded(t, stores[0], xs)
	for _, x := range xs {
		var a, b bytes.Buffer
		if err := store.Export(context.Background(), stores[0], tenant, x.conv, &a, false); err != nil {
			t.Fatal(err)
		}
		if err := store.Export(context.Background(), stores[1], tenant, x.conv, &b, false); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a.Bytes(), b.Bytes()) {
			t.Fatalf("%s exports otherwise through the two connections", x.conv)
		}
	}
}
