package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/store"
)

// testModel runs random sequences of appends (with current and stale
// versions), message deletions, forks and loads against a store and a
// plain in-memory model of it; after every step the two must agree.
func testModel(t *testing.T, s store.Store) {
	n := 0
	rapid.Check(t, func(rt *rapid.T) {
		n++
		ctx := t.Context()
		var convs []*modelConv
		create := func(id string, h convo.History) *modelConv {
			c, err := s.Create(ctx, store.Conversation{ID: id, Tenant: "model"}, h...)
			if err != nil {
				rt.Fatalf("Create: %v", err)
			}
			stored, _, err := s.Load(ctx, "model", id, 0)
			if err != nil {
				rt.Fatalf("Load: %v", err)
			}
			cv := &modelConv{id: id, h: stored, version: c.Version}
			convs = append(convs, cv)
			return cv
		}
		create(fmt.Sprintf("m%d", n), genMessages(rt, "init"))

		steps := rapid.IntRange(1, 25).Draw(rt, "steps")
		for step := range steps {
			c := convs[rapid.IntRange(0, len(convs)-1).Draw(rt, "conv")]
			switch op := rapid.IntRange(0, 4).Draw(rt, "op"); op {
			case 0, 1: // append, with the current version or a stale one
				modelAppend(ctx, rt, s, c, step)
			case 2: // delete a message
				if len(c.h) == 0 {
					continue
				}
				i := rapid.IntRange(0, len(c.h)-1).Draw(rt, "delete")
				if c.h[i].ID == "?" {
					continue // not known yet; the load below fills it in
				}
				if _, err := s.DeleteMessage(ctx, "model", c.id, c.version, c.h[i].ID); err != nil {
					rt.Fatalf("DeleteMessage(%d): %v", i, err)
				}
				c.h = slices.Delete(slices.Clone(c.h), i, i+1)
				c.version++
			case 3: // fork
				at := rapid.IntRange(0, len(c.h)).Draw(rt, "at")
				id := fmt.Sprintf("m%d.f%d", n, step)
				f, err := s.Fork(ctx, "model", c.id, at, store.Conversation{ID: id})
				if err != nil {
					rt.Fatalf("Fork(%d): %v", at, err)
				}
				if f.Messages != at || f.ForkedFrom != c.id {
					rt.Fatalf("Fork: %+v", f)
				}
				convs = append(convs, &modelConv{id: id, h: slices.Clone(c.h[:at]), version: f.Version})
			case 4: // load from an index
				from := rapid.IntRange(0, len(c.h)+1).Draw(rt, "from")
				h, _, err := s.Load(ctx, "model", c.id, from)
				if err != nil {
					rt.Fatalf("Load(%d): %v", from, err)
				}
				modelEqual(rt, h, c.h[min(from, len(c.h)):])
			}
			// Every step ends with the store and the model agreeing.
			h, d, err := s.Load(ctx, "model", c.id, 0)
			if err != nil {
				rt.Fatalf("Load: %v", err)
			}
			modelEqual(rt, h, c.h)
			if d.Version != c.version || d.Messages != len(c.h) {
				rt.Fatalf("description: version %d, %d messages; model %d, %d", d.Version, d.Messages, c.version, len(c.h))
			}
			c.h = h // learn the ids the store gave
		}
	})
}

// modelConv is a conversation as testModel's model keeps it.
type modelConv struct {
	id      string
	h       convo.History
	version int64
}

// modelAppend appends drawn messages to c, with its current version or a
// stale one, in the store and the model.
func modelAppend(ctx context.Context, rt *rapid.T, s store.Store, c *modelConv, step int) {
	msgs := genMessages(rt, fmt.Sprintf("s%d", step))
	stale := c.version > 1 && rapid.IntRange(0, 3).Draw(rt, "stale") == 0
	v := c.version
	if stale {
		v = rapid.Int64Range(1, c.version-1).Draw(rt, "staleVersion")
	}
	got, err := s.Append(ctx, "model", c.id, v, msgs...)
	switch {
	case stale && !errors.Is(err, store.ErrConflict):
		rt.Fatalf("Append at stale version %d of %d: %v, want a conflict", v, c.version, err)
	case !stale && err != nil:
		rt.Fatalf("Append: %v", err)
	case !stale:
		for i := range msgs {
			if msgs[i].ID == "" {
				msgs[i].ID = "?" // the store names it; compared by content below
			}
		}
		c.h = append(c.h, msgs...)
		if len(msgs) > 0 {
			c.version++
		}
		if got.Version != c.version || got.Messages != len(c.h) {
			rt.Fatalf("Append returned version %d, %d messages; want %d, %d", got.Version, got.Messages, c.version, len(c.h))
		}
	}
}

// genMessages draws up to four messages without tool calls (pairing has
// its own tests), some with ids.
func genMessages(rt *rapid.T, label string) convo.History {
	n := rapid.IntRange(0, 4).Draw(rt, label+".n")
	out := make(convo.History, n)
	for i := range out {
		role := rapid.SampledFrom([]convo.Role{convo.RoleUser, convo.RoleAssistant, convo.RoleSystem, convo.RoleSummary, convo.RoleError}).Draw(rt, label+".role")
		text := rapid.StringN(0, 40, -1).Draw(rt, label+".text")
		m := convo.Message{Role: role, Parts: []convo.Part{convo.Text(text)}}
		if role == convo.RoleSummary {
			m.Compacted = 1
		}
		if rapid.Bool().Draw(rt, label+".meta") {
			m.Meta, _ = json.Marshal(map[string]string{"k": text})
		}
		if rapid.Bool().Draw(rt, label+".id") {
			m.ID = fmt.Sprintf("%s.%d.%d", label, i, rapid.IntRange(0, 1<<30).Draw(rt, label+".idn"))
		}
		out[i] = m
	}
	return out
}

// modelEqual compares a loaded history with the model, where an id "?"
// stands for one the store chose.
func modelEqual(rt *rapid.T, got, want convo.History) {
	if len(got) != len(want) {
		rt.Fatalf("%d messages, model has %d", len(got), len(want))
	}
	for i := range got {
		w := want[i]
		if w.ID == "?" {
			w.ID = got[i].ID
		}
		if !got[i].Equal(w) {
			g, _ := convo.AppendMessage(nil, got[i])
			m, _ := convo.AppendMessage(nil, w)
			rt.Fatalf("messages[%d] differs\ngot   %s\nmodel %s", i, g, m)
		}
	}
}
