package gemini

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/internal/codectest"
)

// recordedCodeParts returns the executableCode and codeExecutionResult
// parts of the recorded code execution stream, as they came.
func recordedCodeParts(t *testing.T) (data []byte, parts []json.RawMessage) {
	t.Helper()
	data = codectest.ReadFile(t, "testdata/recorded/pydantic-code-execution.sse")
	for _, ev := range codectest.SSEData(data) {
		var resp struct {
			Candidates []struct {
				Content struct{ Parts []json.RawMessage }
			}
		}
		if err := json.Unmarshal(ev, &resp); err != nil {
			t.Fatal(err)
		}
		for _, p := range resp.Candidates[0].Content.Parts {
			if bytes.Contains(p, []byte(`"executableCode"`)) || bytes.Contains(p, []byte(`"codeExecutionResult"`)) {
				parts = append(parts, p)
			}
		}
	}
	if len(parts) != 2 {
		t.Fatalf("%d code execution parts in the recording", len(parts))
	}
	return data, parts
}

// TestCodeExecutionReplay: the recorded code execution call and result
// (with their ids and the call's thought signature) are provider-run
// parts, go back to Gemini byte for byte in a request and in a reply, and
// do not make the reply a tool-calling one.
func TestCodeExecutionReplay(t *testing.T) {
	data, want := recordedCodeParts(t)
	m, _, err := GenerateContent().ReadStream(bytes.NewReader(data), provider.Options{})
	if err != nil {
		t.Fatal(err)
	}
	call, res := m.Parts[0], m.Parts[1]
	if !call.IsServerTool() || call.Server != convo.ServerCodeExecution || call.Provider != ProviderID || call.ID != "8xju7mua" ||
		!res.IsServerTool() || res.ID != call.ID || res.Error || len(res.Parts) != 1 || res.Parts[0].Text != "-428330955.97745\n" {
		t.Fatalf("parts read: %s", codectest.MessageJSON(t, m))
	}
	if m.Finish != convo.FinishStop || m.HasToolCalls() {
		t.Errorf("finish %q, tool calls %v", m.Finish, m.HasToolCalls())
	}
	req, warns, err := GenerateContent().Encode(convo.History{convo.User("q"), m}, provider.Options{})
	if err != nil || len(warns) > 0 {
		t.Fatal(err, warns)
	}
	var body struct {
		Contents []struct{ Parts []json.RawMessage }
	}
	if err := json.Unmarshal(req, &body); err != nil {
		t.Fatal(err)
	}
	var resp struct {
		Candidates []struct {
			Content struct{ Parts []json.RawMessage }
		}
	}
	if err := json.Unmarshal(EncodeReply(m, provider.StreamOptions{}), &resp); err != nil {
		t.Fatal(err)
	}
	for k := range want {
		codectest.ExpectSameJSON(t, body.Contents[1].Parts[k], want[k])
		codectest.ExpectSameJSON(t, resp.Candidates[0].Content.Parts[k], want[k])
	}
}

// TestCodeExecutionElsewhere: for another provider Gemini's code execution
// is dropped with a warning, or with ServerToolsText sent as the text of
// what ran and what came back.
func TestCodeExecutionElsewhere(t *testing.T) {
	data, _ := recordedCodeParts(t)
	m, _, err := GenerateContent().ReadStream(bytes.NewReader(data), provider.Options{})
	if err != nil {
		t.Fatal(err)
	}
	h := convo.History{convo.User("q"), m}
	target := provider.Target{Provider: "anthropic", ServerTools: true}
	out, warns, err := provider.Prepare(h, target, provider.Options{})
	if err != nil || len(out[1].Parts) != 2 || len(warns) != 2 || warns[0].Code != provider.CodeServerToolDropped {
		t.Errorf("dropped: %v %v %s", err, warns, codectest.MessageJSON(t, out[1]))
	}
	out, _, err = provider.Prepare(h, target, provider.Options{ServerTools: provider.ServerToolsText})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`[code_execution call 8xju7mua: {"language":"PYTHON","code":"result = 65465 - 6544 * 65464 - 6 + 1.02255\nprint(result)"}]`,
		"[code_execution result 8xju7mua:\n-428330955.97745\n]",
	}
	for k, w := range want {
		if p := out[1].Parts[k]; p.Type != convo.TypeText || p.Text != w {
			t.Errorf("part %d: %q, want %q", k, p.Text, w)
		}
	}
}

// TestCodeExecutionShapes: a failed run keeps its outcome; a result made
// elsewhere gets its outcome from Error; the v1 golden history's Gemini
// code execution goes to Gemini; in a user content, where no provider-run
// tool belongs, the parts stay opaque.
func TestCodeExecutionShapes(t *testing.T) {
	body := `{"contents":[{"role":"user","parts":[{"text":"q"},{"codeExecutionResult":{"outcome":"OUTCOME_OK"}}]},` +
		`{"role":"model","parts":[{"executableCode":{"language":"PYTHON","code":"1/0"}},` +
		`{"codeExecutionResult":{"outcome":"OUTCOME_DEADLINE_EXCEEDED","output":"","future":1}}]}]}`
	h, _, err := GenerateContent().Decode([]byte(body), provider.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if h[0].Parts[1].Type != "gemini:codeExecutionResult" {
		t.Errorf("user content part: %s", codectest.MessageJSON(t, h[0]))
	}
	res := h[1].Parts[1]
	if !res.Error || string(nativeMember(res.Native, "outcome")) != `"OUTCOME_DEADLINE_EXCEEDED"` || len(res.Parts) != 1 {
		t.Errorf("failed result: %s", codectest.MessageJSON(t, h[1]))
	}
	out, _, err := GenerateContent().Encode(h, provider.Options{})
	if err != nil {
		t.Fatal(err)
	}
	codectest.ExpectSameJSON(t, out, []byte(body))

	made := convo.ServerToolResult(convo.ServerCodeExecution, ProviderID, "", "", convo.Text("boom"))
	made.Error = true
	call := convo.ServerToolCall(convo.ServerCodeExecution, ProviderID, "", CodeExecutionName, json.RawMessage(`{"language":"PYTHON","code":"x"}`))
	out, _, err = GenerateContent().Encode(convo.History{convo.User("q"), convo.Assistant("", call, made)}, provider.Options{})
	if err != nil || !bytes.Contains(out, []byte(`{"codeExecutionResult":{"outcome":"OUTCOME_FAILED","output":"boom"}}`)) {
		t.Errorf("%v %s", err, out)
	}

	src, err := os.ReadFile("../../testdata/v1/server-tools.json")
	if err != nil {
		t.Fatal(err)
	}
	golden, err := convo.Unmarshal(src)
	if err != nil {
		t.Fatal(err)
	}
	out, _, err = GenerateContent().Encode(golden, provider.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{
		`{"executableCode":{"language":"PYTHON","code":"print(2**10)"}}`,
		`{"codeExecutionResult":{"outcome":"OUTCOME_OK","output":"1024\n"}}`,
	} {
		if !strings.Contains(string(out), w) {
			t.Errorf("no %s in %s", w, out)
		}
	}
}
