package openai

import (
	"errors"
	"fmt"
	"github.com/convo-go/convo/provider/internal/codectest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
)

// TestCrossProvider encodes canonical histories written by other providers
// (signed Anthropic thinking, Gemini signatures, Ollama plain reasoning,
// media the targets cannot take, summaries, errors, turn-scoped system
// messages) for both OpenAI formats under several options, and compares
// request and warnings with golden files.
func TestCrossProvider(t *testing.T) {
	variants := []struct {
		name string
		opts provider.Options
	}{
		{"default", provider.Options{}},
		{"placeholder", provider.Options{Media: provider.MediaPlaceholder}},
		{"text", provider.Options{Media: provider.MediaPlaceholder, Reasoning: provider.ReasoningText, SystemRole: "developer"}},
	}
	for _, file := range glob(t, filepath.Join("testdata", "cross", "*.convo.json")) {
		h := mustUnmarshal(t, readFile(t, file))
		base := strings.TrimSuffix(file, ".convo.json")
		for _, codec := range []provider.Codec{Chat(), Responses()} {
			for _, v := range variants {
				name := fmt.Sprintf("%s.%s.%s", filepath.Base(base), codec.Name(), v.name)
				t.Run(name, func(t *testing.T) {
					out, warns, err := codec.Encode(h, v.opts)
					var doc []byte
					if err == nil {
						doc = indentWire(t, out)
						// What was written reads back as a valid history.
						back, _, derr := codec.Decode(out, provider.Options{})
						if derr != nil {
							t.Fatalf("decoding the encoded request: %v", derr)
						}
						if verr := back.Validate(); verr != nil {
							t.Errorf("encoded request decodes to an invalid history: %v", verr)
						}
					}
					codectest.Golden(t, filepath.Join("testdata", "cross", name+".golden"), report(t, doc, warns, err))
				})
			}
		}
	}
}

// TestForeignReasoningNeverFaked checks the cross-provider rule directly:
// no signature, encrypted payload or foreign reasoning text reaches either
// OpenAI request unless reasoning=text asks for the text.
func TestForeignReasoningNeverFaked(t *testing.T) {
	h := mustUnmarshal(t, readFile(t, filepath.Join("testdata", "cross", "foreign.convo.json")))
	for _, codec := range []provider.Codec{Chat(), Responses()} {
		out, _, err := codec.Encode(h, provider.Options{Media: provider.MediaPlaceholder})
		if err != nil {
			t.Fatal(err)
		}
		for _, secret := range []string{"EqQBCkgIARABGAIiQ", "EmwKAhgBEgy3va3pzix", "CiQBjz1rX", "Use the tool.", "Retry once.", "Say it."} {
			if strings.Contains(string(out), secret) {
				t.Errorf("%s request holds foreign reasoning %q", codec.Name(), secret)
			}
		}
	}
	out, _, err := Responses().Encode(h, provider.Options{Media: provider.MediaPlaceholder})
	if err != nil {
		t.Fatal(err)
	}
	// OpenAI's own encrypted reasoning does go back to Responses, with the
	// item it belongs to...
	if !strings.Contains(string(out), `"encrypted_content":"gAAAA9"`) {
		t.Errorf("own encrypted reasoning lost:\n%s", out)
	}
	// ...but not a reasoning item with nothing after it.
	if strings.Contains(string(out), "rs_trailing") {
		t.Errorf("trailing reasoning item sent:\n%s", out)
	}
}

func TestStrict(t *testing.T) {
	h := convo.History{
		convo.User("hi"),
		{Role: convo.RoleAssistant, Phase: convo.PhaseFinal, Parts: []convo.Part{convo.Text("hello")}},
	}
	// Chat has no phase: a warning, and with Strict an error.
	_, warns, err := Chat().Encode(h, provider.Options{})
	if err != nil || len(warns) != 1 {
		t.Fatalf("got %v, %v; want one warning", warns, err)
	}
	_, _, err = Chat().Encode(h, provider.Options{Strict: true})
	var se *provider.StrictError
	if !errors.As(err, &se) || len(se.Warnings) != 1 {
		t.Fatalf("strict: got %v, want a StrictError with one warning", err)
	}
	// The same history is lossless for Responses: strict passes.
	if _, _, err := Responses().Encode(h, provider.Options{Strict: true}); err != nil {
		t.Fatalf("responses strict: %v", err)
	}
	// A warning raised by Prepare is an error too.
	h = append(h, convo.ErrorMessage("boom"))
	if _, _, err := Responses().Encode(h, provider.Options{Strict: true}); !errors.As(err, &se) {
		t.Fatalf("strict with an error message: got %v", err)
	}
}

func TestRepair(t *testing.T) {
	h := convo.History{
		convo.User("go"),
		convo.Assistant("", convo.ToolCall("call_1", "a", []byte(`{}`)), convo.ToolCall("call_2", "b", []byte(`{}`))),
		convo.ToolResults(convo.ToolResult("call_1", "a", "ok"), convo.ToolResult("call_9", "z", "stray")),
		convo.User("next"),
	}
	for _, codec := range []provider.Codec{Chat(), Responses()} {
		_, _, err := codec.Encode(h, provider.Options{})
		if err == nil || !strings.Contains(err.Error(), "call_2") || !strings.Contains(err.Error(), "call_9") {
			t.Errorf("%s: got %v, want an error naming call_2 and call_9", codec.Name(), err)
		}
		out, warns, err := codec.Encode(h, provider.Options{Repair: true})
		if err != nil {
			t.Fatalf("%s repair: %v", codec.Name(), err)
		}
		// Dropped stray result, inserted error result, and the error flag
		// of that result, which neither OpenAI format can carry.
		if len(warns) != 3 || !strings.HasSuffix(warns[2].Path, "(inserted)") {
			t.Errorf("%s repair warnings: %v", codec.Name(), warns)
		}
		if !strings.Contains(string(out), provider.NotRun) || strings.Contains(string(out), "stray") {
			t.Errorf("%s repaired request:\n%s", codec.Name(), out)
		}
	}
}

func TestMediaPolicy(t *testing.T) {
	audio := convo.User("listen", convo.Audio("audio/ogg", []byte("OggS")))
	h := convo.History{audio}
	for _, codec := range []provider.Codec{Chat(), Responses()} {
		_, _, err := codec.Encode(h, provider.Options{})
		if err == nil || !strings.Contains(err.Error(), "messages[0].parts[1]") {
			t.Errorf("%s: got %v, want an error naming messages[0].parts[1]", codec.Name(), err)
		}
		out, warns, err := codec.Encode(h, provider.Options{Media: provider.MediaPlaceholder})
		if err != nil || len(warns) != 1 || !strings.Contains(string(out), "omitted]") {
			t.Errorf("%s placeholder: %s %v %v", codec.Name(), out, warns, err)
		}
		// A resolver can turn what the target cannot take into what it can.
		resolve := func(p convo.Part) (convo.Part, error) {
			return convo.Part{Type: convo.TypeFile, MediaType: "application/pdf", FileID: "file-transcript"}, nil
		}
		out, warns, err = codec.Encode(h, provider.Options{Resolve: resolve})
		if err != nil || len(warns) != 0 || !strings.Contains(string(out), "file-transcript") {
			t.Errorf("%s resolver: %s %v %v", codec.Name(), out, warns, err)
		}
		failing := func(p convo.Part) (convo.Part, error) { return p, errors.New("offline") }
		if _, _, err := codec.Encode(h, provider.Options{Resolve: failing}); err == nil || !strings.Contains(err.Error(), "offline") {
			t.Errorf("%s failing resolver: %v", codec.Name(), err)
		}
	}
}

func TestSystemRole(t *testing.T) {
	h := convo.History{convo.System("a"), {Role: convo.RoleSystem, Parts: []convo.Part{convo.Text("b")},
		Native: convo.Native{"openai": []byte(`{"role":"developer"}`)}}, convo.User("c")}
	for _, c := range []struct {
		role string
		want string
	}{
		{"", `{"messages":[{"role":"system","content":"a"},{"role":"developer","content":"b"},{"role":"user","content":"c"}]}`},
		{"system", `{"messages":[{"role":"system","content":"a"},{"role":"developer","content":"b"},{"role":"user","content":"c"}]}`},
		{"developer", `{"messages":[{"role":"developer","content":"a"},{"role":"developer","content":"b"},{"role":"user","content":"c"}]}`},
	} {
		out, _, err := Chat().Encode(h, provider.Options{SystemRole: c.role})
		if err != nil {
			t.Fatal(err)
		}
		sameJSON(t, "system role "+c.role, out, []byte(c.want))
	}
	if _, _, err := Chat().Encode(h, provider.Options{SystemRole: "root"}); err == nil {
		t.Error("unknown system role accepted")
	}
	out, _, err := Responses().Encode(h, provider.Options{SystemRole: "developer"})
	if err != nil {
		t.Fatal(err)
	}
	sameJSON(t, "responses", out, []byte(`{"input":[{"role":"developer","content":"a"},{"role":"developer","content":"b"},{"role":"user","content":"c"}]}`))
}

// TestAcrossOpenAIAPIs checks that each API's native fields stay with it:
// a history read from a Chat request encodes cleanly for Responses and the
// other way round, keeping only what both share (developer).
func TestAcrossOpenAIAPIs(t *testing.T) {
	chatBody := readFile(t, filepath.Join("testdata", "chat", "refusal.json"))
	h, _, err := Chat().Decode(chatBody, provider.Options{})
	if err != nil {
		t.Fatal(err)
	}
	out, _, err := Responses().Encode(h, provider.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, chatOnly := range []string{`"audio"`, `"refusal":null`, `"content":null`, "12h", `"api"`} {
		if strings.Contains(string(out), chatOnly) {
			t.Errorf("Chat field %s leaked into a Responses request:\n%s", chatOnly, out)
		}
	}
	respBody := readFile(t, filepath.Join("testdata", "responses", "phases.json"))
	h, _, err = Responses().Decode(respBody, provider.Options{})
	if err != nil {
		t.Fatal(err)
	}
	out, _, err = Chat().Encode(h, provider.Options{Media: provider.MediaPlaceholder})
	if err != nil {
		t.Fatal(err)
	}
	for _, respOnly := range []string{"fc_1", "msg_1", "status", "input_text", "enc-1"} {
		if strings.Contains(string(out), respOnly) {
			t.Errorf("Responses field %s leaked into a Chat request:\n%s", respOnly, out)
		}
	}
	if !strings.Contains(string(out), `"role":"developer"`) {
		t.Errorf("developer role lost:\n%s", out)
	}
}
