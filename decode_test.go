package convo_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/convo-go/convo"
)

func TestUnmarshalForms(t *testing.T) {
	want := convo.History{convo.User("hi"), convo.Assistant("hello")}
	for name, doc := range map[string]string{
		"envelope":           `{"format":"convo/v1","messages":[{"role":"user","parts":[{"type":"text","text":"hi"}]},{"role":"assistant","parts":[{"type":"text","text":"hello"}]}]}`,
		"envelope reordered": `{"messages":[{"role":"user","parts":[{"type":"text","text":"hi"}]},{"role":"assistant","parts":[{"type":"text","text":"hello"}]}],"format":"convo/v1"}`,
		"bare array":         `[{"role":"user","parts":[{"type":"text","text":"hi"}]},{"role":"assistant","parts":[{"type":"text","text":"hello"}]}]`,
		"lines":              "{\"role\":\"user\",\"parts\":[{\"type\":\"text\",\"text\":\"hi\"}]}\n{\"role\":\"assistant\",\"parts\":[{\"type\":\"text\",\"text\":\"hello\"}]}\n",
		"lines with CRLF":    "{\"role\":\"user\",\"parts\":[{\"type\":\"text\",\"text\":\"hi\"}]}\r\n\r\n{\"role\":\"assistant\",\"parts\":[{\"type\":\"text\",\"text\":\"hello\"}]}",
		"BOM":                "\xef\xbb\xbf[{\"role\":\"user\",\"parts\":[{\"type\":\"text\",\"text\":\"hi\"}]},{\"role\":\"assistant\",\"parts\":[{\"type\":\"text\",\"text\":\"hello\"}]}]",
		"aliases":            `[{"role":"human","parts":[{"type":"text","text":"hi"}]},{"role":"ai","parts":[{"type":"text","text":"hello"}]}]`,
		"nulls are absent":   `[{"role":"user","id":null,"meta":null,"parts":[{"type":"text","text":"hi","cache":null}]},{"role":"assistant","usage":null,"parts":[{"type":"text","text":"hello"}]}]`,
	} {
		t.Run(name, func(t *testing.T) {
			got, err := convo.Unmarshal([]byte(doc))
			if err != nil {
				t.Fatal(err)
			}
			if !got.Equal(want) {
				t.Fatalf("got %+v", got)
			}
		})
	}
}

func TestUnmarshalEmpty(t *testing.T) {
	for _, doc := range []string{`{"format":"convo/v1","messages":[]}`, ``, "\n \n", `[]`} {
		h, err := convo.Unmarshal([]byte(doc))
		if err != nil || h == nil || len(h) != 0 {
			t.Fatalf("%q: got %v, %v", doc, h, err)
		}
	}
	h := convo.History{}
	out, _ := convo.Marshal(h)
	if string(out) != "{\"format\":\"convo/v1\",\"messages\":[]}\n" {
		t.Fatalf("empty envelope: %q", out)
	}
}

func TestDeveloperRemembered(t *testing.T) {
	h, err := convo.Unmarshal([]byte(`[{"role":"developer","parts":[{"type":"text","text":"x"}],"native":{"openai":{"name":"dev"}}}]`))
	if err != nil {
		t.Fatal(err)
	}
	if h[0].Role != convo.RoleSystem || string(h[0].Native["openai"]) != `{"role":"developer","name":"dev"}` {
		t.Fatalf("got %s %s", h[0].Role, h[0].Native["openai"])
	}
}

func TestOpaqueStringsByteForByte(t *testing.T) {
	sig := `Eq\u00e9+/=\"\\x` // escapes decode to exact bytes and re-encode
	doc := `[{"role":"assistant","parts":[{"type":"reasoning","signature":"` + sig + `","encrypted":"gAAA+/=="}]}]`
	h, err := convo.Unmarshal([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	if got := h[0].Parts[0].Signature; got != "Eqé+/=\"\\x" {
		t.Fatalf("signature %q", got)
	}
	out, _ := convo.Marshal(h)
	if !strings.Contains(string(out), `"signature":"Eqé+/=\"\\x"`) || !strings.Contains(string(out), `"encrypted":"gAAA+/=="`) {
		t.Fatalf("re-encoded: %s", out)
	}
}

func TestUnknownKept(t *testing.T) {
	doc := `[{"role":"user","zeta":{"b":1, "a":[true]},"parts":[{"type":"hologram","payload":{"x" : 1}},{"type":"text","text":"t","x_new":2}]}]`
	h, err := convo.Unmarshal([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	out, err := convo.MarshalLines(h)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"role":"user","parts":[{"type":"hologram","payload":{"x":1}},{"type":"text","text":"t","x_new":2}],"zeta":{"b":1,"a":[true]}}` + "\n"
	if string(out) != want {
		t.Fatalf("got  %s\nwant %s", out, want)
	}
}

func TestUnmarshalErrors(t *testing.T) {
	deep := strings.Repeat(`{"a":`, 100) + "1" + strings.Repeat("}", 100)
	tests := []struct {
		name, doc, want string
	}{
		{"scalar", `42`, "not a convo document"},
		{"missing role", `[{"parts":[]}]`, "messages[0]: missing role"},
		{"unknown role", `[{"role":"user"},{"role":"robot"}]`, `messages[1].role: unknown role "robot"`},
		{"role not a string", `[{"role":7}]`, "messages[0].role: got number, want string"},
		{"duplicate key", `[{"role":"user","role":"user"}]`, `messages[0]: duplicate key "role"`},
		{"duplicate key in meta", `[{"role":"user","meta":{"a":1,"a":2}}]`, `messages[0].meta: duplicate key "a"`},
		{"invalid UTF-8", "[{\"role\":\"user\",\"parts\":[{\"type\":\"text\",\"text\":\"a\xffb\"}]}]", "messages[0].parts[0].text: invalid UTF-8"},
		{"truncated", `[{"role":"user","parts":[{"type":"text","text":"abc`, "messages[0].parts[0].text: unexpected end of input"},
		{"truncated array", `[{"role":"user"}`, "unexpected end of input in array"},
		{"malformed base64", `[{"role":"user","parts":[{"type":"text"},{"type":"image","media_type":"image/png","data":"iVBO*w=="}]}]`, "messages[0].parts[1].data: malformed base64 at offset 4"},
		{"base64 length", `[{"role":"user","parts":[{"type":"image","data":"abcde"}]}]`, "messages[0].parts[0].data: malformed base64"},
		{"part without type", `[{"role":"user","parts":[{"text":"x"}]}]`, "messages[0].parts[0]: part has no type"},
		{"wrong type for parts", `[{"role":"user","parts":{}}]`, "messages[0]: got object, want array"},
		{"bad time", `[{"role":"user","time":"yesterday"}]`, `messages[0].time: not an RFC 3339 time`},
		{"compacted not integer", `[{"role":"summary","compacted":1.5}]`, "messages[0].compacted: want an integer"},
		{"negative usage", `[{"role":"assistant","usage":{"input":-1}}]`, "messages[0].usage.input: negative token count"},
		{"unknown usage member", `[{"role":"assistant","usage":{"inputs":1}}]`, `messages[0].usage: unknown member "inputs"`},
		{"meta not object", `[{"role":"user","meta":[1]}]`, "messages[0].meta: meta must be a JSON object"},
		{"native not object", `[{"role":"user","native":{"openai":1}}]`, "messages[0].native.openai: must be a JSON object"},
		{"nesting too deep", `[{"role":"user","meta":` + deep + `}]`, "nesting deeper than 64 levels"},
		{"unsupported format", `{"format":"convo/v2","messages":[]}`, `format: unsupported format "convo/v2"`},
		{"unknown envelope member", `{"format":"convo/v1","messages":[],"title":"x"}`, `unknown envelope member "title"`},
		{"envelope without format", `{"messages":[]}`, `envelope has no "format"`},
		{"trailing data", `[{"role":"user"}] x`, "unexpected data after the JSON value"},
		{"bad line", "{\"role\":\"user\"}\n{\"role\":\"user\",}", "messages[1]"},
		{"summary not strings", `[{"role":"assistant","parts":[{"type":"reasoning","summary":["a",1]}]}]`, "messages[0].parts[0].summary[1]: got number, want string"},
		{"control character", "[{\"role\":\"user\",\"name\":\"a\x01\"}]", "messages[0].name: control character in string"},
		{"bad escape", `[{"role":"user","name":"\q"}]`, `messages[0].name: invalid escape "\\q"`},
		{"lone surrogate", `[{"role":"user","name":"\ud800"}]`, "messages[0].name: unpaired surrogate"},
		{"leading zero", `[{"role":"summary","compacted":01}]`, "messages[0]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := convo.Unmarshal([]byte(tt.doc))
			if err == nil {
				t.Fatalf("no error, want %q", tt.want)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %q does not contain %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error is not one line: %q", err)
			}
		})
	}
}

func TestLimits(t *testing.T) {
	doc := []byte(`[{"role":"user","parts":[{"type":"text","text":"` + strings.Repeat("x", 1000) + `"}]}]`)
	l := convo.Limits{MaxBytes: 100, MaxDepth: 10}
	if _, err := l.Unmarshal(doc); err == nil || !strings.Contains(err.Error(), "more than 100 bytes") {
		t.Fatalf("size limit: %v", err)
	}
	if _, err := l.Read(strings.NewReader(string(doc))); err == nil {
		t.Fatal("Read ignored the size limit")
	}
	l.MaxBytes = 1 << 20
	if _, err := l.Unmarshal([]byte(`[{"role":"user","meta":{"a":{"b":{"c":{"d":{"e":{"f":{"g":{"h":{}}}}}}}}}}]`)); err == nil {
		t.Fatal("depth limit ignored")
	}
	if _, err := l.Unmarshal(doc); err != nil {
		t.Fatal(err)
	}
}

func TestZeroLimitsMeanDefaults(t *testing.T) {
	doc := `[{"role":"user","parts":[{"type":"text","text":"hello"}]}]`
	var zero convo.Limits
	for name, f := range map[string]func() (convo.History, error){
		"Read":      func() (convo.History, error) { return zero.Read(strings.NewReader(doc)) },
		"Unmarshal": func() (convo.History, error) { return zero.Unmarshal([]byte(doc)) },
	} {
		if h, err := f(); err != nil || len(h) != 1 || h[0].Text() != "hello" {
			t.Errorf("%s with zero Limits: %v %v", name, h, err)
		}
	}
}

func TestDecodeErrorType(t *testing.T) {
	_, err := convo.Unmarshal([]byte(`[{"role":"user"},{"role":"nobody"}]`))
	var de *convo.DecodeError
	if !errors.As(err, &de) || de.Path != "messages[1].role" {
		t.Fatalf("got %#v", err)
	}
}

func TestMessageJSONInterop(t *testing.T) {
	m := convo.Assistant("hi", convo.ToolCall("c1", "f", []byte(`{"a":1}`)))
	b, err := m.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	var back convo.Message
	if err := back.UnmarshalJSON(b); err != nil || !back.Equal(m) {
		t.Fatalf("round trip: %v %+v", err, back)
	}
	var p convo.Part
	if err := p.UnmarshalJSON([]byte(`{"type":"text","text":"x"}`)); err != nil || p.Text != "x" {
		t.Fatalf("part: %v %+v", err, p)
	}
}

func TestMarshalRejectsWhatItCannotWrite(t *testing.T) {
	tests := []struct {
		name string
		h    convo.History
		want string
	}{
		{"invalid UTF-8", convo.History{convo.User("ok"), convo.User("a\xffb")}, "messages[1].parts[0].text: invalid UTF-8"},
		{"invalid args", convo.History{convo.Assistant("", convo.ToolCall("c", "f", []byte(`{bad`)))}, "messages[0].parts[0].args: invalid JSON"},
		{"unknown role", convo.History{{Role: "robot"}}, `messages[0]: unknown role "robot"`},
		{"invalid meta", convo.History{{Role: convo.RoleUser, Meta: []byte(`{"a":}`)}}, "messages[0].meta: invalid JSON"},
		{"invalid native", convo.History{{Role: convo.RoleUser, Native: convo.Native{"x": []byte(`[`)}}}, "messages[0].native.x: invalid JSON"},
		{"part without type", convo.History{{Role: convo.RoleUser, Parts: []convo.Part{{Text: "x"}}}}, "messages[0].parts[0]: part has no type"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, enc := range []func(convo.History) ([]byte, error){convo.Marshal, convo.MarshalLines} {
				_, err := enc(tt.h)
				if err == nil || !strings.Contains(err.Error(), tt.want) {
					t.Fatalf("got %v, want %q", err, tt.want)
				}
			}
		})
	}
}

func TestMarshalCompactsHandBuiltJSON(t *testing.T) {
	h := convo.History{convo.Assistant("", convo.ToolCall("c", "f", []byte("{\n  \"a\": [1, 2]\n}")))}
	out, err := convo.MarshalLines(h)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Count(string(out), "\n") != 1 || !strings.Contains(string(out), `"args":{"a":[1,2]}`) {
		t.Fatalf("got %s", out)
	}
}

func TestErrorAtAndCheckBase64(t *testing.T) {
	err := convo.ErrorAt(convo.ErrorAt(convo.ErrorAt(errors.New("bad"), "source"), "content[0]"), "messages[2]")
	if err.Error() != "messages[2].content[0].source: bad" {
		t.Fatalf("got %q", err)
	}
	if convo.ErrorAt(nil, "x") != nil {
		t.Fatal("nil error gained a path")
	}
	for s, want := range map[string]string{"": "", "QUJD": "", "QUI=": "", "QQ==": "", "QUJ": "offset 0", "QU*D": "offset 2", "Q===": "offset 1", "QUJD\n": "offset 4"} {
		err := convo.CheckBase64(s)
		if (want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), want)) {
			t.Errorf("CheckBase64(%q) = %v, want %q", s, err, want)
		}
	}
}

// TestPartNestingBoundary: tool results may nest parts four levels deep at
// most (docs/format.md): four levels are read, five are refused, naming
// the place.
func TestPartNestingBoundary(t *testing.T) {
	nested := func(levels int) string {
		inner := `{"type":"text","text":"deepest"}`
		for i := 0; i < levels; i++ {
			inner = `{"type":"tool_result","call_id":"c","name":"f","parts":[` + inner + `]}`
		}
		return `[{"role":"assistant","parts":[{"type":"tool_call","id":"c","name":"f","args":{}}]},{"role":"tool","parts":[` + inner + `]}]`
	}
	h, err := convo.Unmarshal([]byte(nested(4)))
	if err != nil {
		t.Fatalf("four levels: %v", err)
	}
	p := h[1].Parts[0]
	for i := 1; i < 4; i++ {
		p = p.Parts[0]
	}
	if p.Parts[0].Text != "deepest" {
		t.Fatalf("four levels read as %+v", h[1])
	}
	_, err = convo.Unmarshal([]byte(nested(5)))
	if err == nil || err.Error() != "messages[1].parts[0].parts[0].parts[0].parts[0].parts[0]: parts nested too deeply" {
		t.Fatalf("five levels: %v", err)
	}
}
