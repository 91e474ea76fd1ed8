package openai

import (
	"bytes"
	"strings"
	"testing"

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
