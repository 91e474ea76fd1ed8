package sdktest

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/internal/stream"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/bedrock"
)

// TestEventStreamSDKEncoder: messages the SDK's own event-stream encoder
// writes — every header type — read back equal with convo's reader.
func TestEventStreamSDKEncoder(t *testing.T) {
	uuid := [16]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	when := time.UnixMilli(1_764_000_000_123).UTC()
	msgs := []eventstream.Message{
		{Headers: eventstream.Headers{
			{Name: ":event-type", Value: eventstream.StringValue("contentBlockDelta")},
			{Name: ":content-type", Value: eventstream.StringValue("application/json")},
			{Name: ":message-type", Value: eventstream.StringValue("event")},
		}, Payload: []byte(`{"contentBlockIndex":0,"delta":{"text":"Hello"},"p":"abcdef"}`)},
		{Headers: eventstream.Headers{
			{Name: "true", Value: eventstream.BoolValue(true)},
			{Name: "false", Value: eventstream.BoolValue(false)},
			{Name: "int8", Value: eventstream.Int8Value(-8)},
			{Name: "int16", Value: eventstream.Int16Value(-1600)},
			{Name: "int32", Value: eventstream.Int32Value(320000)},
			{Name: "int64", Value: eventstream.Int64Value(-64_000_000_000)},
			{Name: "bytes", Value: eventstream.BytesValue([]byte{0, 1, 2, 255})},
			{Name: "string", Value: eventstream.StringValue("héllo")},
			{Name: "timestamp", Value: eventstream.TimestampValue(when)},
			{Name: "uuid", Value: eventstream.UUIDValue(uuid)},
			{Name: ":event-type", Value: eventstream.StringValue("metadata")},
		}, Payload: nil},
		{Headers: eventstream.Headers{
			{Name: ":exception-type", Value: eventstream.StringValue("throttlingException")},
			{Name: ":message-type", Value: eventstream.StringValue("exception")},
		}, Payload: []byte(`{"message":"slow down"}`)},
	}
	var buf bytes.Buffer
	enc := eventstream.NewEncoder()
	for _, m := range msgs {
		if err := enc.Encode(&buf, m); err != nil {
			t.Fatal(err)
		}
	}
	r := stream.NewEventStream(bytes.NewReader(buf.Bytes()))
	want := [][]stream.EventStreamHeader{
		{{Name: ":event-type", Value: "contentBlockDelta"}, {Name: ":content-type", Value: "application/json"}, {Name: ":message-type", Value: "event"}},
		{{Name: "true", Value: true}, {Name: "false", Value: false}, {Name: "int8", Value: int8(-8)}, {Name: "int16", Value: int16(-1600)},
			{Name: "int32", Value: int32(320000)}, {Name: "int64", Value: int64(-64_000_000_000)}, {Name: "bytes", Value: []byte{0, 1, 2, 255}},
			{Name: "string", Value: "héllo"}, {Name: "timestamp", Value: when}, {Name: "uuid", Value: uuid}, {Name: ":event-type", Value: "metadata"}},
		{{Name: ":exception-type", Value: "throttlingException"}, {Name: ":message-type", Value: "exception"}},
	}
	for i, m := range msgs {
		got, err := r.ReadMessage()
		if err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
		if !reflect.DeepEqual(got.Headers, want[i]) {
			t.Errorf("message %d headers\ngot  %#v\nwant %#v", i, got.Headers, want[i])
		}
		if !bytes.Equal(got.Payload, m.Payload) {
			t.Errorf("message %d payload %q, want %q", i, got.Payload, m.Payload)
		}
	}
	// And as events.
	evs := stream.NewEventStream(bytes.NewReader(buf.Bytes()))
	for i, want := range []provider.Event{
		{Type: "contentBlockDelta", Data: msgs[0].Payload},
		{Type: "metadata", Data: []byte{}},
		{Type: "throttlingException", Data: msgs[2].Payload},
	} {
		got, err := evs.Next()
		if err != nil || got.Type != want.Type || !bytes.Equal(got.Data, want.Data) {
			t.Errorf("event %d: %v %q %q", i, err, got.Type, got.Data)
		}
	}
}

// TestEventStreamAWSVectors reads the event-stream test vectors AWS ships
// with the SDK module (testdata/encoded and testdata/decoded): positive
// ones decode to the documented headers and payload, negative ones fail.
func TestEventStreamAWSVectors(t *testing.T) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream").Output()
	if err != nil {
		t.Skipf("cannot locate the SDK module: %v", err)
	}
	dir := filepath.Join(strings.TrimSpace(string(out)), "testdata")
	positive, _ := filepath.Glob(filepath.Join(dir, "encoded", "positive", "*"))
	negative, _ := filepath.Glob(filepath.Join(dir, "encoded", "negative", "*"))
	if len(positive) == 0 || len(negative) == 0 {
		t.Fatalf("no vectors in %s", dir)
	}
	for _, f := range positive {
		t.Run("positive/"+filepath.Base(f), func(t *testing.T) {
			enc, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			dec, err := os.ReadFile(filepath.Join(dir, "decoded", "positive", filepath.Base(f)))
			if err != nil {
				t.Fatal(err)
			}
			var want struct {
				Headers []struct {
					Name  string          `json:"name"`
					Type  int             `json:"type"`
					Value json.RawMessage `json:"value"`
				} `json:"headers"`
				Payload []byte `json:"payload"`
			}
			if err := json.Unmarshal(dec, &want); err != nil {
				t.Fatal(err)
			}
			m, err := stream.NewEventStream(bytes.NewReader(enc)).ReadMessage()
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(m.Payload, want.Payload) {
				t.Errorf("payload %q, want %q", m.Payload, want.Payload)
			}
			if len(m.Headers) != len(want.Headers) {
				t.Fatalf("%d headers, want %d", len(m.Headers), len(want.Headers))
			}
			for i, h := range want.Headers {
				got := m.Headers[i]
				if got.Name != h.Name {
					t.Errorf("header %d name %q, want %q", i, got.Name, h.Name)
				}
				// The vectors give numbers as JSON numbers and byte values
				// (strings too) as base64.
				var v any
				switch h.Type {
				case 0, 1:
					var b bool
					json.Unmarshal(h.Value, &b)
					v = b
				case 2:
					var n int8
					json.Unmarshal(h.Value, &n)
					v = n
				case 3:
					var n int16
					json.Unmarshal(h.Value, &n)
					v = n
				case 4:
					var n int32
					json.Unmarshal(h.Value, &n)
					v = n
				case 5:
					var n int64
					json.Unmarshal(h.Value, &n)
					v = n
				case 6:
					var b []byte
					json.Unmarshal(h.Value, &b)
					v = b
				case 7:
					var b []byte
					json.Unmarshal(h.Value, &b)
					v = string(b)
				case 8:
					var n int64
					json.Unmarshal(h.Value, &n)
					v = time.UnixMilli(n).UTC()
				case 9:
					var b []byte
					json.Unmarshal(h.Value, &b)
					v = [16]byte(b)
				}
				if !reflect.DeepEqual(got.Value, v) {
					t.Errorf("header %q = %#v, want %#v", h.Name, got.Value, v)
				}
			}
		})
	}
	for _, f := range negative {
		t.Run("negative/"+filepath.Base(f), func(t *testing.T) {
			enc, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := stream.NewEventStream(bytes.NewReader(enc)).ReadMessage(); err == nil {
				t.Error("no error")
			}
		})
	}
}

// TestBedrockSDKReadsConvoStreams serves convo's binary stream fixtures to
// the SDK's ConverseStream client: the SDK must read every event, and what
// it reads — text, reasoning, tool input, stop reason, usage — must agree
// with convo's accumulated message.
func TestBedrockSDKReadsConvoStreams(t *testing.T) {
	files, _ := filepath.Glob("../provider/bedrock/testdata/replies/*.bin")
	// and the real ConverseStream bodies recorded from AWS
	recorded, _ := filepath.Glob("../provider/bedrock/testdata/recorded/*.eventstream")
	files = append(files, recorded...)
	if len(files) < 5 || len(recorded) == 0 {
		t.Fatalf("only %d streams", len(files))
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			bin, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			fake := &fakeBedrock{respond: func(*http.Request) (int, string, []byte) {
				return 200, "application/vnd.amazon.eventstream", bin
			}}
			out, err := bedrockClient(fake).ConverseStream(context.Background(), &bedrockruntime.ConverseStreamInput{
				ModelId:  aws.String("m"),
				Messages: []types.Message{{Role: types.ConversationRoleUser, Content: []types.ContentBlock{&types.ContentBlockMemberText{Value: "x"}}}},
			})
			if err != nil {
				t.Fatal(err)
			}
			es := out.GetStream()
			texts := map[int32]*strings.Builder{}
			get := func(i *int32) *strings.Builder {
				if texts[*i] == nil {
					texts[*i] = &strings.Builder{}
				}
				return texts[*i]
			}
			var stop types.StopReason
			var usage *types.TokenUsage
			var sdkErr error
			for ev := range es.Events() {
				switch v := ev.(type) {
				case *types.ConverseStreamOutputMemberContentBlockDelta:
					switch d := v.Value.Delta.(type) {
					case *types.ContentBlockDeltaMemberText:
						get(v.Value.ContentBlockIndex).WriteString(d.Value)
					case *types.ContentBlockDeltaMemberToolUse:
						get(v.Value.ContentBlockIndex).WriteString(aws.ToString(d.Value.Input))
					case *types.ContentBlockDeltaMemberReasoningContent:
						switch r := d.Value.(type) {
						case *types.ReasoningContentBlockDeltaMemberText:
							get(v.Value.ContentBlockIndex).WriteString(r.Value)
						case *types.ReasoningContentBlockDeltaMemberRedactedContent:
							get(v.Value.ContentBlockIndex).WriteString(base64.StdEncoding.EncodeToString(r.Value))
						}
					}
				case *types.ConverseStreamOutputMemberMessageStop:
					stop = v.Value.StopReason
				case *types.ConverseStreamOutputMemberMetadata:
					usage = v.Value.Usage
				case *types.UnknownUnionMember:
					t.Errorf("the SDK does not know event %q", v.Tag)
				}
			}
			if err := es.Err(); err != nil {
				sdkErr = err
			}
			es.Close()

			m, _, err := bedrock.Converse().ReadStream(bytes.NewReader(bin), provider.Options{})
			if sdkErr != nil || err != nil {
				// Both must see the failure (the exception fixture), with
				// the provider's message.
				var se *provider.APIError
				if sdkErr == nil || !errors.As(err, &se) || !strings.Contains(sdkErr.Error(), se.Message) {
					t.Fatalf("SDK error %v, convo error %v", sdkErr, err)
				}
				if m.Text() != "Paris is" {
					t.Errorf("partial message %q", m.Text())
				}
				return
			}
			for i, p := range m.Parts {
				var convoText string
				switch p.Type {
				case convo.TypeText:
					convoText = p.Text
				case convo.TypeReasoning:
					convoText = p.Text + p.Encrypted
				case convo.TypeToolCall:
					convoText = string(p.Args)
				default:
					continue
				}
				sdkText := ""
				if b := texts[int32(i)]; b != nil {
					sdkText = b.String()
				}
				if p.Type == convo.TypeToolCall {
					if sdkText == "" {
						sdkText = "{}"
					}
					if !sameJSON(t, []byte(sdkText), []byte(convoText)) {
						t.Errorf("part %d: SDK input %s, convo args %s", i, sdkText, convoText)
					}
				} else if sdkText != convoText {
					t.Errorf("part %d: SDK %q, convo %q", i, sdkText, convoText)
				}
			}
			if string(stop) == "" || !strings.Contains(string(m.Native["bedrock"]), `"stopReason":"`+string(stop)+`"`) {
				t.Errorf("stop reason: SDK %q, convo native %s", stop, m.Native["bedrock"])
			}
			if usage == nil || m.Usage == nil || int64(aws.ToInt32(usage.OutputTokens)) != m.Usage.Output ||
				int64(aws.ToInt32(usage.TotalTokens)) != m.Usage.Total {
				t.Errorf("usage: SDK %+v, convo %+v", usage, m.Usage)
			}
		})
	}
}
