package openai

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/internal/jsonx"
	"github.com/convo-go/convo/internal/stream"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/internal/codectest"
)

// recordedServerItems returns the provider-run tool items of a recorded
// reply, compacted, by id: a body's output items, or a stream's
// output_item.done items; and the reply read as a message.
func recordedServerItems(t testing.TB, path string) (map[string][]byte, convo.Message) {
	t.Helper()
	data := codectest.ReadFile(t, path)
	items := map[string][]byte{}
	add := func(raw []byte) {
		c, err := jsonx.Compact(raw, 0)
		if err != nil {
			t.Fatal(err)
		}
		if serverOfItem(itemType(c)) != nil {
			items[itemMember(c, "id")] = c
		}
	}
	var m convo.Message
	var err error
	if strings.HasSuffix(path, ".json") {
		var body struct{ Output []json.RawMessage }
		if err := json.Unmarshal(data, &body); err != nil {
			t.Fatal(err)
		}
		for _, it := range body.Output {
			add(it)
		}
		m, _, err = Responses().(provider.ReplyCodec).DecodeReply(data, provider.Options{})
	} else {
		if strings.HasSuffix(path, ".chunks.txt") {
			data = codectest.SSEFromChunks(data, true)
		}
		for _, ev := range codectest.SSEData(data) {
			var e struct {
				Type string
				Item json.RawMessage
			}
			if json.Unmarshal(ev, &e) == nil && e.Type == "response.output_item.done" {
				add(e.Item)
			}
		}
		m, _, err = Responses().(provider.ReplyCodec).ReadStream(bytes.NewReader(data), provider.Options{})
	}
	if err != nil && m.Role == "" {
		t.Fatal(err)
	}
	return items, m
}

// TestServerItemsRecorded checks that the provider-run tool items of every
// recorded Responses reply that convo maps go back byte for byte: as
// request input items, in a reply body, through the stream encoder and
// the stream reader, and through canonical JSON.
func TestServerItemsRecorded(t *testing.T) {
	mapped := map[string]int{}
	files, _ := filepath.Glob("testdata/recorded/responses/*")
	for _, path := range files {
		if strings.HasSuffix(path, ".golden") || strings.HasSuffix(path, ".md") {
			continue
		}
		t.Run(filepath.Base(path), func(t *testing.T) {
			items, m := recordedServerItems(t, path)
			calls := 0
			for _, p := range m.Parts {
				if p.Type == convo.TypeToolCall && p.Server != "" {
					calls++
					mapped[p.Server]++
					if items[p.ID] == nil {
						t.Errorf("call %s answers no recorded item", p.ID)
					}
				}
			}
			if calls == 0 {
				return
			}
			enc, warns, err := EncodeItems(convo.History{m}, provider.Options{})
			if err != nil {
				t.Fatalf("EncodeItems: %v %v", err, warns)
			}
			checkItems(t, "input items", items, m, enc)
			var reply struct{ Output []json.RawMessage }
			if err := json.Unmarshal(EncodeResponsesReply(m, provider.StreamOptions{}), &reply); err != nil {
				t.Fatal(err)
			}
			checkItems(t, "reply body", items, m, reply.Output)

			var sse bytes.Buffer
			codectest.WriteDeltas(t, NewResponsesStreamEncoder(&sse, provider.StreamOptions{}), m)
			back, _, err := Responses().(provider.ReplyCodec).ReadStream(&sse, provider.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if !samePartsOf(back.ServerTools(), m.ServerTools()) {
				t.Errorf("stream encoder and reader: the provider-run tool parts differ")
			}
			if !strings.HasSuffix(path, ".json") {
				checkDeltas(t, path, m)
			}
			doc, err := convo.Marshal(convo.History{m})
			if err != nil {
				t.Fatal(err)
			}
			h, err := convo.Unmarshal(doc)
			if err != nil {
				t.Fatal(err)
			}
			if !samePartsOf(h[0].Parts, m.Parts) {
				t.Errorf("canonical JSON round trip changed the parts")
			}
		})
	}
	for _, kind := range []string{convo.ServerWebSearch, convo.ServerFileSearch, convo.ServerCodeExecution, convo.ServerMCP, convo.ServerImageGeneration} {
		if mapped[kind] == 0 {
			t.Errorf("no recorded %s call was mapped", kind)
		}
	}
}

func samePartsOf(a, b []convo.Part) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !a[i].Equal(b[i]) {
			return false
		}
	}
	return true
}

// checkItems checks that every mapped call of m comes back in got as the
// recorded item, byte for byte.
func checkItems(t *testing.T, what string, want map[string][]byte, m convo.Message, got []json.RawMessage) {
	t.Helper()
	byID := map[string][]byte{}
	for _, it := range got {
		byID[itemMember(it, "id")] = it
	}
	for _, p := range m.Parts {
		if p.Type != convo.TypeToolCall || p.Server == "" {
			continue
		}
		if g := byID[p.ID]; string(g) != string(want[p.ID]) {
			t.Errorf("%s: item %s\n got %.300s\nwant %.300s", what, p.ID, g, want[p.ID])
		}
	}
}

// TestServerItemShapes reads single items, checks what they map to, and
// writes them back.
func TestServerItemShapes(t *testing.T) {
	cases := []struct {
		name, item string
		want       string // the parts' types, server kinds and errors; "opaque" when kept whole
	}{
		{"web search", `{"id":"ws_1","type":"web_search_call","status":"completed","action":{"type":"search","query":"go"}}`, "tool_call:web_search"},
		{"web search in progress", `{"id":"ws_1","type":"web_search_call","status":"in_progress"}`, "opaque"},
		{"web search without action", `{"id":"ws_1","type":"web_search_call","status":"completed"}`, "opaque"},
		{"web search in another order", `{"type":"web_search_call","id":"ws_1","status":"completed","action":{"type":"search","query":"go"}}`, "opaque"},
		{"web search with a new member", `{"id":"ws_1","type":"web_search_call","status":"completed","action":{"type":"search"},"x":1}`, "tool_call:web_search"},
		{"mcp output", `{"id":"mcp_1","type":"mcp_call","status":"completed","approval_request_id":null,"arguments":"{\"a\":1}","error":null,"name":"add","output":"2","server_label":"calc"}`, "tool_call:mcp tool_result:mcp"},
		{"mcp error", `{"id":"mcp_1","type":"mcp_call","status":"failed","approval_request_id":null,"arguments":"{}","error":"boom","name":"add","output":null,"server_label":"calc"}`, "tool_call:mcp tool_result:mcp:error"},
		{"mcp error object", `{"id":"mcp_1","type":"mcp_call","status":"failed","arguments":"{}","error":{"type":"http_error","code":500},"name":"add","server_label":"calc"}`, "tool_call:mcp tool_result:mcp:error"},
		{"mcp output and error", `{"id":"mcp_1","type":"mcp_call","status":"completed","arguments":"{}","error":"x","name":"add","output":"y","server_label":"calc"}`, "opaque"},
		{"mcp malformed arguments", `{"id":"mcp_1","type":"mcp_call","status":"completed","arguments":"{\"a\":","name":"add","output":"","server_label":"calc"}`, "tool_call:mcp tool_result:mcp"},
		{"mcp escaped output", `{"id":"mcp_1","type":"mcp_call","status":"completed","arguments":"{}","name":"add","output":"caf\u00e9 \/","server_label":"calc"}`, "tool_call:mcp tool_result:mcp"},
		{"code logs and image", `{"id":"ci_1","type":"code_interpreter_call","status":"completed","code":"print(1)","container_id":"cntr_1","outputs":[{"type":"logs","logs":"1\n"},{"type":"image","url":"https://x/y.png"}]}`, "tool_call:code_execution tool_result:code_execution"},
		{"code no outputs", `{"id":"ci_1","type":"code_interpreter_call","status":"completed","code":"x=1","container_id":"cntr_1","outputs":[]}`, "tool_call:code_execution tool_result:code_execution"},
		{"code outputs not included", `{"id":"ci_1","type":"code_interpreter_call","status":"completed","code":"x=1","container_id":"cntr_1","outputs":null}`, "tool_call:code_execution"},
		{"code other output", `{"id":"ci_1","type":"code_interpreter_call","status":"completed","code":null,"container_id":"cntr_1","outputs":[{"type":"files","files":[]}]}`, "tool_call:code_execution tool_result:code_execution"},
		{"file search", `{"id":"fs_1","type":"file_search_call","status":"completed","queries":["q"],"results":[{"file_id":"f","score":0.5,"text":"t"}]}`, "tool_call:file_search tool_result:file_search"},
		{"file search results not included", `{"id":"fs_1","type":"file_search_call","status":"completed","queries":["q"],"results":null}`, "tool_call:file_search"},
		{"image", `{"id":"ig_1","type":"image_generation_call","status":"completed","output_format":"png","result":"iVBORw0KGgo=","revised_prompt":"a cat"}`, "tool_call:image_generation tool_result:image_generation"},
		{"image not base64", `{"id":"ig_1","type":"image_generation_call","status":"completed","result":"not base64!"}`, "opaque"},
		{"image generating", `{"id":"ig_1","type":"image_generation_call","status":"generating","result":null}`, "opaque"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h, warns, err := DecodeItems([]json.RawMessage{json.RawMessage(c.item)}, provider.Options{})
			if err != nil || len(warns) > 0 || len(h) != 1 {
				t.Fatalf("DecodeItems: %v %v %d messages", err, warns, len(h))
			}
			if got := shapeOf(h[0].Parts); got != c.want {
				t.Errorf("parts %s, want %s", got, c.want)
			}
			if problems := h.Validate(); problems != nil {
				t.Errorf("Validate: %v", problems)
			}
			items, warns, err := EncodeItems(h, provider.Options{})
			if err != nil || len(warns) > 0 || len(items) != 1 {
				t.Fatalf("EncodeItems: %v %v %d items", err, warns, len(items))
			}
			if string(items[0]) != c.item {
				t.Errorf("written back\n got %s\nwant %s", items[0], c.item)
			}
		})
	}
}

func shapeOf(ps []convo.Part) string {
	var out []string
	for _, p := range ps {
		if p.Raw != nil {
			out = append(out, "opaque")
			continue
		}
		s := string(p.Type) + ":" + p.Server
		if p.Error {
			s += ":error"
		}
		out = append(out, s)
	}
	return strings.Join(out, " ")
}

// TestServerItemsBuilt writes provider-run tool parts built by a program,
// without the members a decoded item keeps in Native.
func TestServerItemsBuilt(t *testing.T) {
	const id = "x_1"
	cases := []struct {
		name  string
		parts []convo.Part
		want  string
	}{
		{"web search", []convo.Part{convo.ServerToolCall(convo.ServerWebSearch, ProviderID, id, "web_search", json.RawMessage(`{"type":"search","query":"go"}`))},
			`{"id":"x_1","type":"web_search_call","action":{"type":"search","query":"go"}}`},
		{"mcp", []convo.Part{
			convo.ServerToolCall(convo.ServerMCP, ProviderID, id, "add", json.RawMessage(`{"a": 1}`)),
			convo.ServerToolResult(convo.ServerMCP, ProviderID, id, "", convo.Text("2"))},
			`{"id":"x_1","type":"mcp_call","arguments":"{\"a\":1}","name":"add","output":"2"}`},
		{"code", []convo.Part{
			convo.ServerToolCall(convo.ServerCodeExecution, ProviderID, id, "code_interpreter", json.RawMessage(`{"code":"1+1"}`)),
			convo.ServerToolResult(convo.ServerCodeExecution, ProviderID, id, "", convo.Text("2"))},
			`{"id":"x_1","type":"code_interpreter_call","code":"1+1","outputs":[{"type":"logs","logs":"2"}]}`},
		{"result alone", []convo.Part{
			convo.ServerToolResult(convo.ServerFileSearch, ProviderID, id, "", convo.JSON(json.RawMessage(`[]`)))},
			`{"id":"x_1","type":"file_search_call","results":[]}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := convo.History{{Role: convo.RoleAssistant, Parts: c.parts}}
			items, warns, err := EncodeItems(h, provider.Options{})
			if err != nil || len(warns) > 0 || len(items) != 1 {
				t.Fatalf("EncodeItems: %v %v %d items", err, warns, len(items))
			}
			if string(items[0]) != c.want {
				t.Errorf("\n got %s\nwant %s", items[0], c.want)
			}
		})
	}
	bad := convo.History{{Role: convo.RoleAssistant, Parts: []convo.Part{
		convo.ServerToolCall(convo.ServerCodeExecution, ProviderID, id, "code_interpreter", json.RawMessage(`{}`)),
		convo.ServerToolResult(convo.ServerCodeExecution, ProviderID, id, "", convo.Part{Type: convo.TypeImage, MediaType: "image/png", Data: "iVBORw0KGgo="})}}}
	if _, _, err := EncodeItems(bad, provider.Options{}); err == nil || !strings.Contains(err.Error(), "messages[0].parts[0]") {
		t.Errorf("inline image in code outputs: error %v, want one naming the part", err)
	}
}

// TestServerToolsElsewhere checks that OpenAI's provider-run tools go only
// to Responses: Chat and the reply encoders of other formats leave them
// out with a warning, or send them as text when asked; another provider's
// are never written as Responses items.
func TestServerToolsElsewhere(t *testing.T) {
	msg := convo.Message{Role: convo.RoleAssistant, Parts: []convo.Part{
		convo.ServerToolCall(convo.ServerWebSearch, ProviderID, "ws_1", "web_search", json.RawMessage(`{"type":"search","query":"go"}`)),
		convo.Text("Go 1.26 is out."),
	}}
	h := convo.History{{Role: convo.RoleUser, Parts: []convo.Part{convo.Text("news?")}}, msg}
	body, warns, err := Chat().Encode(h, provider.Options{})
	if err != nil || len(warns) != 1 || warns[0].Code != provider.CodeServerToolDropped || bytes.Contains(body, []byte("ws_1")) {
		t.Errorf("Chat: %s %v %v", body, warns, err)
	}
	body, warns, err = Chat().Encode(h, provider.Options{ServerTools: provider.ServerToolsText})
	if err != nil || len(warns) != 1 || warns[0].Code != provider.CodeServerToolAsText || !bytes.Contains(body, []byte(`[web_search call ws_1: {\"type\":\"search\",\"query\":\"go\"}]`)) {
		t.Errorf("Chat, as text: %s %v %v", body, warns, err)
	}
	other := msg
	other.Parts = []convo.Part{convo.ServerToolCall(convo.ServerWebSearch, "anthropic", "srvtoolu_1", "web_search", json.RawMessage(`{"query":"go"}`)), convo.Text("ok")}
	body, warns, err = Responses().Encode(convo.History{h[0], other}, provider.Options{})
	if err != nil || len(warns) != 1 || warns[0].Code != provider.CodeServerToolDropped || bytes.Contains(body, []byte("srvtoolu_1")) {
		t.Errorf("Responses, Anthropic's search: %s %v %v", body, warns, err)
	}
	enc, err := provider.EncoderOf(Responses())
	if err != nil {
		t.Fatal(err)
	}
	if b := enc.EncodeReply(msg, provider.StreamOptions{}); !bytes.Contains(b, []byte(`"type":"web_search_call"`)) {
		t.Errorf("EncoderOf(Responses) left out OpenAI's own search: %s", b)
	}
	if b := enc.EncodeReply(other, provider.StreamOptions{}); bytes.Contains(b, []byte("srvtoolu_1")) {
		t.Errorf("EncoderOf(Responses) wrote Anthropic's search: %s", b)
	}
	enc, _ = provider.EncoderOf(Chat())
	if b := enc.EncodeReply(msg, provider.StreamOptions{}); bytes.Contains(b, []byte("ws_1")) {
		t.Errorf("EncoderOf(Chat) wrote OpenAI's search as a call: %s", b)
	}
}

// checkDeltas reads a recorded stream through a DeltaReader: each
// provider-run tool part starts once its item is done, whole, and the
// deltas fold back to the parts of the message, without a warning that a
// part changed while streaming.
func checkDeltas(t *testing.T, path string, m convo.Message) {
	t.Helper()
	data := codectest.ReadFile(t, path)
	if strings.HasSuffix(path, ".chunks.txt") {
		data = codectest.SSEFromChunks(data, true)
	}
	dr := provider.NewDeltaReader(Responses().(provider.ReplyCodec).NewAccumulator(provider.Options{}))
	src := stream.NewSSE(bytes.NewReader(data))
	var ds []provider.Delta
	for {
		ev, err := src.Next()
		if err != nil {
			break
		}
		if ds, err = dr.Add(ds, ev); err != nil {
			break
		}
	}
	ds, _, warns, _ := dr.Finish(ds)
	for _, w := range warns {
		if strings.Contains(w.String(), "streaming") {
			t.Errorf("delta reader: %v", w)
		}
	}
	var f provider.DeltaFold
	for _, d := range ds {
		if err := f.Add(d); err != nil {
			t.Fatal(err)
		}
	}
	got, _ := f.Message()
	if !samePartsOf(got.ServerTools(), m.ServerTools()) {
		t.Errorf("deltas fold to other provider-run tool parts")
	}
}

// TestServerItemsCut cuts recorded streams right before a provider-run
// tool's item is done: the item, still in progress, stays opaque, and
// keeps the code or arguments its progress events streamed.
func TestServerItemsCut(t *testing.T) {
	for _, c := range []struct{ file, typ, member string }{
		{"vercel-openai-code-interpreter-tool.1.chunks.txt", "code_interpreter_call", "code"},
		{"vercel-openai-mcp-tool.1.chunks.txt", "mcp_call", "arguments"},
	} {
		t.Run(c.file, func(t *testing.T) {
			data := codectest.SSEFromChunks(codectest.ReadFile(t, filepath.Join("testdata/recorded/responses", c.file)), true)
			acc := Responses().(provider.ReplyCodec).NewAccumulator(provider.Options{})
			var want string
			for _, ev := range codectest.SSEData(data) {
				var e struct {
					Type string
					Item json.RawMessage
				}
				if err := json.Unmarshal(ev, &e); err != nil {
					t.Fatal(err)
				}
				if e.Type == "response.output_item.done" && itemType(e.Item) == c.typ {
					want = itemMember(e.Item, c.member)
					break
				}
				if err := acc.Add(provider.Event{Data: ev}); err != nil {
					t.Fatal(err)
				}
			}
			if want == "" {
				t.Fatalf("no %s item done", c.typ)
			}
			m, _, err := acc.Message()
			if err == nil {
				t.Fatal("a cut stream gave no error")
			}
			last := m.Parts[len(m.Parts)-1]
			raw, ok := provider.OpaqueBlock(ProviderID, last)
			if !ok || itemType(raw) != c.typ {
				t.Fatalf("last part %+v, want the opaque %s item", last, c.typ)
			}
			if got := itemMember(raw, c.member); got != want {
				t.Errorf("%s %q, want %q", c.member, got, want)
			}
		})
	}
}
