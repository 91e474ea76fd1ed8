package sdktest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/openai/openai-go/v3/responses"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
	oai "github.com/convo-go/convo/provider/openai"
)

// TestOpenAIResponsesServerToolsSDK: openai-go reads the recorded replies
// with provider-run tool items, and its items say what convo's tool_call
// and tool_result parts say (ids, actions, queries and results, code and
// outputs, MCP names, arguments and outputs, images); it reads what convo
// writes back (EncodeResponsesReply, EncodeItems) the same way.
func TestOpenAIResponsesServerToolsSDK(t *testing.T) {
	files := []string{
		"vercel-openai-web-search-tool.1.json",
		"vercel-openai-file-search-tool.2.json",
		"vercel-openai-code-interpreter-tool.1.json",
		"vercel-openai-mcp-tool.1.json",
		"derived-image-generation-tool.json",
	}
	for _, name := range files {
		t.Run(name, func(t *testing.T) {
			rec, err := os.ReadFile(filepath.Join("..", "provider", "openai", "testdata", "recorded", "responses", name))
			if err != nil {
				t.Fatal(err)
			}
			m, _, err := oai.Responses().(provider.ReplyCodec).DecodeReply(rec, provider.Options{})
			if err != nil {
				t.Fatal(err)
			}
			var sdk responses.Response
			if err := json.Unmarshal(rec, &sdk); err != nil {
				t.Fatal(err)
			}
			if n := oaiCheckServer(t, sdk.Output, m); n == 0 {
				t.Fatal("no provider-run tool item read")
			}
			var back responses.Response
			if err := json.Unmarshal(oai.EncodeResponsesReply(m, provider.StreamOptions{}), &back); err != nil {
				t.Fatal(err)
			}
			oaiCheckServer(t, back.Output, m)

			items, _, err := oai.EncodeItems(convo.History{m}, provider.Options{})
			if err != nil {
				t.Fatal(err)
			}
			for _, it := range items {
				var u responses.ResponseInputItemUnionParam
				if err := json.Unmarshal(oaiTypedItem(t, it), &u); err != nil {
					t.Fatalf("SDK refuses input item: %v\n%.300s", err, it)
				}
				again, err := json.Marshal(u)
				if err != nil {
					t.Fatal(err)
				}
				var typ struct{ Type string }
				_ = json.Unmarshal(it, &typ)
				// The SDK's params read a null member as absent.
				if oaiServerItem(typ.Type) && !sameJSON(t, oaiNoNulls(t, again), oaiNoNulls(t, it)) {
					t.Errorf("input item marshals back otherwise:\n got %.300s\nwant %.300s", again, it)
				}
			}
		})
	}
}

func oaiServerItem(typ string) bool {
	switch typ {
	case "web_search_call", "file_search_call", "code_interpreter_call", "mcp_call", "image_generation_call":
		return true
	}
	return false
}

// oaiCheckServer compares the SDK's provider-run tool items with the parts
// of m, in order, and returns how many it compared.
func oaiCheckServer(t *testing.T, out []responses.ResponseOutputItemUnion, m convo.Message) int {
	t.Helper()
	parts := m.ServerTools()
	n := 0
	next := func(id string) (call, res *convo.Part) {
		if n >= len(parts) || parts[n].ID != id || parts[n].Type != convo.TypeToolCall {
			t.Fatalf("item %s: no call part in its place (%d of %d)", id, n, len(parts))
		}
		call = &parts[n]
		n++
		if n < len(parts) && parts[n].Type == convo.TypeToolResult && parts[n].ID == id {
			res = &parts[n]
			n++
		}
		return call, res
	}
	items := 0
	for _, it := range out {
		if !oaiServerItem(it.Type) {
			continue
		}
		items++
		call, res := next(it.ID)
		switch it.Type {
		case "web_search_call":
			ws := it.AsWebSearchCall()
			if call.Server != convo.ServerWebSearch || !sameJSON(t, []byte(ws.Action.RawJSON()), call.Args) || res != nil {
				t.Errorf("web search %s: action %s, parts %+v %+v", ws.ID, ws.Action.RawJSON(), call, res)
			}
		case "file_search_call":
			fs := it.AsFileSearchCall()
			q, _ := json.Marshal(map[string]any{"queries": fs.Queries})
			if call.Server != convo.ServerFileSearch || !sameJSON(t, q, call.Args) {
				t.Errorf("file search %s: queries %v, args %s", fs.ID, fs.Queries, call.Args)
			}
			if fs.JSON.Results.Valid() && (res == nil || !sameJSON(t, []byte(fs.JSON.Results.Raw()), res.Parts[0].Value)) {
				t.Errorf("file search %s: results %.200s, result %+v", fs.ID, fs.JSON.Results.Raw(), res)
			}
		case "code_interpreter_call":
			oaiCheckCode(t, it.AsCodeInterpreterCall(), call, res)
		case "mcp_call":
			mc := it.AsMcpCall()
			if call.Server != convo.ServerMCP || call.Name != mc.Name || !sameJSON(t, []byte(mc.Arguments), call.Args) {
				t.Errorf("mcp %s: %s %s, call %+v", mc.ID, mc.Name, mc.Arguments, call)
			}
			if res == nil || res.Error || len(res.Parts) != 1 || res.Parts[0].Text != mc.Output {
				t.Errorf("mcp %s: output %.100s, result %+v", mc.ID, mc.Output, res)
			}
		case "image_generation_call":
			ig := it.AsImageGenerationCall()
			if call.Server != convo.ServerImageGeneration || res == nil || res.Parts[0].Data != ig.Result || res.Parts[0].MediaType != "image/"+ig.OutputFormat {
				t.Errorf("image %s: result %.40s (%s), parts %+v %+v", ig.ID, ig.Result, ig.OutputFormat, call, res)
			}
		}
	}
	if n != len(parts) {
		t.Errorf("%d provider-run tool parts, %d matched by the SDK's items", len(parts), n)
	}
	return items
}

func oaiCheckCode(t *testing.T, ci responses.ResponseCodeInterpreterToolCall, call, res *convo.Part) {
	t.Helper()
	code, _ := json.Marshal(map[string]string{"code": ci.Code})
	if call.Server != convo.ServerCodeExecution || !sameJSON(t, code, call.Args) {
		t.Errorf("code %s: %q, args %s", ci.ID, ci.Code, call.Args)
	}
	if res == nil || len(res.Parts) != len(ci.Outputs) {
		t.Fatalf("code %s: %d outputs, result %+v", ci.ID, len(ci.Outputs), res)
	}
	for k, o := range ci.Outputs {
		p := res.Parts[k]
		if (o.Type == "logs" && (p.Type != convo.TypeText || p.Text != o.Logs)) || (o.Type == "image" && p.URL != o.URL) {
			t.Errorf("code %s output %d: %+v, part %+v", ci.ID, k, o, p)
		}
	}
}

// oaiNoNulls returns the object obj without its null members.
func oaiNoNulls(t *testing.T, obj []byte) []byte {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(obj, &m); err != nil {
		t.Fatal(err)
	}
	for k, v := range m {
		if string(v) == "null" {
			delete(m, k)
		}
	}
	out, _ := json.Marshal(m)
	return out
}
