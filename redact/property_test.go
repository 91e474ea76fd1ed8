package redact

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/convo-go/convo"
	"pgregory.net/rapid"
)

// secretish draws text mixing words with things the built-in rules match,
// so the properties see redactions, near misses and markers.
func secretish() *rapid.Generator[string] {
	piece := rapid.SampledFrom([]string{
		"hello", " ", "a@b.io", "x.y+z@mail.example.org", "sk-proj-0123456789abcdefghijkl",
		"sk-ant-api03-ABCDEFGHIJKLMNOPQRSTUVWX", "AIzaSyA1234567890abcdefghijklmnopqrstuv",
		"AKIAIOSFODNN7EXAMPLE", "Bearer abcdefghijklmnop0123", "4111 1111 1111 1111",
		"4111111111111112", "[REDACTED:email]", "[REDACTED:", "]", "@", "-", "\"", "\\", "é",
	})
	return rapid.Custom(func(t *rapid.T) string {
		var b strings.Builder
		for _, p := range rapid.SliceOfN(piece, 0, 8).Draw(t, "pieces") {
			b.WriteString(p)
		}
		return b.String()
	})
}

func messageGen() *rapid.Generator[convo.Message] {
	return rapid.Custom(func(t *rapid.T) convo.Message {
		s := secretish()
		var parts []convo.Part
		for i := range rapid.IntRange(1, 4).Draw(t, "n") {
			switch rapid.IntRange(0, 4).Draw(t, "kind") {
			case 0:
				parts = append(parts, convo.Text(s.Draw(t, "text")))
			case 1:
				parts = append(parts, convo.Part{Type: convo.TypeReasoning, Text: s.Draw(t, "r"),
					Signature: s.Draw(t, "sig"), Encrypted: s.Draw(t, "enc"), Summary: []string{s.Draw(t, "sum")}})
			case 2:
				args, _ := json.Marshal(map[string]string{"q": s.Draw(t, "arg")})
				parts = append(parts, convo.ToolCall("call_"+string(rune('a'+i)), "f", args))
			case 3:
				parts = append(parts, convo.Image("image/png", []byte(s.Draw(t, "img"))))
			case 4:
				parts = append(parts, convo.Part{Type: convo.TypeImage, MediaType: "image/png", URL: "https://x/?k=" + s.Draw(t, "url")})
			}
		}
		return convo.Message{Role: convo.RoleAssistant, Parts: parts}
	})
}

func TestPropertyMessage(t *testing.T) {
	r := builtin(t)
	rapid.Check(t, func(t *rapid.T) {
		m := messageGen().Draw(t, "m")
		orig := m.Clone()
		got, counts := r.Message(m)
		if !reflect.DeepEqual(m, orig) {
			t.Fatal("the argument changed")
		}
		again, c2 := r.Message(got)
		if c2 != nil || !reflect.DeepEqual(again, got) {
			t.Fatalf("not idempotent: second pass %v", c2)
		}
		total := 0
		for i, p := range got.Parts {
			o := orig.Parts[i]
			if p.Signature != o.Signature || p.Encrypted != o.Encrypted || p.Data != o.Data {
				t.Fatalf("parts[%d]: signature, encrypted payload or media data changed", i)
			}
			rec := Redacted(p.Native)
			if reflect.DeepEqual(p, o) != (rec == nil) {
				t.Fatalf("parts[%d]: changed=%v but record %v", i, !reflect.DeepEqual(p, o), rec)
			}
			for _, n := range rec {
				total += n
			}
			if p.Args != nil && !json.Valid(p.Args) {
				t.Fatalf("parts[%d]: args no longer JSON: %s", i, p.Args)
			}
		}
		sum := 0
		for _, n := range counts {
			sum += n
		}
		if sum != total {
			t.Fatalf("counts %v disagree with the parts' records (%d)", counts, total)
		}
		if _, err := convo.AppendMessage(nil, got); err != nil {
			t.Fatalf("redacted message does not encode: %v", err)
		}
	})
}

func FuzzString(f *testing.F) {
	for _, s := range []string{"a@b.io", "4111 1111 1111 1111", "sk-ant-api03-ABCDEFGHIJKLMNOPQRSTUVWX", "[REDACTED:x]a@b.io", "Bearer aaaaaaaaaaaaaaaaaaaa"} {
		f.Add(s)
	}
	r := builtin(f)
	f.Fuzz(func(t *testing.T, s string) {
		got, c := r.String(s)
		again, c2 := r.String(got)
		if again != got || c2 != nil {
			t.Fatalf("not idempotent: %q -> %q -> %q", s, got, again)
		}
		if (c == nil) != (got == s) {
			t.Fatalf("counts %v but changed=%v", c, got != s)
		}
	})
}

func FuzzJSON(f *testing.F) {
	for _, s := range []string{`{"a":"a@b.io"}`, `[4111111111111111,"x\"y"]`, `"\u0041KIAIOSFODNN7EXAMPLE"`, `{"k":-4111111111111111e2}`} {
		f.Add([]byte(s))
	}
	r := builtin(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		got, _ := r.json(b)
		if json.Valid(b) && !json.Valid(got) {
			t.Fatalf("valid %s became invalid %s", b, got)
		}
		again, c := r.json(got)
		if json.Valid(b) && (c != nil || string(again) != string(got)) {
			t.Fatalf("not idempotent: %s -> %s -> %s", b, got, again)
		}
	})
}
