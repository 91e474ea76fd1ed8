package sqlite_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/store"
	"github.com/convo-go/convo/store/sqlite"
)

// BenchmarkListMeta lists by metadata among 20,000 conversations of one
// tenant, none of which matches: every conversation is read (what the
// gateway's lookups by fingerprint cost when they miss). The first member
// is one every conversation has, with another value; the second is one
// none has.
func BenchmarkListMeta(b *testing.B) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "s.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	var writes []store.Write
	for i := 0; i < 20000; i++ {
		meta, _ := json.Marshal(map[string]string{"convo_gateway_fingerprint": fmt.Sprintf("%032x", i)})
		writes = append(writes, store.Write{Tenant: "t", ID: fmt.Sprintf("c%d", i), Create: true, Version: store.AnyVersion, Meta: meta, Messages: []convo.Message{convo.User("hi")}})
		if len(writes) == 500 {
			for _, r := range st.Batch(ctx, writes) {
				if r.Err != nil {
					b.Fatal(r.Err)
				}
			}
			writes = writes[:0]
		}
	}
	for _, k := range []string{"convo_gateway_fingerprint", "convo_gateway_response"} {
		meta, _ := json.Marshal(map[string]string{k: "resp_missing"})
		b.Run(k, func(b *testing.B) {
			for b.Loop() {
				if cs, _, err := st.List(ctx, "t", store.ListOptions{Limit: 1, Meta: meta}); err != nil || len(cs) > 0 {
					b.Fatal(cs, err)
				}
			}
		})
	}
}
