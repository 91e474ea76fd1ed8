package provider

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestTranslateSchema(t *testing.T) {
	for _, c := range []struct {
		name, in string
		d        Dialect
		want     string
		warns    []string
	}{
		{"strict optional becomes nullable", `{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"integer"}},"required":["a"]}`,
			DialectOpenAIStrict, `{"type":"object","properties":{"a":{"type":"string"},"b":{"type":["integer","null"]}},"required":["a","b"],"additionalProperties":false}`, nil},
		{"strict nested and untyped", `{"type":"object","properties":{"o":{"type":"object","properties":{"x":{"anyOf":[{"type":"string"},{"type":"number"}]}}}},"required":["o"],"additionalProperties":false}`,
			DialectOpenAIStrict, `{"type":"object","properties":{"o":{"type":"object","properties":{"x":{"anyOf":[{"anyOf":[{"type":"string"},{"type":"number"}]},{"type":"null"}]}},"required":["x"],"additionalProperties":false}},"required":["o"],"additionalProperties":false}`, nil},
		{"strict drops what it does not take", `{"type":"object","properties":{"s":{"type":"string","minLength":2,"x-ui":"hidden"}},"required":["s"],"additionalProperties":true}`,
			DialectOpenAIStrict, `{"type":"object","properties":{"s":{"type":"string"}},"required":["s"],"additionalProperties":false}`,
			[]string{`p.properties.s.minLength: OpenAI's strict mode has no "minLength": left out`, `p.properties.s.x-ui: OpenAI's strict mode has no "x-ui": left out`, "p.additionalProperties: OpenAI's strict mode takes no additional properties: set to false"}},
		{"strict unchanged is returned as is", `{"type":"object","properties":{},"required":[],"additionalProperties":false}`,
			DialectOpenAIStrict, `{"type":"object","properties":{},"required":[],"additionalProperties":false}`, nil},
		{"strict keeps recursion by $ref", `{"$defs":{"n":{"type":"object","properties":{"kids":{"type":"array","items":{"$ref":"#/$defs/n"}}},"required":["kids"],"additionalProperties":false}},"$ref":"#/$defs/n"}`,
			DialectOpenAIStrict, `{"$defs":{"n":{"type":"object","properties":{"kids":{"type":"array","items":{"$ref":"#/$defs/n"}}},"required":["kids"],"additionalProperties":false}},"$ref":"#/$defs/n"}`, nil},
		{"gemini inlines refs and nullable", `{"$defs":{"city":{"type":"string","description":"a city"}},"type":"object","properties":{"c":{"$ref":"#/$defs/city"},"n":{"type":["integer","null"]},"k":{"const":"x"}},"additionalProperties":false}`,
			DialectGemini, `{"type":"object","properties":{"c":{"type":"string","description":"a city"},"n":{"type":"integer","nullable":true},"k":{"enum":["x"]}}}`, nil},
		{"gemini drops unknown keywords", `{"type":"object","properties":{"d":{"type":"string","format":"date","if":{"type":"string"}}},"patternProperties":{"^x":{}}}`,
			DialectGemini, `{"type":"object","properties":{"d":{"type":"string","format":"date"}}}`,
			[]string{`p.patternProperties: Gemini's schemas have no "patternProperties": left out`, `p.properties.d.if: Gemini's schemas have no "if": left out`}},
		{"ollama keeps what its types keep", `{"type":"object","properties":{"a":{"type":"string","minLength":1,"enum":["x"]},"o":{"type":"object","properties":{"b":{"type":"integer","minimum":0}}}},"required":["a"],"additionalProperties":false}`,
			DialectOllama, `{"type":"object","properties":{"a":{"type":"string","enum":["x"]},"o":{"type":"object","properties":{"b":{"type":"integer"}}}},"required":["a"]}`,
			[]string{`p.properties.a.minLength: Ollama keeps no "minLength" in tool parameters: left out`, `p.properties.o.properties.b.minimum: Ollama keeps no "minimum" in tool parameters: left out`, `p.additionalProperties: Ollama keeps no "additionalProperties" in tool parameters: left out`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, warns, err := TranslateSchema([]byte(c.in), c.d, "p")
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != c.want {
				t.Errorf("got  %s\nwant %s", got, c.want)
			}
			var ws []string
			for _, w := range warns {
				ws = append(ws, w.String())
				if w.Code != CodeSchemaChanged {
					t.Errorf("code %q", w.Code)
				}
			}
			if strings.Join(ws, "\n") != strings.Join(c.warns, "\n") {
				t.Errorf("warnings:\n%s\nwant:\n%s", strings.Join(ws, "\n"), strings.Join(c.warns, "\n"))
			}
		})
	}
}

// Hostile schemas end in an error or a warning naming the place, never a
// panic or a hang.
func TestTranslateSchemaHostile(t *testing.T) {
	// A chain of definitions each using the next twice doubles at each step.
	var blow strings.Builder
	blow.WriteString(`{"$defs":{`)
	for i := 0; i < 40; i++ {
		fmt.Fprintf(&blow, `"d%d":{"type":"object","properties":{"a":{"$ref":"#/$defs/d%d"},"b":{"$ref":"#/$defs/d%d"}}},`, i, i+1, i+1)
	}
	blow.WriteString(`"d40":{"type":"string"}},"$ref":"#/$defs/d0"}`)
	var wide strings.Builder
	wide.WriteString(`{"type":"object","properties":{`)
	for i := 0; i < 10000; i++ {
		if i > 0 {
			wide.WriteByte(',')
		}
		fmt.Fprintf(&wide, `"p%d":{"type":"string"}`, i)
	}
	wide.WriteString(`}}`)
	nest := func(n int) string {
		return strings.Repeat(`{"type":"object","properties":{"x":`, n) + `{"type":"string"}` + strings.Repeat(`}}`, n)
	}
	deep, tooDeep := nest(20), nest(60)

	for _, c := range []struct {
		name, in string
		d        Dialect
		err      string // a substring of the error, or "" for none
		warn     string // a substring of a warning
	}{
		{"cycle", `{"$defs":{"n":{"type":"object","properties":{"next":{"$ref":"#/$defs/n"}}}},"$ref":"#/$defs/n"}`, DialectGemini, `p.properties.next: invalid schema: $ref cycle through "#/$defs/n"`, ""},
		{"self", `{"type":"object","properties":{"me":{"$ref":"#"}}}`, DialectGemini, `$ref cycle through "#"`, ""},
		{"missing ref", `{"$ref":"#/$defs/none"}`, DialectGemini, `p.$ref: invalid schema: $ref "#/$defs/none" names nothing`, ""},
		{"remote ref", `{"$ref":"https://example.com/s.json"}`, DialectGemini, "is not local", ""},
		{"blow-up", blow.String(), DialectGemini, "more than 200000 values", ""},
		{"10,000 properties strict", wide.String(), DialectOpenAIStrict, "", "10000 properties: OpenAI's strict mode takes at most 5000"},
		{"10,000 properties gemini", wide.String(), DialectGemini, "", ""},
		{"deep strict", deep, DialectOpenAIStrict, "", "OpenAI's strict mode takes at most 10 levels"},
		{"too deep", tooDeep, DialectOpenAIStrict, "p: invalid schema: nesting deeper than 64 levels", ""},
		{"not JSON", `{"type":`, DialectGemini, "p: invalid schema", ""},
		{"duplicate key", `{"type":"a","type":"b"}`, DialectOpenAIStrict, "p: invalid schema", ""},
		{"not an object", `[1,2]`, DialectOpenAIStrict, "", ""},
		{"unknown dialect", `{}`, Dialect("x"), "unknown schema dialect", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, warns, err := TranslateSchema([]byte(c.in), c.d, "p")
			switch {
			case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
				t.Errorf("error %v, want %q", err, c.err)
			case c.err == "" && err != nil:
				t.Errorf("error %v", err)
			}
			if c.err != "" && c.d != "x" && !errors.Is(err, ErrSchema) && err != nil {
				t.Errorf("error does not wrap ErrSchema: %v", err)
			}
			if c.warn != "" {
				found := false
				for _, w := range warns {
					found = found || strings.Contains(w.String(), c.warn)
				}
				if !found {
					t.Errorf("warnings %v, want %q", warns, c.warn)
				}
			}
		})
	}
}

func FuzzTranslateSchema(f *testing.F) {
	f.Add([]byte(`{"type":"object","properties":{"a":{"$ref":"#/$defs/x"}},"$defs":{"x":{"type":["string","null"]}}}`))
	f.Add([]byte(`{"$ref":"#","anyOf":[{"const":1}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, d := range []Dialect{DialectOpenAIStrict, DialectGemini, DialectOllama} {
			out, _, err := TranslateSchema(b, d, "p")
			if err == nil {
				if _, err := parseNode(out); err != nil {
					t.Fatalf("%s: invalid output %s for %s", d, out, b)
				}
			}
		}
	})
}
