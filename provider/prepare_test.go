package provider_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
)

var target = provider.Target{Provider: "anthropic"}

func call(id, name string) convo.Part { return convo.ToolCall(id, name, json.RawMessage(`{}`)) }

func warnings(ws []provider.Warning) string {
	var s []string
	for _, w := range ws {
		s = append(s, w.String())
	}
	return strings.Join(s, "\n")
}

func TestPrepareReasoning(t *testing.T) {
	h := convo.History{
		convo.User("q"),
		{Role: convo.RoleAssistant, Parts: []convo.Part{
			{Type: convo.TypeReasoning, Text: "mine", Signature: "sigA", Provider: "anthropic"},
			{Type: convo.TypeReasoning, Text: "theirs", Encrypted: "enc", Provider: "openai"},
			{Type: convo.TypeReasoning, Text: "plain, unnamed"},
			convo.Text("answer"),
		}},
	}
	tests := []struct {
		name   string
		target provider.Target
		opts   provider.Options
		want   []convo.Part
		warn   string
	}{
		{"own kept, others dropped", target, provider.Options{},
			[]convo.Part{h[1].Parts[0], convo.Text("answer")},
			"messages[1].parts[1]: signed or encrypted reasoning from openai dropped: only openai can read it\nmessages[1].parts[2]: reasoning from an unnamed provider dropped: the target takes no unsigned reasoning"},
		{"as text when asked", target, provider.Options{Reasoning: provider.ReasoningText},
			[]convo.Part{h[1].Parts[0], convo.Text("theirs"), convo.Text("plain, unnamed"), convo.Text("answer")},
			"messages[1].parts[1]: reasoning from openai sent as text\nmessages[1].parts[2]: reasoning from an unnamed provider sent as text"},
		{"plain reasoning targets keep unsigned text", provider.Target{Provider: "ollama", PlainReasoning: true}, provider.Options{},
			[]convo.Part{{Type: convo.TypeReasoning, Text: "mine"}, {Type: convo.TypeReasoning, Text: "theirs"}, {Type: convo.TypeReasoning, Text: "plain, unnamed"}, convo.Text("answer")},
			""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, warns, err := provider.Prepare(h, tt.target, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			if got := out[1].Parts; !(convo.Message{Parts: got}).Equal(convo.Message{Parts: tt.want}) {
				t.Fatalf("parts %+v", got)
			}
			// Plain-reasoning targets keep the text of signed reasoning,
			// never the signature.
			if tt.target.PlainReasoning {
				if !strings.Contains(warnings(warns), "signature of reasoning from anthropic dropped; its text is sent as plain reasoning") {
					t.Fatalf("warnings %q", warnings(warns))
				}
			} else if got := warnings(warns); got != tt.warn {
				t.Fatalf("warnings:\n%s\nwant:\n%s", got, tt.warn)
			}
			if len(h[1].Parts) != 4 {
				t.Fatal("Prepare modified its input")
			}
		})
	}
	if _, _, err := provider.Prepare(h, target, provider.Options{Strict: true}); err == nil || !strings.Contains(err.Error(), "strict: messages[1].parts[1]") {
		t.Fatalf("strict: %v", err)
	}
}

func TestPreparePairing(t *testing.T) {
	unanswered := convo.History{convo.User("q"), convo.Assistant("", call("a", "f"), call("b", "g")), convo.ToolResults(convo.ToolResult("a", "f", "1")), convo.User("next")}
	_, _, err := provider.Prepare(unanswered, target, provider.Options{})
	if err == nil || !strings.Contains(err.Error(), `messages[1].parts[1]: tool call "b" (g) has no result before messages[3]`) {
		t.Fatalf("unpaired call: %v", err)
	}
	out, warns, err := provider.Prepare(unanswered, target, provider.Options{Repair: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 5 || out[3].Role != convo.RoleTool || !out[3].Parts[0].Error || out[3].Parts[0].Text != "" || out[3].Parts[0].Parts[0].Text != provider.NotRun {
		t.Fatalf("repair: %v", out)
	}
	if err := out.Validate(); err != nil {
		t.Fatalf("repaired history invalid: %v", err)
	}
	if !strings.Contains(warnings(warns), "error result was inserted") {
		t.Fatalf("warnings %q", warnings(warns))
	}

	orphan := convo.History{convo.User("q"), convo.ToolResults(convo.ToolResult("zz", "f", "1")), convo.Assistant("a")}
	_, _, err = provider.Prepare(orphan, target, provider.Options{})
	if err == nil || !strings.Contains(err.Error(), `messages[1].parts[0]: tool result "zz" answers no call of any assistant message`) {
		t.Fatalf("orphan: %v", err)
	}
	out, warns, err = provider.Prepare(orphan, target, provider.Options{Repair: true})
	if err != nil || len(out) != 2 || !strings.Contains(warnings(warns), "dropped") {
		t.Fatalf("orphan repair: %v %v %q", out, err, warnings(warns))
	}

	// Results without ids are matched by name and order.
	noIDs := convo.History{convo.User("q"), convo.Assistant("", call("c1", "f"), call("c2", "f"), call("c3", "g")),
		convo.ToolResults(convo.ToolResult("", "g", "G"), convo.ToolResult("", "f", "F1"), convo.ToolResult("", "f", "F2"))}
	out, _, err = provider.Prepare(noIDs, target, provider.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ids := []string{}
	for _, p := range out[2].Parts {
		ids = append(ids, p.ID+"="+p.Parts[0].Text)
	}
	if strings.Join(ids, ",") != "c3=G,c1=F1,c2=F2" {
		t.Fatalf("matched %v", ids)
	}
}

func TestPrepareRoles(t *testing.T) {
	h := convo.History{
		convo.System("lead"),
		convo.TurnSystem("expired turn rule"),
		convo.User("q1"),
		convo.Assistant("a1"),
		convo.ErrorMessage("upstream 529"),
		convo.Summary("earlier", 3),
		convo.System("late rule"),
		convo.User("q2"),
	}
	out, warns, err := provider.Prepare(h, target, provider.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var roles []string
	for _, m := range out {
		roles = append(roles, string(m.Role)+":"+m.Text())
	}
	if got := strings.Join(roles, "|"); got != "system:lead|user:q1|assistant:a1|user:earlier|user:late rule|user:q2" {
		t.Fatalf("roles %s", got)
	}
	if got := warnings(warns); !strings.Contains(got, `messages[4]: error message left out: "upstream 529"`) ||
		!strings.Contains(got, "messages[6]: system message after the conversation started sent as user text") {
		t.Fatalf("warnings %s", got)
	}
	out, _, _ = provider.Prepare(h, provider.Target{Provider: "openai", MidSystem: true}, provider.Options{})
	if out[4].Role != convo.RoleSystem {
		t.Fatalf("mid-conversation system kept for targets that take it: %v", out[4].Role)
	}
}

func TestPrepareMedia(t *testing.T) {
	noURLs := provider.Target{Provider: "bedrock", Media: func(p convo.Part, _ bool) bool { return p.URL == "" }}
	h := convo.History{convo.User("look", convo.ImageURL("image/png", "https://example.com/a.png"))}
	_, _, err := provider.Prepare(h, noURLs, provider.Options{})
	if err == nil || !strings.Contains(err.Error(), "messages[0].parts[1]: the target cannot take image (image/png) by URL https://example.com/a.png") {
		t.Fatalf("error mode: %v", err)
	}
	out, warns, err := provider.Prepare(h, noURLs, provider.Options{Media: provider.MediaPlaceholder})
	if err != nil || out[0].Parts[1].Type != convo.TypeText || !strings.Contains(out[0].Parts[1].Text, "omitted") || len(warns) != 1 {
		t.Fatalf("placeholder: %v %v %v", out, warns, err)
	}
	resolved := 0
	out, _, err = provider.Prepare(h, noURLs, provider.Options{Resolve: func(p convo.Part) (convo.Part, error) {
		resolved++
		return convo.Image(p.MediaType, []byte("png")), nil
	}})
	if err != nil || resolved != 1 || out[0].Parts[1].Data != "cG5n" {
		t.Fatalf("resolver: %v %v", out, err)
	}
	boom := errors.New("offline")
	_, _, err = provider.Prepare(h, noURLs, provider.Options{Resolve: func(convo.Part) (convo.Part, error) { return convo.Part{}, boom }})
	if !errors.Is(err, boom) {
		t.Fatalf("resolver error: %v", err)
	}
}

func TestPrepareIDsAndOpaque(t *testing.T) {
	sanitise := provider.Target{Provider: "bedrock", ID: func(id string) string { return provider.SanitizeID(id, 64) }}
	h := convo.History{convo.User("q"), convo.Assistant("", call("call/1:x", "f")), convo.ToolResults(convo.ToolResult("call/1:x", "f", "r")),
		convo.Assistant("", provider.OpaquePart("bedrock", "guardContent", []byte(`{"guardContent":{"text":{"text":"x"}}}`)), provider.OpaquePart("anthropic", "server_tool_use", []byte(`{"type":"server_tool_use"}`)))}
	out, warns, err := provider.Prepare(h, sanitise, provider.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if a, b := out[1].Parts[0].ID, out[2].Parts[0].ID; a != b || strings.ContainsAny(a, "/:") {
		t.Fatalf("ids %q %q", a, b)
	}
	if len(out[3].Parts) != 1 || !strings.Contains(warnings(warns), `part of unknown type "anthropic:server_tool_use" left out`) {
		t.Fatalf("opaque parts: %v %q", out[3].Parts, warnings(warns))
	}
	block, ok := provider.OpaqueBlock("bedrock", out[3].Parts[0])
	if !ok || string(block) != `{"guardContent":{"text":{"text":"x"}}}` {
		t.Fatalf("opaque block %s %v", block, ok)
	}
	// An opaque part survives the canonical format.
	doc, _ := convo.Marshal(out[3:])
	back, err := convo.Unmarshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	if block, ok := provider.OpaqueBlock("bedrock", back[0].Parts[0]); !ok || string(block) != `{"guardContent":{"text":{"text":"x"}}}` {
		t.Fatalf("after canonical round trip: %s %v", block, ok)
	}
}

func TestSanitizeID(t *testing.T) {
	for _, tt := range []struct {
		id  string
		max int
	}{{"toolu_01A", 64}, {"call:1/2", 64}, {"call:1/3", 64}, {strings.Repeat("x", 100), 64}, {"é", 10}, {"", 64}, {"a b", 5}} {
		got := provider.SanitizeID(tt.id, tt.max)
		if got != provider.SanitizeID(tt.id, tt.max) {
			t.Fatal("not deterministic")
		}
		if len(got) > tt.max || got == "" {
			t.Fatalf("%q -> %q", tt.id, got)
		}
		for _, c := range got {
			if !(c == '_' || c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
				t.Fatalf("%q -> %q has %q", tt.id, got, c)
			}
		}
	}
	if provider.SanitizeID("toolu_01A", 64) != "toolu_01A" {
		t.Fatal("a valid id was changed")
	}
	if provider.SanitizeID("call:1/2", 64) == provider.SanitizeID("call:1/3", 64) || provider.SanitizeID("a:b", 0) == provider.SanitizeID("a/b", 0) {
		t.Fatal("distinct ids collided")
	}
	first, again := provider.SynthID(1, 2, "f"), provider.SynthID(1, 2, "f")
	if first != again || first == provider.SynthID(1, 3, "f") || first == provider.SynthID(2, 1, "f") {
		t.Fatal("SynthID is not deterministic, or collides")
	}
}

func TestLookup(t *testing.T) {
	if _, err := provider.Lookup[provider.Codec](nil, "x"); !errors.Is(err, provider.ErrUnknownFormat) {
		t.Fatalf("got %v", err)
	}
}

func TestPrepareSynthesisesMissingIDs(t *testing.T) {
	h := convo.History{convo.User("q"), convo.Assistant("", call("", "f"), call("", "f")),
		convo.ToolResults(convo.ToolResult("", "f", "1"), convo.ToolResult("", "f", "2"))}
	out, _, err := provider.Prepare(h, target, provider.Options{})
	if err != nil {
		t.Fatal(err)
	}
	a, b := out[1].Parts[0].ID, out[1].Parts[1].ID
	if a == "" || b == "" || a == b || out[2].Parts[0].ID != a || out[2].Parts[1].ID != b {
		t.Fatalf("ids %q %q, results %q %q", a, b, out[2].Parts[0].ID, out[2].Parts[1].ID)
	}
	if h[1].Parts[0].ID != "" {
		t.Fatal("Prepare modified its input")
	}
	again, _, _ := provider.Prepare(h, target, provider.Options{})
	if again[1].Parts[0].ID != a {
		t.Fatal("synthesised ids are not deterministic")
	}
}

func TestPrepareIndexed(t *testing.T) {
	h := convo.History{
		convo.User("q"),
		convo.Assistant("", call("a", "f")),
		convo.ErrorMessage("boom"),
		convo.User("next"),
		{Role: convo.RoleUser, Parts: []convo.Part{{Type: "hologram", Raw: []byte(`{"type":"hologram"}`)}}},
	}
	out, from, warns, err := provider.PrepareIndexed(h, target, provider.Options{Repair: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(from) != len(out) || from[0] != 0 || from[1] != 1 || from[2] != -1 || from[3] != 3 {
		t.Fatalf("from %v for %v", from, out)
	}
	// Warning paths name places in the caller's history, not the prepared one.
	got := warnings(warns)
	for _, want := range []string{"messages[1].parts[0]: tool call \"a\" (f) had no result", "messages[2]: error message left out", "messages[4].parts[0]: part of unknown type \"hologram\" left out", "messages[4]: user message left out"} {
		if !strings.Contains(got, want) {
			t.Errorf("warnings lack %q:\n%s", want, got)
		}
	}
}

func BenchmarkPrepare(b *testing.B) {
	var h convo.History
	for i := 0; len(h) < 1000; i++ {
		id := "call_" + strings.Repeat("x", i%7)
		h = append(h, convo.User("question"), convo.Assistant("", convo.Reasoning("think"), call(id+"a", "f")),
			convo.ToolResults(convo.ToolResult(id+"a", "f", "ok")), convo.Assistant("answer"))
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := provider.Prepare(h, provider.Target{Provider: "ollama", PlainReasoning: true}, provider.Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

func TestPrepareCopiesNothingWhenNothingChanges(t *testing.T) {
	h := convo.History{convo.System("s"), convo.User("q"), convo.Assistant("", call("a", "f")),
		convo.ToolResults(convo.ToolResult("a", "f", "1")), convo.Assistant("done")}
	out, from, warns, err := provider.PrepareIndexed(h, target, provider.Options{})
	if err != nil || len(warns) != 0 {
		t.Fatal(err, warns)
	}
	if &out[0] != &h[0] || len(out) != len(h) {
		t.Fatal("a history with nothing to change was copied")
	}
	for i, f := range from {
		if f != i {
			t.Fatalf("from %v", from)
		}
	}
}

// Calls at the end of a history are pending, the state an agent holds
// before running its tools: kept for every target, a warning naming the
// rule of a target that refuses such a request, repaired only on request.
func TestPreparePending(t *testing.T) {
	h := convo.History{convo.User("q"), convo.Assistant("", call("a", "f"), call("b", "g")), convo.ToolResults(convo.ToolResult("a", "f", "1"))}
	refuses := provider.Target{Provider: "x", Pending: "X refuses (rule)"}

	out, warns, err := provider.Prepare(h, provider.Target{Provider: "x"}, provider.Options{})
	if err != nil || len(warns) != 0 || len(out) != 3 {
		t.Fatalf("a target that takes it: %d messages, %v, %v", len(out), warns, err)
	}
	out, warns, err = provider.Prepare(h, refuses, provider.Options{})
	if err != nil || len(out) != 3 {
		t.Fatalf("a target that refuses it: %d messages, %v", len(out), err)
	}
	if got, want := warnings(warns), `messages[1]: the history ends on tool calls without results ("b"), which X refuses (rule): run the tools and send their results first`; got != want {
		t.Errorf("warning\n got %s\nwant %s", got, want)
	}
	var se *provider.StrictError
	if _, _, err := provider.Prepare(h, refuses, provider.Options{Strict: true}); !errors.As(err, &se) {
		t.Errorf("strict: %v", err)
	}
	out, warns, err = provider.Prepare(h, refuses, provider.Options{Repair: true})
	if err != nil || len(out) != 4 || out[3].Parts[0].ID != "b" || !out[3].Parts[0].Error {
		t.Fatalf("repair for a target that refuses it: %+v, %v", out, err)
	}
	if !strings.Contains(warnings(warns), `tool call "b" (g) had no result: an error result was inserted`) {
		t.Errorf("repair warnings: %s", warnings(warns))
	}
	if out, _, err = provider.Prepare(h, provider.Target{Provider: "x"}, provider.Options{Repair: true}); err != nil || len(out) != 3 {
		t.Errorf("repair for a target that takes it changed the history: %d messages, %v", len(out), err)
	}
}

// An unanswered call in the middle is an error that names its place and the
// message before which the result was due (never one past the end), and
// names the fix as the caller knows it.
func TestPrepareUnpairedError(t *testing.T) {
	h := convo.History{convo.User("q"), convo.Assistant("", call("a", "f")), convo.User("next"), convo.ToolResults(convo.ToolResult("zz", "f", "1"))}
	_, _, err := provider.Prepare(h, target, provider.Options{})
	var ue *provider.UnpairedError
	if !errors.As(err, &ue) || len(ue.Problems) != 2 {
		t.Fatalf("got %v, want an UnpairedError with 2 problems", err)
	}
	want := `unpaired tool calls: messages[1].parts[0]: tool call "a" (f) has no result before messages[2]; messages[3].parts[0]: tool result "zz" answers no call of any assistant message (none directly precedes it) (Options.Repair repairs them, with a warning)`
	if err.Error() != want {
		t.Errorf("error\n got %s\nwant %s", err, want)
	}
	if got := ue.Explain("--repair"); !strings.HasSuffix(got, "(--repair repairs them, with a warning)") {
		t.Errorf("Explain: %s", got)
	}
}

// A request ending on an assistant message (a prefill) whose last text ends
// in white space is refused by Anthropic and Bedrock: Prepare trims it for
// targets with a Prefill rule, never touching signed reasoning, and leaves
// the caller's history alone.
func TestPreparePrefill(t *testing.T) {
	refuses := provider.Target{Provider: "anthropic", Prefill: "X refuses it"}
	signed := convo.Part{Type: convo.TypeReasoning, Text: "think  ", Signature: "sig", Provider: "anthropic"}
	tests := []struct {
		name string
		h    convo.History
		want []convo.Part // parts of the last message sent, nil when it is left out
		warn string
	}{
		{"trailing space", convo.History{convo.User("q"), convo.Assistant("The answer is ")},
			[]convo.Part{convo.Text("The answer is")}, "messages[1].parts[0]: trailing white space of the final assistant message trimmed: X refuses it"},
		{"after signed reasoning", convo.History{convo.User("q"), convo.Assistant("", signed, convo.Text("So \n"))},
			[]convo.Part{signed, convo.Text("So")}, "messages[1].parts[1]: trailing white space"},
		{"only white space", convo.History{convo.User("q"), convo.Assistant("", signed, convo.Text(" \n"))},
			[]convo.Part{signed}, "messages[1].parts[1]: white space at the end of the final assistant message left out"},
		{"signed reasoning last", convo.History{convo.User("q"), convo.Assistant("", convo.Text("a "), signed)},
			[]convo.Part{convo.Text("a "), signed}, ""},
		{"not a prefill", convo.History{convo.User("q"), convo.Assistant("a "), convo.User("b ")},
			[]convo.Part{convo.Text("b ")}, ""},
		{"message left empty", convo.History{convo.User("q"), convo.Assistant("  ")}, nil, "messages[1].parts[0]: white space at the end"},
		{"empty reasoning shields nothing", convo.History{convo.User("q"), convo.Assistant("", convo.Text("a\t"), convo.Part{Type: convo.TypeReasoning, Provider: "anthropic"})},
			[]convo.Part{convo.Text("a"), {Type: convo.TypeReasoning, Provider: "anthropic"}}, "messages[1].parts[0]: trailing white space"},
		{"a final message that sends nothing", convo.History{convo.User("q"), convo.Assistant("a "), convo.Assistant("", convo.Part{Type: convo.TypeReasoning, Provider: "anthropic"})},
			[]convo.Part{{Type: convo.TypeReasoning, Provider: "anthropic"}}, "messages[1].parts[0]: trailing white space"},
		{"the message before is final next", convo.History{convo.User("q"), convo.Assistant("a "), convo.Assistant(" ")},
			[]convo.Part{convo.Text("a")}, "messages[2].parts[0]: white space at the end"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before, _ := convo.Marshal(tt.h)
			out, warns, err := provider.Prepare(tt.h, refuses, provider.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if after, _ := convo.Marshal(tt.h); string(after) != string(before) {
				t.Fatalf("the caller's history changed")
			}
			switch last := out[len(out)-1]; {
			case tt.want == nil && len(out) != len(tt.h)-1:
				t.Errorf("the empty prefill was not left out: %+v", out)
			case tt.want != nil && !(convo.Message{Parts: last.Parts}).Equal(convo.Message{Parts: tt.want}):
				t.Errorf("parts %+v, want %+v", last.Parts, tt.want)
			}
			if got := warnings(warns); (tt.warn == "") != (got == "") || !strings.Contains(got, tt.warn) {
				t.Errorf("warnings %q, want %q", got, tt.warn)
			}
			// Targets without the rule send it as it is.
			if out, _, _ := provider.Prepare(tt.h, target, provider.Options{}); len(out) != len(tt.h) {
				t.Errorf("a target without the rule changed the history")
			}
		})
	}
}
