package provider_test

import (
	"os"
	"strings"
	"testing"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/internal/codectest"
)

func serverHistory(t *testing.T) convo.History {
	t.Helper()
	src, err := os.ReadFile("../testdata/v1/server-tools.json")
	if err != nil {
		t.Fatal(err)
	}
	h, err := convo.Unmarshal(src)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// TestPrepareServerTools: the provider-run tool parts of the v1 golden
// history go back whole to the provider that ran them, to a target that
// carries them, and are dropped or rendered as text elsewhere; the text
// and the warnings are kept in golden files.
func TestPrepareServerTools(t *testing.T) {
	h := serverHistory(t)
	for _, tc := range []struct {
		name string
		t    provider.Target
		mode provider.ServerToolMode
	}{
		{"anthropic-replay", provider.Target{Provider: "anthropic", ServerTools: true}, ""},
		{"anthropic-no-carrier", provider.Target{Provider: "anthropic"}, ""},
		{"gemini-drop", provider.Target{Provider: "gemini", ServerTools: true}, ""},
		{"ollama-text", provider.Target{Provider: "ollama"}, provider.ServerToolsText},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, warns, err := provider.Prepare(h, tc.t, provider.Options{ServerTools: tc.mode})
			if err != nil {
				t.Fatal(err)
			}
			doc, err := convo.Marshal(out)
			if err != nil {
				t.Fatal(err)
			}
			got := append(doc, "-- warnings --\n"...)
			got = append(got, codectest.WarningText(warns)...)
			codectest.Golden(t, "testdata/servertools/"+tc.name+".golden", got)
			for _, m := range out {
				for _, p := range m.Parts {
					if p.IsServerTool() && (!tc.t.ServerTools || p.Provider != tc.t.Provider) {
						t.Errorf("%s part of %s sent to %s", p.Server, p.Provider, tc.t.Provider)
					}
				}
			}
		})
	}
}

func TestPrepareServerToolsAccepted(t *testing.T) {
	h := serverHistory(t)
	// Choosing the mode explicitly accepts its loss: no warning.
	for _, mode := range []provider.ServerToolMode{provider.ServerToolsDrop, provider.ServerToolsText} {
		opts := provider.Options{ServerTools: mode}
		_, warns, err := provider.Prepare(h, provider.Target{Provider: "ollama"}, opts)
		if err != nil {
			t.Fatal(err)
		}
		kept, err := opts.Finish(warns)
		if err != nil || len(kept) != 0 {
			t.Errorf("%s: kept warnings %v, %v", mode, kept, err)
		}
	}
	// A reply paused mid-search (a call alone) is left out whole, not sent
	// empty.
	paused := convo.History{convo.User("q"), {Role: convo.RoleAssistant, Parts: []convo.Part{h[1].Parts[0]}}, convo.User("go on")}
	out, _, err := provider.Prepare(paused, provider.Target{Provider: "gemini"}, provider.Options{})
	if err != nil || len(out) != 2 {
		t.Errorf("Prepare = %d messages, %v; want the paused reply left out", len(out), err)
	}
}

func TestServerToolText(t *testing.T) {
	h := serverHistory(t)
	got := provider.ServerToolText(h[1].Parts[1])
	want := "[web_search result srvtoolu_1:\ntitle: Go 1.26 Release Notes\nurl: https://go.dev/doc/go1.26]"
	if got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	long := convo.ServerToolResult("web_fetch", "x", "", "", convo.JSON([]byte(`{"data":"`+strings.Repeat("A", 300)+`","n":1,"ok":true,"x":null}`)),
		convo.Image("image/png", []byte{1}))
	if got, want := provider.ServerToolText(long), "[web_fetch result:\nn: 1\nok: true\n(image image/png)]"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	bad := convo.ServerToolCall("code_execution", "x", "c", "code_execution", nil)
	bad.ArgsRaw = `{"code":`
	if got, want := provider.ServerToolText(bad), `[code_execution call c: {"code":]`; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
