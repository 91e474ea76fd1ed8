package openai

import (
	"encoding/json"
	"github.com/convo-go/convo/provider/internal/codectest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
)

// TestArguments covers the arguments string of both APIs: parsed into Args
// when valid, kept byte for byte when valid but not compact, kept raw when
// malformed, and replaced when the caller changed Args.
func TestArguments(t *testing.T) {
	for _, c := range []struct {
		name, args string
		wantArgs   string // compact Args, "" for none
		wantRaw    string
	}{
		{"compact", `{"a":1}`, `{"a":1}`, ""},
		{"spaced", `{ "a": 1,  "b": [1, 2] }`, `{"a":1,"b":[1,2]}`, ""},
		{"escapes kept", `{"s":"\u00e9\n"}`, `{"s":"\u00e9\n"}`, ""},
		{"malformed", `{"a":1`, "", `{"a":1`},
		{"duplicate keys", `{"a":1,"a":2}`, "", `{"a":1,"a":2}`},
		{"empty", ``, "", ""},
		{"not an object", `[1,2]`, `[1,2]`, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			argsJSON, _ := json.Marshal(c.args)
			chat := `{"messages":[{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":` + string(argsJSON) + `}}]},{"role":"tool","tool_call_id":"c1","content":"ok"}]}`
			resp := `{"input":[{"type":"function_call","call_id":"c1","name":"f","arguments":` + string(argsJSON) + `},{"type":"function_call_output","call_id":"c1","output":"ok"}]}`
			for _, x := range []struct {
				codec provider.Codec
				body  string
			}{{Chat(), chat}, {Responses(), resp}} {
				h, _, err := x.codec.Decode([]byte(x.body), provider.Options{})
				if err != nil {
					t.Fatal(err)
				}
				call := h[0].Parts[0]
				if string(call.Args) != c.wantArgs || call.ArgsRaw != c.wantRaw {
					t.Errorf("%s: args %s raw %q, want %s %q", x.codec.Name(), call.Args, call.ArgsRaw, c.wantArgs, c.wantRaw)
				}
				out, _, err := x.codec.Encode(h, provider.Options{})
				if err != nil {
					t.Fatal(err)
				}
				sameJSON(t, x.codec.Name(), out, []byte(x.body))

				// Changed arguments win over the kept original.
				if call.Args != nil {
					h[0].Parts[0].Args = []byte(`{"changed":true}`)
					out, _, err = x.codec.Encode(h, provider.Options{})
					if err != nil {
						t.Fatal(err)
					}
					if !strings.Contains(string(out), `"{\"changed\":true}"`) {
						t.Errorf("%s: edited args not sent:\n%s", x.codec.Name(), out)
					}
				}
			}
		})
	}
}

func TestToolResultNames(t *testing.T) {
	body := `{"messages":[
		{"role":"assistant","tool_calls":[
			{"id":"a","type":"function","function":{"name":"one","arguments":"{}"}},
			{"id":"b","type":"function","function":{"name":"two","arguments":"{}"}}]},
		{"role":"tool","tool_call_id":"b","content":"2"},
		{"role":"tool","tool_call_id":"a","content":"1"}]}`
	h, _, err := Chat().Decode([]byte(body), provider.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if n1, n2 := h[1].Parts[0].Name, h[2].Parts[0].Name; n1 != "two" || n2 != "one" {
		t.Errorf("result names %q %q, want two one", n1, n2)
	}
	// The names let the results go to a provider that matches by name.
	if err := h.Validate(); err != nil {
		t.Error(err)
	}
}

// TestGrouping checks how Responses items become messages: model-side items
// gather into one assistant message with at most one message item, and the
// reasoning before a second message item moves with it.
func TestGrouping(t *testing.T) {
	body := `{"input":[
		{"role":"user","content":"q"},
		{"type":"reasoning","id":"rs_1","summary":[]},
		{"type":"message","id":"msg_1","role":"assistant","phase":"commentary","content":[{"type":"output_text","text":"a","annotations":[]}]},
		{"type":"reasoning","id":"rs_2","summary":[]},
		{"type":"reasoning","id":"rs_3","summary":[]},
		{"type":"message","id":"msg_2","role":"assistant","phase":"final_answer","content":[{"type":"output_text","text":"b","annotations":[]}]},
		{"type":"function_call","call_id":"c1","name":"f","arguments":"{}"},
		{"type":"function_call","call_id":"c2","name":"f","arguments":"{}"},
		{"type":"function_call_output","call_id":"c2","output":"2"},
		{"type":"function_call_output","call_id":"c1","output":"1"}]}`
	h, warns, err := Responses().Decode([]byte(body), provider.Options{})
	if err != nil || len(warns) > 0 {
		t.Fatal(err, warns)
	}
	var shape []string
	for _, m := range h {
		var ps []string
		for _, p := range m.Parts {
			s := string(p.Type)
			if p.ID != "" {
				s += ":" + p.ID
			}
			ps = append(ps, s)
		}
		shape = append(shape, string(m.Role)+"/"+string(m.Phase)+"["+strings.Join(ps, " ")+"]")
	}
	want := []string{
		"user/[text]",
		"assistant/commentary[reasoning:rs_1 text]",
		"assistant/final[reasoning:rs_2 reasoning:rs_3 text tool_call:c1 tool_call:c2]",
		"tool/[tool_result:c2]",
		"tool/[tool_result:c1]",
	}
	if strings.Join(shape, "\n") != strings.Join(want, "\n") {
		t.Errorf("messages:\n%s\nwant:\n%s", strings.Join(shape, "\n"), strings.Join(want, "\n"))
	}
	if err := h.Validate(); err != nil {
		t.Error(err)
	}
}

func TestItems(t *testing.T) {
	body := readFile(t, filepath.Join("testdata", "responses", "phases.json"))
	h, _, err := Responses().Decode(body, provider.Options{})
	if err != nil {
		t.Fatal(err)
	}
	items, warns, err := EncodeItems(h, provider.Options{})
	if err != nil || len(warns) > 0 {
		t.Fatal(err, warns)
	}
	var input struct{ Input []json.RawMessage }
	if err := json.Unmarshal(body, &input); err != nil {
		t.Fatal(err)
	}
	if len(items) != len(input.Input) {
		t.Fatalf("%d items, want %d", len(items), len(input.Input))
	}
	for i := range items {
		sameJSON(t, "item "+itoa(i), items[i], input.Input[i])
	}
	back, warns, err := DecodeItems(items, provider.Options{})
	if err != nil || len(warns) > 0 {
		t.Fatal(err, warns)
	}
	if !back.Equal(h) {
		t.Errorf("DecodeItems(EncodeItems(h)) != h:\n%s", codectest.LineDiff(string(mustMarshal(t, h)), string(mustMarshal(t, back))))
	}

	// Instructions become a message item; an input string an ordinary one.
	h, _, err = Responses().Decode(readFile(t, filepath.Join("testdata", "responses", "string.json")), provider.Options{})
	if err != nil {
		t.Fatal(err)
	}
	items, _, err = EncodeItems(h, provider.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 2 {
		t.Fatalf("got %d items", len(items))
	}
	sameJSON(t, "instructions item", items[0], []byte(`{"role":"system","content":"Talk like a pirate."}`))
	sameJSON(t, "input item", items[1], []byte(`{"role":"user","content":"Are semicolons optional in JavaScript?"}`))

	// Errors name the item.
	_, _, err = DecodeItems([]json.RawMessage{[]byte(`{"role":"user","content":"x"}`), []byte(`{"role":"user"}`)}, provider.Options{})
	if err == nil || !strings.HasPrefix(err.Error(), `items[1]: message has no "content"`) {
		t.Errorf("got %v", err)
	}
	// An item that is not one JSON value is an error too.
	_, _, err = DecodeItems([]json.RawMessage{[]byte(`{"role":"user","content":"x"} {}`)}, provider.Options{})
	if err == nil || !strings.HasPrefix(err.Error(), "items[0]: unexpected data") {
		t.Errorf("got %v", err)
	}
}

func itoa(i int) string { return index("", i) }

func TestOrphanOutput(t *testing.T) {
	body := readFile(t, filepath.Join("testdata", "responses", "stateful.json"))
	h, warns, err := Responses().Decode(body, provider.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(warns) != 1 || warns[0].Path != "input[0]" {
		t.Fatalf("warnings %v", warns)
	}
	// Other providers skip it with a warning; Chat too.
	_, warns, err = Chat().Encode(h, provider.Options{})
	if err != nil || len(warns) != 1 {
		t.Errorf("chat: %v %v", warns, err)
	}
}

func TestDataURL(t *testing.T) {
	for _, c := range []struct {
		in       string
		mt, data string
		ok       bool
	}{
		{"data:image/png;base64,iVBORw0KGgo=", "image/png", "iVBORw0KGgo=", true},
		{"data:application/pdf;base64,JVBERi0=", "application/pdf", "JVBERi0=", true},
		{"data:image/png;base64,not base64", "", "", false},
		{"data:image/png;base64,", "", "", false},
		{"data:;base64,AAAA", "", "", false},
		{"data:text/plain,hello", "", "", false},
		{"data:image/png;charset=x;base64,AAAA", "", "", false},
		{"https://example.com/a.png", "", "", false},
		{"data:image/png;base64,iVBORw0KGgo", "", "", false}, // unpadded
	} {
		mt, data, ok := parseDataURL(c.in)
		if mt != c.mt || data != c.data || ok != c.ok {
			t.Errorf("parseDataURL(%q) = %q %q %v", c.in, mt, data, ok)
		}
	}
	// An image URL that is a data URL convo cannot split stays a URL and
	// comes back unchanged.
	body := `{"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"data:image/png;base64,iVBORw0KGgo"}}]}]}`
	h, _, err := Chat().Decode([]byte(body), provider.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if h[0].Parts[0].URL == "" {
		t.Errorf("unpadded data URL not kept as a URL: %+v", h[0].Parts[0])
	}
	out, _, _ := Chat().Encode(h, provider.Options{})
	sameJSON(t, "data URL", out, []byte(body))
}

func TestNative(t *testing.T) {
	var nr natReader
	n, err := nr.of(convo.Native{"openai": []byte(`{"api":"chat","role":"developer","content":null,"from":"x"}`)})
	if err != nil {
		t.Fatal(err)
	}
	if !n.chat || len(n.m) != 3 {
		t.Fatalf("%+v", n)
	}
	if v := n.view(false); len(v.m) != 1 || string(v.m[0].key) != "role" {
		t.Errorf("Responses view of a Chat object: %+v", v)
	}
	if v := n.view(true); len(v.m) != 3 {
		t.Errorf("Chat view: %+v", v)
	}
	if !n.is("role", "developer") || n.is("role", "system") || n.is("content", "null") {
		t.Error("is")
	}
	// close adds what was not written, never markers, never twice.
	buf := []byte(`[{"role":"system"`)
	buf = nr.close(n, buf, 1)
	if string(buf) != `[{"role":"system","content":null}` {
		t.Errorf("close: %s", buf)
	}
	one, _ := nr.read([]byte(`{"a":1}`))
	if buf = nr.close(one, []byte(`{`), 0); string(buf) != `{"a":1}` {
		t.Errorf("close on an empty object: %s", buf)
	}
	nested, _ := nr.read([]byte(`{"image_url":{"uuid":"u"},"x":[1, 2]}`))
	if sub := nr.sub(nested, "image_url"); len(sub.m) != 1 || string(sub.m[0].val) != `"u"` {
		t.Errorf("sub: %+v", sub)
	}
	if _, err := nr.read([]byte(`{"a":`)); err == nil {
		t.Error("invalid native accepted")
	}
	var b natBuilder
	if b.native(true) != nil {
		t.Error("empty builder made a native")
	}
	b.add("role", []byte(`"developer"`))
	if got := string(b.native(true)["openai"]); got != `{"role":"developer"}` {
		t.Errorf("role only: %s", got)
	}
	b.add("x", []byte(`1`))
	if got := string(b.native(true)["openai"]); got != `{"api":"chat","role":"developer","x":1}` {
		t.Errorf("chat object: %s", got)
	}
}

// TestDeveloperFromCanonical checks that a developer message read by the
// canonical decoder (which records the role) goes back as developer to both
// APIs whatever SystemRole says.
func TestDeveloperFromCanonical(t *testing.T) {
	h := mustUnmarshal(t, []byte(`[{"role":"developer","parts":[{"type":"text","text":"d"}]},{"role":"user","parts":[{"type":"text","text":"u"}]}]`))
	for _, codec := range []provider.Codec{Chat(), Responses()} {
		out, _, err := codec.Encode(h, provider.Options{SystemRole: "system"})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(out), `{"role":"developer","content":"d"}`) {
			t.Errorf("%s: %s", codec.Name(), out)
		}
	}
}

func TestTopKeys(t *testing.T) {
	for _, c := range []struct {
		obj  string
		want string
	}{
		{`{"a":1,"b":"x","c":{"d":1}`, "a b c"},
		{`{"a":"q\"uote\\","b":["x","y"],"c":"\\\\"`, "a b c"},
		{`{"type":"x","text":"a \"b\": c"`, "type text"},
		{`{`, ""},
		{`{"a":"unterminated`, "a"},
	} {
		var got []string
		for _, k := range topKeys([]byte(c.obj), nil) {
			got = append(got, string(k))
		}
		if strings.Join(got, " ") != c.want {
			t.Errorf("topKeys(%s) = %q, want %q", c.obj, got, c.want)
		}
	}
}
