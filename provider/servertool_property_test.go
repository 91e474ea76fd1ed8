package provider_test

import (
	"encoding/json"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/all"
)

// genServerTurn draws an assistant message of provider-run tool calls and
// results (each result after its call) by providers drawn from provs,
// with text between them.
func genServerTurn(t *rapid.T, provs []string) convo.Message {
	m := convo.Message{Role: convo.RoleAssistant}
	for i, n := 0, rapid.IntRange(1, 4).Draw(t, "tools"); i < n; i++ {
		prov := rapid.SampledFrom(provs).Draw(t, "provider")
		kind := rapid.SampledFrom([]string{convo.ServerWebSearch, convo.ServerCodeExecution, convo.ServerMCP, "nova_grounding"}).Draw(t, "kind")
		id := rapid.StringMatching(`srv_[a-z0-9]{1,6}`).Draw(t, "id") + string(rune('a'+i))
		args := rapid.SampledFrom([]string{`{}`, `{"query":"go 1.26"}`, `{"code":"print(1)","n":[1,2]}`}).Draw(t, "args")
		m.Parts = append(m.Parts, convo.Part{Type: convo.TypeToolCall, Server: kind, ID: id, Name: kind,
			Args: json.RawMessage(args), Provider: prov})
		if rapid.Bool().Draw(t, "answered") {
			var out convo.Part
			if rapid.Bool().Draw(t, "json") {
				out = convo.JSON(json.RawMessage(`[{"title":"Go","url":"https://go.dev","type":"r"}]`))
			} else {
				out = convo.Text(rapid.StringMatching(`[a-z .]{0,20}`).Draw(t, "text"))
			}
			m.Parts = append(m.Parts, convo.Part{Type: convo.TypeToolResult, Server: kind, ID: id,
				Parts: []convo.Part{out}, Error: rapid.Bool().Draw(t, "error"), Provider: prov})
		}
		if rapid.Bool().Draw(t, "text") {
			m.Parts = append(m.Parts, convo.Text("said "+id))
		}
	}
	return m
}

// TestPrepareServerToolsProperty: whatever provider-run tool parts an
// assistant message holds, Prepare for a target keeps exactly those of the
// target's own provider when it carries them, in place and unchanged; every
// other one is dropped with one server-tool-dropped warning, or with
// ServerToolsText replaced in place by its ServerToolText with one
// server-tool-as-text warning; nothing else in the message changes, and a
// message left with nothing is left out.
func TestPrepareServerToolsProperty(t *testing.T) {
	provs := []string{"anthropic", "bedrock", "openai", "gemini", ""}
	rapid.Check(t, func(t *rapid.T) {
		m := genServerTurn(t, provs)
		h := convo.History{convo.User("q"), m, convo.User("next")}
		if err := h.Validate(); err != nil {
			t.Fatalf("generated history: %v", err)
		}
		target := provider.Target{Provider: rapid.SampledFrom(provs[:4]).Draw(t, "target"), ServerTools: rapid.Bool().Draw(t, "carries")}
		mode := rapid.SampledFrom([]provider.ServerToolMode{"", provider.ServerToolsDrop, provider.ServerToolsText}).Draw(t, "mode")
		out, warns, err := provider.Prepare(h, target, provider.Options{ServerTools: mode})
		if err != nil {
			t.Fatal(err)
		}
		var want []convo.Part
		dropped, texts := 0, 0
		for _, p := range m.Parts {
			switch {
			case !p.IsServerTool(), target.ServerTools && p.Provider == target.Provider:
				want = append(want, p)
			case mode == provider.ServerToolsText:
				want = append(want, convo.Text(provider.ServerToolText(p)))
				texts++
			default:
				dropped++
			}
		}
		var got []convo.Part
		if len(out) == 3 {
			got = out[1].Parts
		} else if len(out) != 2 || len(want) != 0 {
			t.Fatalf("%d messages out, want parts %+v", len(out), want)
		}
		if len(got) != len(want) {
			t.Fatalf("parts %+v\nwant %+v", got, want)
		}
		for i := range want {
			if !got[i].Equal(want[i]) {
				t.Fatalf("part %d: %+v\nwant %+v", i, got[i], want[i])
			}
		}
		n := map[provider.Code]int{}
		for _, w := range warns {
			n[w.Code]++
		}
		if n[provider.CodeServerToolDropped] != dropped || n[provider.CodeServerToolAsText] != texts {
			t.Fatalf("warnings %v: want %d dropped, %d as text", warns, dropped, texts)
		}
	})
}

// TestEncodeServerToolsElsewhereProperty: every format's Encode takes a
// history with the provider-run tools of a provider none of them is: it
// never fails, warns once per part, and with ServerToolsText sends the
// text of each, which the same format's Decode reads back.
func TestEncodeServerToolsElsewhereProperty(t *testing.T) {
	formats := all.Formats()
	rapid.Check(t, func(t *rapid.T) {
		m := genServerTurn(t, []string{"elsewhere"})
		m.Parts = append(m.Parts, convo.Text("done"))
		h := convo.History{convo.User("q"), m, convo.User("next")}
		f := rapid.SampledFrom(formats).Draw(t, "format")
		text := rapid.Bool().Draw(t, "text")
		opts := provider.Options{}
		if text {
			opts.ServerTools = provider.ServerToolsText
		}
		body, warns, err := f.Encode(h, opts)
		if err != nil {
			t.Fatalf("%s: %v", f.Name(), err)
		}
		code := provider.CodeServerToolDropped
		if text {
			code = provider.CodeServerToolAsText
		}
		n := 0
		for _, w := range warns {
			if w.Code == code {
				n++
			}
		}
		if want := len(m.ServerTools()); n != want {
			t.Fatalf("%s: %d %s warnings, want %d: %v", f.Name(), n, code, want, warns)
		}
		back, _, err := f.Decode(body, provider.Options{})
		if err != nil {
			t.Fatalf("%s: decode %s: %v", f.Name(), body, err)
		}
		var sent strings.Builder
		for _, bm := range back {
			if len(bm.ServerTools()) > 0 {
				t.Fatalf("%s: a provider-run tool of another provider came through: %s", f.Name(), body)
			}
			for _, p := range bm.Parts {
				sent.WriteString(p.Text + "\n")
			}
		}
		for _, p := range m.ServerTools() {
			if s := provider.ServerToolText(p); text != strings.Contains(sent.String(), s) {
				t.Fatalf("%s: text of %s %s sent: %v, want %v\n%s", f.Name(), p.Type, p.ID, !text, text, body)
			}
		}
	})
}
