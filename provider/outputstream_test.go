package provider_test

import (
	"bytes"
	"io"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/internal/stream"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/all"
)

// outputStreams are streams whose client tool call stands for a call of
// provider.OutputTool, the forced tool that carries structured output to a
// model without it: the tool is renamed in every event. The recorded ones
// are real (pydantic-ai's own output tool, final_result, is the same
// device); the others have the call's arguments in several pieces, with
// white space between tokens.
var outputStreams = []struct{ name, format, file, framing, tool string }{
	{"anthropic-recorded", "anthropic", "anthropic/testdata/recorded/vercel-anthropic-tool-search-regex.1.stream1.chunks.txt", "ndjson", "get_temp_data"},
	{"anthropic-recorded-empty", "anthropic", "anthropic/testdata/recorded/llm-anthropic-tool-calls.sse", "sse", "pelican_name_generator"},
	{"anthropic-pieces", "anthropic", "anthropic/testdata/reply/tool_use.sse", "sse", "get_weather"},
	{"bedrock-recorded", "bedrock", "bedrock/testdata/recorded/pydantic-code-execution.eventstream", "eventstream", "final_result"},
	{"bedrock-pieces", "bedrock", "bedrock/testdata/replies/tool_use.bin", "eventstream", "get_weather"},
}

// replay is a stream.Source of events read before.
type replay []provider.Event

func (e *replay) Next() (provider.Event, error) {
	if len(*e) == 0 {
		return provider.Event{}, io.EOF
	}
	ev := (*e)[0]
	*e = (*e)[1:]
	return ev, nil
}

// TestOutputToolStream: a streamed call of the output tool reaches the
// client as what it asked for, text: the deltas carry its arguments as
// text pieces from the start, never a tool call, and the turn ends as
// finished; the message is the one the non-streamed reading gives (the
// call read back as text, OutputCallsAsText), with no warning the
// stream's plain reading does not give; and every client format's stream
// written from the deltas reads back as that text, with no call.
func TestOutputToolStream(t *testing.T) {
	for _, s := range outputStreams {
		t.Run(s.name, func(t *testing.T) {
			data, err := os.ReadFile(s.file)
			if err != nil {
				t.Fatal(err)
			}
			orig := replay(events(t, s.framing, data))
			var renamed replay
			for _, ev := range orig {
				ev.Data = bytes.ReplaceAll(ev.Data, []byte(`"name":"`+s.tool+`"`), []byte(`"name":"`+provider.OutputTool+`"`))
				renamed = append(renamed, ev)
			}
			rc, err := all.Lookup(s.format)
			if err != nil {
				t.Fatal(err)
			}
			// The reply as the non-streamed reading gives it: the call
			// read back as text.
			want, _, err := stream.Feed(&orig, rc.NewAccumulator(provider.Options{}))
			if err != nil {
				t.Fatal(err)
			}
			out := -1
			for i, p := range want.Parts {
				if p.Name == s.tool {
					want.Parts[i].Name, out = provider.OutputTool, i
				}
			}
			if out < 0 || !provider.OutputCallsAsText(&want) || want.Finish != convo.FinishStop {
				t.Fatalf("no call of %s to read as text in %+v", s.tool, want)
			}
			whole := append(replay(nil), renamed...)
			plain, plainWarns, err := stream.Feed(&whole, rc.NewAccumulator(provider.Options{}))
			if err != nil || !reflect.DeepEqual(plain, want) {
				t.Fatalf("read whole: %v\n got %+v\nwant %+v", err, plain, want)
			}

			dr := provider.NewDeltaReader(rc.NewAccumulator(provider.Options{}))
			ds, err := readDeltas(dr, &renamed)
			if err != nil {
				t.Fatal(err)
			}
			ds, got, warns, err := dr.Finish(ds)
			if err != nil || !reflect.DeepEqual(got, want) {
				t.Fatalf("streamed: %v\n got %+v\nwant %+v", err, got, want)
			}
			if !reflect.DeepEqual(warns, plainWarns) {
				t.Errorf("warnings %v, want those of the plain reading, %v", warns, plainWarns)
			}
			var text strings.Builder
			for _, d := range ds {
				switch {
				case d.Kind == provider.DeltaArgs && d.Index == out,
					d.Kind == provider.DeltaPartStart && d.Part.Type == convo.TypeToolCall && d.Part.Name == provider.OutputTool:
					t.Fatalf("the output call streamed as a call: %+v", d)
				case d.Kind == provider.DeltaPartStart && d.Index == out && d.Part.Type != convo.TypeText:
					t.Fatalf("the output call started as %s", d.Part.Type)
				case d.Kind == provider.DeltaText && d.Index == out:
					text.WriteString(d.Text)
				case d.Kind == provider.DeltaFinish && d.Finish != convo.FinishStop:
					t.Errorf("finish %q", d.Finish)
				}
			}
			if text.String() != want.Parts[out].Text {
				t.Errorf("streamed text %q, want %q", text.String(), want.Parts[out].Text)
			}

			for _, f := range encoded {
				body, got, err := encode(t, f.format, f.framing, ds)
				if err != nil {
					t.Fatalf("%s: %v", f.format, err)
				}
				if gv, wv := viewOf(got), viewOf(want); gv.Text != wv.Text || len(gv.Calls) != 0 || gv.Finish != convo.FinishStop || bytes.Contains(body, []byte(provider.OutputTool)) {
					t.Errorf("%s: got %+v, want the text %q and a stop\n%s", f.format, gv, wv.Text, body)
				}
			}
		})
	}
}
