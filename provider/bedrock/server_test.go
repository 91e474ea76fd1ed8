package bedrock

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/internal/codectest"
)

// serverBlocks returns the blocks of a Converse content array that belong
// to tools Bedrock ran (a toolUse of type server_tool_use, a toolResult in
// the assistant's content), compact, in order.
func serverBlocks(t *testing.T, content json.RawMessage) [][]byte {
	return codectest.Elements(t, content, func(t codectest.TB, b json.RawMessage) bool {
		var head struct {
			ToolUse    *struct{ Type string } `json:"toolUse"`
			ToolResult json.RawMessage        `json:"toolResult"`
		}
		if err := json.Unmarshal(b, &head); err != nil {
			t.Fatalf("%v", err)
		}
		return head.ToolUse != nil && head.ToolUse.Type == "server_tool_use" || head.ToolResult != nil
	})
}

// answered is h with a tool message answering the caller's own calls of its
// last message, so that it is a request Bedrock takes.
func answered(h convo.History) convo.History {
	var rs []convo.Part
	for _, c := range h[len(h)-1].ToolCalls() {
		rs = append(rs, convo.ToolResultParts(c.ID, c.Name, convo.Text("done")))
	}
	if rs != nil {
		h = append(h, convo.ToolResults(rs...))
	}
	return h
}

// TestServerToolsReplay: every block of a tool Bedrock ran in the recorded
// and hand-made replies becomes a tool_call or tool_result part marked as
// run by Bedrock, not taken for the caller's own; the next request carries
// each recorded block byte for byte, and reads back to the same parts.
func TestServerToolsReplay(t *testing.T) {
	files := append(codectest.Files(t, "testdata/recorded/*.json"), codectest.Files(t, "testdata/replies/*.json")...)
	n := 0
	for _, f := range files {
		body := codectest.ReadFile(t, f)
		var reply struct {
			Output struct {
				Message struct{ Content json.RawMessage }
			}
		}
		if err := json.Unmarshal(body, &reply); err != nil {
			t.Fatal(err)
		}
		want := serverBlocks(t, reply.Output.Message.Content)
		if len(want) == 0 {
			continue
		}
		n++
		t.Run(filepath.Base(f), func(t *testing.T) {
			m, _, err := Converse().DecodeReply(body, provider.Options{})
			if err != nil {
				t.Fatal(err)
			}
			server := m.ServerTools()
			if len(server) != len(want) {
				t.Fatalf("%d server tool parts, want %d", len(server), len(want))
			}
			for _, p := range server {
				if p.Provider != ProviderID || p.Server == "" {
					t.Errorf("part not marked as run by Bedrock: %+v", p)
				}
			}
			if slices.ContainsFunc(m.ToolCalls(), convo.Part.IsServerTool) {
				t.Error("a server tool call is taken for one of the caller's")
			}
			h := answered(convo.History{convo.User("q"), m})
			if err := h.Validate(); err != nil {
				t.Fatal(err)
			}
			req, warns, err := Converse().Encode(h, provider.Options{Strict: true})
			if err != nil {
				t.Fatalf("%v (%v)", err, warns)
			}
			var sent struct {
				Messages []struct{ Content json.RawMessage }
			}
			if err := json.Unmarshal(req, &sent); err != nil {
				t.Fatal(err)
			}
			got := serverBlocks(t, sent.Messages[1].Content)
			if len(got) != len(want) {
				t.Fatalf("%d blocks sent, want %d", len(got), len(want))
			}
			// A recorded block goes back byte for byte; the hand-made ones
			// do not have their members in the order Bedrock sends them.
			handMade := strings.Contains(f, "/replies/")
			for i := range want {
				if handMade && !codectest.SameJSON(t, got[i], want[i]) || !handMade && !bytes.Equal(got[i], want[i]) {
					t.Errorf("block %d sent as\n%s\nwant\n%s", i, got[i], want[i])
				}
			}
			// The whole recorded reply goes back as it came: Nova's blocks of
			// web citations alone among them, their citations canonical.
			// ruby_llm's body is Bedrock's own bytes, and goes back byte for
			// byte; pydantic-ai's was parsed and written again (a caller's
			// tool call's members are in convo's order).
			sent1, content := sent.Messages[1].Content, reply.Output.Message.Content
			if strings.Contains(f, "/rubyllm-") && !bytes.Equal(sent1, content) ||
				!handMade && !codectest.SameJSON(t, sent1, content) {
				t.Errorf("the reply's content sent as\n%s", sent.Messages[1].Content)
			}
			back, _, err := Converse().Decode(req, provider.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if b := back[1].ServerTools(); !slices.EqualFunc(b, server, convo.Part.Equal) {
				t.Errorf("read back from the request: %+v", b)
			}
		})
	}
	if n < 3 {
		t.Fatalf("only %d replies with server tools", n)
	}
}

// TestServerToolsStreamed: a streamed reply's server tool parts, sent in
// the next request, read back the same (the streams are other recordings
// than the bodies, so they are checked against themselves).
func TestServerToolsStreamed(t *testing.T) {
	for _, f := range []string{"testdata/recorded/rubyllm-nova-grounding.eventstream",
		"testdata/recorded/pydantic-code-execution.eventstream", "testdata/replies/server_tools.bin"} {
		t.Run(filepath.Base(f), func(t *testing.T) {
			m, _, err := Converse().ReadStream(bytes.NewReader(codectest.ReadFile(t, f)), provider.Options{})
			if err != nil {
				t.Fatal(err)
			}
			server := m.ServerTools()
			if len(server) != 2 || server[0].Type != convo.TypeToolCall || server[1].Type != convo.TypeToolResult {
				t.Fatalf("server tool parts %+v", server)
			}
			req, warns, err := Converse().Encode(answered(convo.History{convo.User("q"), m}), provider.Options{Strict: true})
			if err != nil {
				t.Fatalf("%v (%v)", err, warns)
			}
			back, _, err := Converse().Decode(req, provider.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if b := back[1].ServerTools(); !slices.EqualFunc(b, server, convo.Part.Equal) {
				t.Errorf("read back from the request: %+v\nwant %+v", b, server)
			}
		})
	}
}

// groundedReply is the recorded Nova Web Grounding reply.
func groundedReply(t *testing.T) convo.Message {
	t.Helper()
	m, _, err := Converse().DecodeReply(codectest.ReadFile(t, "testdata/recorded/rubyllm-nova-grounding.json"), provider.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestServerToolsElsewhere: Bedrock's server tool parts go only to
// Bedrock; another target drops them with a warning or, asked to, gets
// them as text. Another provider's never reach Bedrock as blocks.
func TestServerToolsElsewhere(t *testing.T) {
	h := convo.History{convo.User("Latest Ruby?"), groundedReply(t)}
	other := provider.Target{Provider: "anthropic", ServerTools: true}
	out, warns, err := provider.Prepare(h, other, provider.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(out[1].ServerTools()) != 0 || codes(warns)[provider.CodeServerToolDropped] != 2 {
		t.Errorf("kept for another provider: %v", warns)
	}
	out, warns, err = provider.Prepare(h, other, provider.Options{ServerTools: provider.ServerToolsText})
	if err != nil {
		t.Fatal(err)
	}
	texts := out[1].Parts[:2]
	if texts[0].Text != `[web_search call tooluse_LTbeLF0_61l6iszSDowm2Q: {"query":"latest stable Ruby version"}]` ||
		texts[1].Text != "[web_search result tooluse_LTbeLF0_61l6iszSDowm2Q:\n[HIDDEN]]" || codes(warns)[provider.CodeServerToolAsText] != 2 {
		t.Errorf("as text: %q %q %v", texts[0].Text, texts[1].Text, warns)
	}

	// Anthropic's web search, sent to Bedrock.
	call := convo.Part{Type: convo.TypeToolCall, Server: convo.ServerWebSearch, ID: "srvtoolu_1", Name: "web_search",
		Args: json.RawMessage(`{"query":"q"}`), Provider: "anthropic"}
	res := convo.Part{Type: convo.TypeToolResult, Server: convo.ServerWebSearch, ID: "srvtoolu_1",
		Parts: []convo.Part{convo.JSON(json.RawMessage(`[{"type":"web_search_result","url":"https://go.dev"}]`))}, Provider: "anthropic"}
	h = convo.History{convo.User("q"), {Role: convo.RoleAssistant, Parts: []convo.Part{call, res, convo.Text("Found it.")}}}
	body, warns, err := Converse().Encode(h, provider.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"messages":[{"role":"user","content":[{"text":"q"}]},{"role":"assistant","content":[{"text":"Found it."}]}]}`
	if string(body) != want || codes(warns)[provider.CodeServerToolDropped] != 2 {
		t.Errorf("got %s %v", body, warns)
	}
	body, _, err = Converse().Encode(h, provider.Options{ServerTools: provider.ServerToolsText})
	if err != nil || !strings.Contains(string(body), `{"text":"[web_search call srvtoolu_1: {\"query\":\"q\"}]"}`) ||
		!strings.Contains(string(body), `{"text":"[web_search result srvtoolu_1:\nurl: https://go.dev]"}`) {
		t.Errorf("as text: %s %v", body, err)
	}
}

func codes(ws []provider.Warning) map[provider.Code]int {
	n := map[provider.Code]int{}
	for _, w := range ws {
		n[w.Code]++
	}
	return n
}

// TestServerToolsMisplaced: a result of a tool Bedrock ran belongs in the
// assistant message that ran it; elsewhere Encode refuses it, naming the
// place. Decoding keeps such blocks whole where convo cannot place them.
func TestServerToolsMisplaced(t *testing.T) {
	m := groundedReply(t)
	res := m.ServerTools()[1]
	h := convo.History{convo.User("q"), {Role: convo.RoleAssistant, Parts: []convo.Part{convo.Text("a")}},
		{Role: convo.RoleUser, Parts: []convo.Part{res}}}
	if _, _, err := Converse().Encode(h, provider.Options{}); err == nil ||
		!strings.Contains(err.Error(), "messages[2].parts[0]: provider-run tool_result in a user message") {
		t.Errorf("err = %v", err)
	}
	body := []byte(`{"messages":[{"role":"user","content":[{"text":"q"},` +
		`{"toolUse":{"toolUseId":"s1","name":"nova_grounding","input":{},"type":"server_tool_use"}}]},` +
		`{"role":"assistant","content":[{"toolResult":{"toolUseId":"s2","content":[{"text":"x"}],"type":"nova_grounding_result"}},{"text":"ok"}]}]}`)
	got, _, err := Converse().Decode(body, provider.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got[0].Parts[1].Type != "bedrock:toolUse" || got[1].Parts[0].Type != "bedrock:toolResult" {
		t.Errorf("misplaced blocks: %+v", got)
	}
	if err := got.Validate(); err != nil {
		t.Error(err)
	}
}
