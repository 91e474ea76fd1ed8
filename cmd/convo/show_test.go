package main

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// hostile holds the sequences a message could use to take over a terminal:
// colours, a window title (OSC 0), the clipboard (OSC 52), cursor movement,
// a carriage return that overwrites the line, C1 CSI, DEL and NUL.
var hostile = []string{
	"\x1b[31mred\x1b[0m",
	"\x1b]0;pwned title\x07",
	"\x1b]52;c;ZWNobyBwd25lZA==\x07",
	"\x1b[2J\x1b[H",
	"ok\rover",
	"\u009b31m",
	"\x7f\x00\x08",
}

// TestShowEscapesControlCharacters fills every field show prints with
// escape sequences and checks that none reaches the output, with colour off
// (no control byte at all but newline and tab) and on (only convo's own
// colour codes).
func TestShowEscapesControlCharacters(t *testing.T) {
	for _, bad := range hostile {
		s := func(prefix string) string { return prefix + bad }
		msgs := []map[string]any{
			{"role": "user", "name": s("n"), "parts": []any{
				map[string]any{"type": "text", "text": s("t")},
				map[string]any{"type": "image", "media_type": s("image/"), "name": s("f"), "url": s("https://x/")},
				map[string]any{"type": "file", "file_id": s("file_")},
				map[string]any{"type": "json", "value": map[string]string{"k": s("v")}},
			}},
			{"role": "assistant", "phase": s("p"), "finish": s("f"), "origin": map[string]any{"provider": s("p"), "model": s("m")}, "parts": []any{
				map[string]any{"type": "reasoning", "text": s("r"), "provider": s("p"), "signature": "x"},
				map[string]any{"type": "reasoning", "summary": []string{s("sum")}},
				map[string]any{"type": "refusal", "text": s("no")},
				map[string]any{"type": "tool_call", "id": s("c"), "name": s("f"), "args": map[string]string{"a": s("b")}},
			}},
			{"role": "tool", "parts": []any{
				map[string]any{"type": "tool_result", "id": s("c"), "name": s("f"), "error": true, "parts": []any{
					map[string]any{"type": "text", "text": s("res")}}},
			}},
			{"role": "assistant", "parts": []any{map[string]any{"type": "tool_call", "id": "d", "name": "g", "args_raw": s("{")}}},
			{"role": "assistant", "parts": []any{map[string]any{"type": s("x-custom")}}},
		}
		doc, err := json.Marshal(msgs)
		if err != nil {
			t.Fatal(err)
		}
		in := string(doc)
		for _, color := range []bool{false, true} {
			args := []string{"show"}
			if color {
				args = append(args, "--color")
			}
			out, errs, code := runCLI(t, in, args...)
			if code != 0 {
				t.Fatalf("%q: exit %d: %s", bad, code, errs)
			}
			if !strings.Contains(out, "\\x1b") && strings.Contains(bad, "\x1b") {
				t.Errorf("%q: the escape is not shown escaped:\n%s", bad, out)
			}
			rest := out
			if color {
				for _, c := range []string{bold, dim, reset, yellow, cyan, red, green} {
					rest = strings.ReplaceAll(rest, c, "")
				}
			}
			for i, r := range rest {
				if r == utf8.RuneError || (r < 0x20 && r != '\n' && r != '\t') || (r >= 0x7f && r <= 0x9f) {
					t.Fatalf("%q (colour %v): control character %U at byte %d of output:\n%q", bad, color, r, i, out)
				}
			}
		}
	}
}

func TestEsc(t *testing.T) {
	for in, want := range map[string]string{
		"plain\ttext\nline": "plain\ttext\nline",
		"\x1b[31m":          `\x1b[31m`,
		"a\rb":              `a\x0db`,
		"\u009b":            `\u009b`,
		"\x9b":              `\x9b`,
		"é \ufffd":          "é \ufffd",
		"\x7f":              `\x7f`,
	} {
		if got := esc(in); got != want {
			t.Errorf("esc(%q) = %q, want %q", in, got, want)
		}
	}
}
