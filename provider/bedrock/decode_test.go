package bedrock

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/internal/jsonx"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/internal/codectest"
)

func TestDecodeErrors(t *testing.T) {
	msg := func(content string) string {
		return `{"messages":[{"role":"user","content":[{"text":"hi"}]},{"role":"assistant","content":[` + content + `]}]}`
	}
	user := func(content string) string { return `{"messages":[{"role":"user","content":[` + content + `]}]}` }
	tests := []struct {
		name, body, want string
	}{
		{"not JSON", `{"messages":`, "messages: want an array of messages, got end of input (line 1, column 13)"},
		{"not an object", `[]`, "got array, want object"},
		{"trailing data", `{"messages":[]} x`, "unexpected data after the JSON value"},
		{"no conversation", `{"modelId":"m"}`, `neither "system" nor "messages"`},
		{"messages not an array", `{"messages":{}}`, "messages: want an array of messages, got object"},
		// A string system is how Anthropic spells it: the error says so.
		{"system not an array", `{"system":"be brief","messages":[]}`, `this looks like an anthropic request, not bedrock (top-level "system"): decode it as anthropic`},
		{"system an object", `{"system":{"text":"be brief"},"messages":[]}`, "system: got object, want array"},
		{"no role", `{"messages":[{"content":[]}]}`, `messages[0]: message has no "role"`},
		{"no content", `{"messages":[{"role":"user"}]}`, `messages[0]: message has no "content"`},
		{"unknown role", `{"messages":[{"role":"tool","content":[]}]}`, `messages[0].role: unknown role "tool"`},
		{"role not a string", `{"messages":[{"role":1,"content":[]}]}`, `messages[0].role: got number, want string`},
		{"content not an array", `{"messages":[{"role":"user","content":"hi"}]}`, "messages[0].content: want an array of content blocks, got string"},
		{"duplicate key", `{"messages":[{"role":"user","role":"user","content":[]}]}`, `messages[0]: duplicate key "role"`},
		{"block not an object", user(`"hi"`), "messages[0].content[0]: want a content block object, got string"},
		{"empty block", user(`{}`), "messages[0].content[0]: empty content block"},
		{"two members", user(`{"text":"a","image":{}}`), `messages[0].content[0]: content block has more than one member ("text" and "image")`},
		{"text not a string", user(`{"text":5}`), "messages[0].content[0].text: got number, want string"},
		{"image without source", user(`{"image":{"format":"png"}}`), `messages[0].content[0].image: no "source"`},
		{"empty source", user(`{"image":{"format":"png","source":{}}}`), "messages[0].content[0].image.source: empty source"},
		{"two sources", user(`{"image":{"format":"png","source":{"bytes":"","s3Location":{"uri":"s3://a/b"}}}}`), `messages[0].content[0].image.source: source has more than one member`},
		{"bad base64", user(`{"text":"x"},{"image":{"format":"png","source":{"bytes":"iVBO!w=="}}}`), "messages[0].content[1].image.source.bytes: malformed base64 at offset 4"},
		{"s3 without uri", user(`{"video":{"format":"mp4","source":{"s3Location":{"bucketOwner":"1"}}}}`), `messages[0].content[0].video.source.s3Location: no "uri"`},
		{"format not a string", user(`{"document":{"format":1,"name":"n","source":{"text":"x"}}}`), "messages[0].content[0].document.format: got number, want string"},
		{"toolUse without id", msg(`{"toolUse":{"name":"f","input":{}}}`), `messages[1].content[0].toolUse: no "toolUseId"`},
		{"toolUse without name", msg(`{"toolUse":{"toolUseId":"t","input":{}}}`), `messages[1].content[0].toolUse: no "name"`},
		{"toolUse from the user", user(`{"toolUse":{"toolUseId":"t","name":"f","input":{}}}`), "messages[0].content[0]: toolUse in a user message"},
		{"toolResult without id", user(`{"toolResult":{"content":[]}}`), `messages[0].content[0].toolResult: no "toolUseId"`},
		{"toolResult content not an array", user(`{"toolResult":{"toolUseId":"t","content":{}}}`), "messages[0].content[0].toolResult.content: want an array, got object"},
		{"bad block in a result", user(`{"toolResult":{"toolUseId":"t","content":[{"text":"a"},{"json":{"a":}}]}}`), "messages[0].content[0].toolResult.content[1].json: invalid character '}'"},
		{"empty reasoning", msg(`{"reasoningContent":{}}`), "messages[1].content[0].reasoningContent: empty reasoningContent"},
		{"two reasoning members", msg(`{"reasoningContent":{"reasoningText":{"text":"a"},"redactedContent":"AA=="}}`), "messages[1].content[0].reasoningContent: reasoningContent has more than one member"},
		{"bad redacted", msg(`{"reasoningContent":{"redactedContent":"A"}}`), "messages[1].content[0].reasoningContent.redactedContent: malformed base64"},
		{"signature not a string", msg(`{"reasoningContent":{"reasoningText":{"text":"a","signature":null}}}`), "messages[1].content[0].reasoningContent.reasoningText.signature: got null, want string"},
		{"invalid UTF-8", user("{\"text\":\"\xff\"}"), "messages[0].content[0].text: invalid UTF-8"},
		{"system block", `{"system":[{"text":"a"},{"text":1}]}`, "system[1].text: got number, want string"},
		{"tool result in system message", `{"messages":[{"role":"system","content":[{"toolResult":{"toolUseId":"t","content":[]}}]}]}`, "messages[0].content[0]: toolResult in a system message"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, _, err := converse{}.Decode([]byte(tt.body), provider.Options{})
			if err == nil {
				t.Fatalf("no error; history %v", h)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got  %q\nwant %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error is not one line: %q", err)
			}
		})
	}
}

func TestDecodeLimits(t *testing.T) {
	body := codectest.ReadFile(t, "testdata/requests/full.json")
	_, _, err := converse{}.Decode(body, provider.Options{Limits: convo.Limits{MaxBytes: 100}})
	if !errors.Is(err, jsonx.ErrTooLarge) {
		t.Errorf("size limit: got %v", err)
	}
	deep := `{"messages":[{"role":"user","content":[{"toolResult":{"toolUseId":"t","content":[{"json":` +
		strings.Repeat("[", 40) + strings.Repeat("]", 40) + `}]}}]}]}`
	if _, _, err := (converse{}).Decode([]byte(deep), provider.Options{}); err != nil {
		t.Errorf("40 levels: %v", err)
	}
	_, _, err = converse{}.Decode([]byte(deep), provider.Options{Limits: convo.Limits{MaxDepth: 20}})
	if err == nil || !strings.Contains(err.Error(), "nesting deeper than 20") {
		t.Errorf("depth limit: got %v", err)
	}
}

// TestDecodeShapes checks what decoding makes of the Bedrock shapes that
// have no one-to-one convo counterpart.
func TestDecodeShapes(t *testing.T) {
	tests := []struct {
		name, body string
		want       string // the canonical history, as MarshalLines writes it
		warns      []string
	}{
		{
			name: "content before role, as the SDK writes it",
			body: `{"messages":[{"content":[{"text":"hi"}],"role":"user"}]}`,
			want: `{"role":"user","parts":[{"type":"text","text":"hi"}]}`,
		},
		{
			name: "text before the tool results is moved after them",
			body: `{"messages":[{"role":"user","content":[{"text":"go"}]},` +
				`{"role":"assistant","content":[{"toolUse":{"toolUseId":"t1","name":"f","input":{"a":1}}}]},` +
				`{"role":"user","content":[{"text":"here:"},{"toolResult":{"toolUseId":"t1","content":[{"text":"ok"}]}}]}]}`,
			want: `{"role":"user","parts":[{"type":"text","text":"go"}]}
{"role":"assistant","parts":[{"type":"tool_call","id":"t1","name":"f","args":{"a":1}}]}
{"role":"tool","parts":[{"type":"tool_result","id":"t1","name":"f","parts":[{"type":"text","text":"ok"}]}]}
{"role":"user","parts":[{"type":"text","text":"here:"}]}`,
			warns: []string{"messages[2]: blocks before the tool results moved after them: convo keeps tool results in a tool message of their own"},
		},
		{
			name: "cache points with nothing to close stay blocks",
			body: `{"system":[{"cachePoint":{"type":"default"}},{"text":"a"},{"cachePoint":{"type":"default"}},{"cachePoint":{"type":"default","ttl":"1h"}}],` +
				`"messages":[{"role":"user","content":[{"guardContent":{"text":{"text":"g"}}},{"cachePoint":{"type":"default"}},{"text":"b"},{"cachePoint":{"type":"ephemeral"}}]}]}`,
			want: `{"role":"system","parts":[{"type":"bedrock:cachePoint","native":{"bedrock":{"cachePoint":{"type":"default"}}}},{"type":"text","text":"a","cache":{}},{"type":"bedrock:cachePoint","native":{"bedrock":{"cachePoint":{"type":"default","ttl":"1h"}}}}]}
{"role":"user","parts":[{"type":"bedrock:guardContent","native":{"bedrock":{"guardContent":{"text":{"text":"g"}}}}},{"type":"bedrock:cachePoint","native":{"bedrock":{"cachePoint":{"type":"default"}}}},{"type":"text","text":"b"},{"type":"bedrock:cachePoint","native":{"bedrock":{"cachePoint":{"type":"ephemeral"}}}}]}`,
		},
		{
			name: "unknown members and variants are kept",
			body: `{"messages":[{"role":"user","content":[` +
				`{"image":{"format":"avif","source":{"bytes":"AAAA"},"error":{"message":"x"}}},` +
				`{"image":{"format":"png","source":{"uri":"https://x"}}},` +
				`{"toolAddition":{"name":"t"}}],"future":1}]}`,
			want: `{"role":"user","parts":[{"type":"image","media_type":"image/avif","data":"AAAA","native":{"bedrock":{"error":{"message":"x"},"format":"avif"}}},{"type":"bedrock:image","native":{"bedrock":{"image":{"format":"png","source":{"uri":"https://x"}}}}},{"type":"bedrock:toolAddition","native":{"bedrock":{"toolAddition":{"name":"t"}}}}],"native":{"bedrock":{"message":{"future":1}}}}`,
		},
		{
			name: "a server tool result with a cache point stays two blocks",
			body: `{"messages":[{"role":"user","content":[{"text":"q"}]},{"role":"assistant","content":[` +
				`{"toolResult":{"toolUseId":"s1","content":[]}},{"cachePoint":{"type":"default","ttl":"5m"}},` +
				`{"toolResult":{"toolUseId":"s2","content":[]}},{"cachePoint":{"type":"default"}},{"text":"done"}]}]}`,
			want: `{"role":"user","parts":[{"type":"text","text":"q"}]}
{"role":"assistant","parts":[{"type":"bedrock:toolResult","native":{"bedrock":{"toolResult":{"toolUseId":"s1","content":[]}}}},{"type":"bedrock:cachePoint","native":{"bedrock":{"cachePoint":{"type":"default","ttl":"5m"}}}},` +
				`{"type":"bedrock:toolResult","native":{"bedrock":{"toolResult":{"toolUseId":"s2","content":[]}}}},{"type":"bedrock:cachePoint","native":{"bedrock":{"cachePoint":{"type":"default"}}}},{"type":"text","text":"done"}]}`,
		},
		{
			name: "role system inside messages",
			body: `{"messages":[{"role":"system","content":[{"text":"s"}]},{"role":"user","content":[{"text":"u"}]}]}`,
			want: `{"role":"system","parts":[{"type":"text","text":"s"}]}
{"role":"user","parts":[{"type":"text","text":"u"}]}`,
			warns: []string{"messages[0]: role system inside messages is not documented by Bedrock: read as a system message"},
		},
		{
			name: "null system",
			body: `{"system":null,"messages":[]}`,
			want: ``,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, warns, err := converse{}.Decode([]byte(tt.body), provider.Options{})
			if err != nil {
				t.Fatal(err)
			}
			got, err := convo.MarshalLines(h)
			if err != nil {
				t.Fatal(err)
			}
			if strings.TrimSpace(string(got)) != tt.want {
				t.Errorf("got\n%s\nwant\n%s", got, tt.want)
			}
			if ws := warnStrings(warns); strings.Join(ws, "|") != strings.Join(tt.warns, "|") {
				t.Errorf("warnings %q, want %q", ws, tt.warns)
			}
			// Whatever was kept goes back as it came (apart from the order
			// the split changed).
			if len(tt.warns) == 0 {
				out, _, err := converse{}.Encode(h, provider.Options{Strict: true})
				if err != nil {
					t.Fatal(err)
				}
				if !codectest.SameJSON(t, out, codectest.Members(t, []byte(tt.body), "system", "messages")) && tt.body != `{"system":null,"messages":[]}` {
					t.Errorf("re-encoded\n%s\nwant\n%s", out, codectest.Members(t, []byte(tt.body), "system", "messages"))
				}
			}
		})
	}
}

// FuzzDecode checks that no body makes Decode panic, that what it accepts
// is a history Encode can write (with repair and placeholders on), and that
// decoding what Encode wrote gives the history back when Encode changed
// nothing.
func FuzzDecode(f *testing.F) {
	files, _ := filepath.Glob("testdata/requests/*.json")
	for _, file := range files {
		if strings.HasSuffix(file, ".convo.json") {
			continue
		}
		b, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"messages":[{"role":"user","content":[{"text":"a"},{"cachePoint":{"type":"default"}}]}]}`))
	f.Add([]byte(`{"system":[{"text":"s"}],"messages":[{"role":"assistant","content":[{"toolUse":{"toolUseId":"a b","name":"f","input":"x"}}]},{"role":"user","content":[{"toolResult":{"toolUseId":"a b","content":[{"json":1}],"status":"error"}}]}]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		h, _, err := converse{}.Decode(body, provider.Options{})
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("multi-line error %q", err)
			}
			return
		}
		out, warns, err := converse{}.Encode(h, provider.Options{Repair: true, Media: provider.MediaPlaceholder})
		if err != nil {
			// Only what JSON itself cannot carry may fail.
			if !strings.Contains(err.Error(), "invalid UTF-8") {
				t.Fatalf("encode of a decoded body: %v", err)
			}
			return
		}
		checkShape(t, out)
		if len(warns) > 0 {
			return
		}
		h2, _, err := converse{}.Decode(out, provider.Options{})
		if err != nil {
			t.Fatalf("decode of encoded %s: %v", out, err)
		}
		out2, _, err := converse{}.Encode(h2, provider.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if !codectest.SameJSON(t, out, out2) {
			t.Fatalf("encode∘decode is not stable:\n%s\n%s", out, out2)
		}
	})
}
