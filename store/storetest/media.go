package storetest

import (
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/store"
)

// MediaImage returns n bytes standing for an image: random, so they do not
// compress, and the same for the same seed.
func MediaImage(seed uint64, n int) []byte {
	r := rand.New(rand.NewPCG(seed, seed))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// MediaStore is the part of a backend a media test looks into: how many
// blobs it holds.
type MediaStore interface {
	store.Store
	Blobs(t *testing.T) int
}

// RunMedia checks that inline media comes back byte for byte from every
// read, is kept once across messages, conversations and tenants, and goes
// when nothing references it (deletes, forks deleted, expired content).
func RunMedia(t *testing.T, s MediaStore) {
	h, png := mediaHistory()
	want, err := convo.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	check := func(tenant, id string) {
		t.Helper()
		checkMedia(t, s, want, tenant, id)
	}
	a := mustCreate(t, s, store.Conversation{ID: "a", Tenant: "t"}, h[:2]...)
	mustAppend(t, s, a, h[2:]...)
	check("t", "a")
	blobs := s.Blobs(t) // the image once, the audio once (odd stays inline)
	if blobs != 2 {
		t.Fatalf("%d blobs after one conversation, want 2", blobs)
	}
	mustCreate(t, s, store.Conversation{ID: "b", Tenant: "t"}, h...)
	mustCreate(t, s, store.Conversation{ID: "a", Tenant: "u"}, h...)
	mustFork(t, s, "t", "a", 3, store.Conversation{ID: "f", Tenant: "t"})
	check("t", "b")
	check("u", "a")
	if n := s.Blobs(t); n != blobs {
		t.Fatalf("%d blobs after the same media in three conversations and a fork, want %d", n, blobs)
	}
	word := string(png.Data[100:140])
	if hits, _, err := s.Search(ctx(t), "t", word, store.SearchOptions{}); err != nil || len(hits) != 0 {
		t.Errorf("search for base64 found %d hits, %v", len(hits), err)
	}

	// The other tenant's copy and the fork keep the media while t's go.
	if err := s.Delete(ctx(t), "t", "a"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.DeleteMessage(ctx(t), "t", "b", 1, h[0].ID); err != nil {
		t.Fatal(err)
	}
	check("u", "a")
	if n := s.Blobs(t); n != blobs {
		t.Fatalf("%d blobs while references remain, want %d", n, blobs)
	}
	for _, id := range []string{"b", "f"} {
		if err := s.Delete(ctx(t), "t", id); err != nil {
			t.Fatal(err)
		}
	}
	if e, ok := s.(store.ContentExpirer); ok {
		if _, err := e.ExpireContent(ctx(t), "u", "a", time.Now()); err != nil {
			t.Fatal(err)
		}
	} else if err := s.Delete(ctx(t), "u", "a"); err != nil {
		t.Fatal(err)
	}
	if n := s.Blobs(t); n != 0 {
		t.Fatalf("%d blobs left when no message references them", n)
	}
}

// mediaHistory is RunMedia's history: an image twice, an odd base64 image
// that must stay as it came, and audio in a tool result. png is the image.
func mediaHistory() (h convo.History, png convo.Part) {
	img := MediaImage(1, 40_000)
	// Valid base64 with non-zero padding bits: it decodes to bytes whose
	// encoding differs, so it must be kept as it came.
	odd := []byte(base64.StdEncoding.EncodeToString(MediaImage(2, 2999)))
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	for i := range alphabet {
		if alphabet[i] == odd[len(odd)-2] {
			odd[len(odd)-2] = alphabet[i|1]
			break
		}
	}
	png = convo.Image("image/png", img)
	h = convo.History{
		convo.User("look", png, convo.Part{Type: convo.TypeImage, MediaType: "image/png", Data: string(odd)}),
		convo.Assistant("", convo.ToolCall("c1", "shot", []byte(`{"n":1}`))),
		convo.ToolResults(convo.ToolResultParts("c1", "shot", png, convo.Audio("audio/wav", MediaImage(3, 5000)))),
		convo.Assistant("a cat"),
	}
	for i := range h {
		h[i].ID = fmt.Sprintf("m%d", i)
	}
	return h, png
}

// checkMedia checks that conversation id of tenant reads back as the
// canonical bytes want from Load, Message and LoadRange.
func checkMedia(t *testing.T, s MediaStore, want []byte, tenant, id string) {
	t.Helper()
	got, _ := mustLoad(t, s, tenant, id)
	b, err := convo.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != string(want) {
		t.Fatalf("%s/%s: canonical bytes differ after a round trip", tenant, id)
	}
	for i := range got {
		m, err := s.Message(ctx(t), tenant, id, got[i].ID)
		if err != nil || !m.Equal(got[i]) {
			t.Fatalf("%s/%s: Message(%s) differs: %v", tenant, id, got[i].ID, err)
		}
	}
	r, _, err := s.LoadRange(ctx(t), tenant, id, 2, 1)
	if err != nil || len(r) != 1 || !r[0].Equal(got[2]) {
		t.Fatalf("%s/%s: LoadRange(2, 1): %v", tenant, id, err)
	}
}

// AgentRun stores the record of an agent run of turns turns in which every
// fifth user message carries the same screenshot (a 40 KB PNG, random so
// it does not compress). With resend false it appends each turn's two new
// messages to one conversation, as a gateway does; with resend true each
// turn stores the whole history so far as a new conversation, as a logger
// that sees only requests does. It returns the number of messages stored.
func AgentRun(tb testing.TB, s store.Store, run int, turns int, resend bool) int {
	png := convo.Image("image/png", MediaImage(7, 40_000))
	var h convo.History
	stored := 0
	var c store.Conversation
	for i := range turns {
		u := convo.User(fmt.Sprintf("step %d: what next?", i))
		if i%5 == 0 {
			u.Parts = append(u.Parts, png)
		}
		a := convo.Assistant(fmt.Sprintf("Click the button at step %d.", i))
		u.ID, a.ID = fmt.Sprintf("u%d", i), fmt.Sprintf("a%d", i)
		h = append(h, u, a)
		var err error
		switch {
		case resend:
			_, err = s.Create(tb.Context(), store.Conversation{ID: fmt.Sprintf("run%d-%d", run, i)}, h...)
			stored += len(h)
		case i == 0:
			c, err = s.Create(tb.Context(), store.Conversation{ID: fmt.Sprintf("run%d", run)}, h...)
			stored += 2
		default:
			c, err = s.Append(tb.Context(), "", c.ID, c.Version, u, a)
			stored += 2
		}
		if err != nil {
			tb.Fatal(err)
		}
	}
	return stored
}
