package openai

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/convo-go/convo/internal/stream"
	"github.com/convo-go/convo/provider"
)

func TestMergeDelta(t *testing.T) {
	for _, c := range []struct{ pieces, want string }{
		{`"We need"|" to answer"`, `"We need to answer"`},
		{`null|"a"`, `"a"`},
		{`"a"|7`, `7`},
		{`1|2`, `2`},
		{`{"type":"x","text":"a"}|{"type":"y","text":"b","more":true}`, `{"type":"y","text":"ab","more":true}`},
		{`[{"type":"reasoning.text","text":"We","index":0}]|[{"type":"reasoning.text","text":" need","index":0}]`,
			`[{"type":"reasoning.text","text":"We need","index":0}]`},
		{`[{"text":"a","index":0}]|[{"text":"b","index":1}]|[{"text":"c","index":0}]`, `[{"text":"ac","index":0},{"text":"b","index":1}]`},
		{`["a"]|["b"]`, `["a","b"]`},
		{`[{"text":"a","index":5}]|[{"text":"b"}]`, `[{"text":"a","index":5},{"text":"b"}]`},
		{`{"a":1}|[1]`, `[1]`},
	} {
		var got []byte
		for _, p := range strings.Split(c.pieces, "|") {
			got = mergeDelta(got, []byte(p))
		}
		if string(got) != c.want {
			t.Errorf("%s: got %s, want %s", c.pieces, got, c.want)
		}
	}
}

// TestStreamKeepsUnknownDeltaMembers: members of a delta the reader has no
// field for (OpenRouter's reasoning) end up in the message as they do when
// the same reply is read whole.
func TestStreamKeepsUnknownDeltaMembers(t *testing.T) {
	stream := "data: {\"id\":\"g\",\"model\":\"m\",\"created\":1,\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"reasoning\":\"We \"}}]}\n\n" +
		"data: {\"id\":\"g\",\"model\":\"m\",\"created\":1,\"choices\":[{\"index\":0,\"delta\":{\"reasoning\":\"think\",\"content\":\"Hi\"}}]}\n\n" +
		"data: {\"id\":\"g\",\"model\":\"m\",\"created\":1,\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n"
	body := `{"id":"g","model":"m","created":1,"choices":[{"index":0,"message":{"role":"assistant","content":"Hi","refusal":null,"reasoning":"We think"},"finish_reason":"stop"}]}`
	got, _, err := Chat().ReadStream(bytes.NewReader([]byte(stream)), provider.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want, _, err := Chat().DecodeReply([]byte(body), provider.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !got.Equal(want) {
		t.Errorf("streamed:\n%s\nread whole:\n%s", msgJSON(t, got), msgJSON(t, want))
	}
}

// TestLongStreamedTexts checks the long texts of a streamed Chat reply,
// which the accumulator puts into the message itself instead of writing
// them into the body it decodes (standIns): the message is the one the
// body with every text in it decodes to, and the one the same reply read
// whole gives.
func TestLongStreamedTexts(t *testing.T) {
	piece := `a "quoted" line é€𝄞\n\t<&>`
	delta := func(key string, i int) string {
		s, _ := json.Marshal(fmt.Sprintf("%s %d %s", key, i, piece))
		return `data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"` + key + `":` + string(s) + `},"finish_reason":null}]}` + "\n\n"
	}
	for _, keys := range [][]string{{"content"}, {"reasoning_content", "content"}, {"refusal"}, {"content", "annotations"}} {
		var b strings.Builder
		b.WriteString(`data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant"},"finish_reason":null}]}` + "\n\n")
		for _, k := range keys {
			for i := 0; i < 3000; i++ {
				if k == "annotations" {
					b.WriteString(`data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"annotations":[{"type":"url_citation","url_citation":{"url":"https://example.com","title":"x","start_index":0,"end_index":4}}]},"finish_reason":null}]}` + "\n\n")
					break
				}
				b.WriteString(delta(k, i))
			}
		}
		b.WriteString(`data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}` + "\n\ndata: [DONE]\n\n")
		acc := newChatAcc(provider.Options{})
		if _, _, err := stream.Feed(stream.NewSSE(strings.NewReader(b.String())), acc); err != nil {
			t.Fatal(err)
		}
		got, _, err := acc.Message()
		if err != nil {
			t.Fatalf("%v: %v", keys, err)
		}
		long := acc.first.standIns()
		if want := keys[len(keys)-1] != "annotations"; (len(long) > 0) != want {
			t.Fatalf("%v: %d texts stood in for", keys, len(long))
		}
		body := acc.body(&acc.first, nil)
		want, _, err := decodeChatReply(body, acc.bodyOpts())
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%v: the message differs from the body's with its texts", keys)
		}
		whole, _, err := Chat().DecodeReply(body, provider.Options{})
		if err != nil || !reflect.DeepEqual(got, whole) {
			t.Errorf("%v: the message differs from the reply read whole (%v)", keys, err)
		}
	}
}
