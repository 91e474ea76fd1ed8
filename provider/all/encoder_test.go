package all_test

import (
	"bytes"
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
