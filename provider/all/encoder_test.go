package all_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/all"
)

// Every format either has encoders whose output its own reply codec reads
// back, or says clearly that it has none.
func TestEncoders(t *testing.T) {
	readOnly := map[string]bool{"bedrock": true, "litert": true}
	m := convo.Assistant("Paris is sunny.")
	m.Finish = convo.FinishStop
	for _, f := range all.Formats() {
		t.Run(f.Name(), func(t *testing.T) {
			enc, err := provider.EncoderOf(f)
			_, byName := all.Encoder(f.Name())
			if readOnly[f.Name()] {
				if !errors.Is(err, provider.ErrNoEncoder) || !strings.Contains(err.Error(), f.Name()) {
					t.Fatalf("EncoderOf: %v, want ErrNoEncoder naming the format", err)
				}
				if !errors.Is(byName, provider.ErrNoEncoder) || !strings.Contains(byName.Error(), "openai-chat") {
					t.Fatalf("all.Encoder: %v, want ErrNoEncoder listing the formats that have one", byName)
				}
				return
			}
			if err != nil || byName != nil {
				t.Fatalf("EncoderOf: %v; all.Encoder: %v", err, byName)
			}
			got, _, err := f.DecodeReply(enc.EncodeReply(m, provider.StreamOptions{Model: "m"}), provider.Options{})
			if err != nil || got.Text() != m.Text() {
				t.Fatalf("EncodeReply read back: %q, %v", got.Text(), err)
			}
			var buf bytes.Buffer
			se := enc.NewStreamEncoder(&buf, provider.StreamOptions{Model: "m"})
			for _, d := range []provider.Delta{
				{Kind: provider.DeltaStart},
				{Kind: provider.DeltaPartStart, Index: 0, Part: &convo.Part{Type: convo.TypeText}},
				{Kind: provider.DeltaText, Index: 0, Text: m.Text()},
				{Kind: provider.DeltaPartEnd, Index: 0, Part: &m.Parts[0]},
				{Kind: provider.DeltaFinish, Finish: convo.FinishStop},
			} {
				if err := se.Write(d); err != nil {
					t.Fatalf("stream Write %v: %v", d.Kind, err)
				}
			}
			got, _, err = f.ReadStream(&buf, provider.Options{})
			if err != nil || got.Text() != m.Text() {
				t.Fatalf("stream read back: %q, %v\n%s", got.Text(), err, buf.String())
			}
		})
	}
	if _, err := all.Encoder("nope"); !errors.Is(err, provider.ErrUnknownFormat) {
		t.Errorf("all.Encoder(nope): %v", err)
	}
}

// The encoders EncoderOf gives never write another provider's (or a
// format's own uncarried) provider-run tools as calls a client would run;
// Anthropic's keeps its own as server tool blocks.
func TestEncodersLeaveOutServerTools(t *testing.T) {
	call := convo.ToolCall("srvtoolu_1", "web_search", json.RawMessage(`{"query":"weather Paris"}`))
	call.Server, call.Provider = "web_search", "anthropic"
	result := convo.Part{Type: convo.TypeToolResult, ID: "srvtoolu_1", Name: "web_search", Server: "web_search", Provider: "anthropic",
		Parts: []convo.Part{convo.Text("sunny")}}
	m := convo.Message{Role: convo.RoleAssistant, Parts: []convo.Part{call, result, convo.Text("It is sunny.")}, Finish: convo.FinishStop}
	for _, f := range all.Formats() {
		wrapped, err := provider.EncoderOf(f)
		if err != nil {
			continue
		}
		// The format's own encoders (the package's EncodeReply and
		// NewStreamEncoder functions) leave them out too, not only EncoderOf's.
		own := f.(provider.ReplyEncoder)
		for _, enc := range []provider.ReplyEncoder{wrapped, own} {
			testLeavesOutServerTools(t, f, enc, m)
		}
	}
}

func testLeavesOutServerTools(t *testing.T, f provider.Format, enc provider.ReplyEncoder, m convo.Message) {
	name := f.Name()
	if _, ok := enc.(provider.Format); ok {
		name += "/own"
	}
	t.Run(name, func(t *testing.T) {
		want := 0
		if f.Name() == "anthropic" {
			want = 2
		}
		servers := func(m convo.Message) (n int) {
			for _, p := range m.Parts {
				if p.Type == convo.TypeToolCall || p.Type == convo.TypeToolResult {
					if !p.IsServerTool() {
						t.Errorf("%s written as the client's own", p.Type)
					}
					n++
				}
			}
			return n
		}
		got, _, err := f.DecodeReply(enc.EncodeReply(m, provider.StreamOptions{Model: "m"}), provider.Options{})
		if err != nil || got.Text() != m.Text() || servers(got) != want {
			t.Errorf("EncodeReply read back: %v, %q, %d provider-run parts, want %d", err, got.Text(), servers(got), want)
		}
		var buf bytes.Buffer
		se := enc.NewStreamEncoder(&buf, provider.StreamOptions{Model: "m"})
		ds := []provider.Delta{{Kind: provider.DeltaStart}}
		for i := range m.Parts {
			ds = append(ds, provider.Delta{Kind: provider.DeltaPartStart, Index: i, Part: &m.Parts[i]},
				provider.Delta{Kind: provider.DeltaPartEnd, Index: i, Part: &m.Parts[i]})
		}
		for _, d := range append(ds, provider.Delta{Kind: provider.DeltaFinish, Finish: convo.FinishStop}) {
			if err := se.Write(d); err != nil {
				t.Fatalf("stream Write %v: %v", d.Kind, err)
			}
		}
		got, _, err = f.ReadStream(&buf, provider.Options{})
		if err != nil || servers(got) != want {
			t.Errorf("stream read back: %v, %d provider-run parts, want %d\n%s", err, servers(got), want, buf.String())
		}
	})
}
