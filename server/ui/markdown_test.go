package ui

import (
	"regexp"
	"strings"
	"testing"
)

func TestMarkdown(t *testing.T) {
	for _, tc := range []struct {
		in          string
		want, never []string
	}{
		{in: "**bold** and `code`", want: []string{"<strong>bold</strong>", "<code>code</code>"}},
		{in: "```go\nfunc f() {}\n```", want: []string{`<code class="language-go">func f() {}`}},
		{in: "| a | b |\n|:--|--:|\n| 1 | 2 |", want: []string{"<table>", `<th align="left">a</th>`, `<td align="right">2</td>`}, never: []string{"style="}},
		{in: "[ok](https://example.com/x?a=1&b=2)", want: []string{`<a href="https://example.com/x?a=1&amp;b=2" rel="nofollow noopener noreferrer">ok</a>`}},
		{in: "[rel](/ui/c/x) [frag](#m-3) [mail](mailto:a@example.com)", want: []string{`href="/ui/c/x"`, `href="#m-3"`, `href="mailto:a@example.com"`}},
		{in: "[bad](javascript:alert(1))", want: []string{"bad"}, never: []string{"<a", "javascript"}},
		{in: "[bad](JaVaScRiPt:alert(1)) [d](data:text/html,x) [v](vbscript:x) [f](file:///etc/passwd)", never: []string{"<a"}},
		{in: "<javascript:alert(1)> <https://example.com>", want: []string{"javascript:alert(1)", `<a href="https://example.com" rel="nofollow noopener noreferrer">`}, never: []string{`href="javascript`}},
		{in: "![alt](https://tracker.example/p.gif)", want: []string{`<a href="https://tracker.example/p.gif" rel="nofollow noopener noreferrer">alt</a>`}, never: []string{"<img"}},
		{in: "![alt](javascript:alert(1))", want: []string{"alt"}, never: []string{"<img", "<a", "javascript"}},
		{in: "<script>alert(1)</script> <img src=x onerror=alert(1)>", want: []string{"&lt;script&gt;", "&lt;img src=x onerror=alert(1)&gt;"}, never: []string{"<script", "<img"}},
		{in: "<div onclick=\"alert(1)\">\nblock\n</div>", want: []string{`<pre class="plain">&lt;div onclick=&#34;alert(1)&#34;&gt;`}, never: []string{"<div"}},
		{in: "<style>body{display:none}</style>", never: []string{"<style"}},
		{in: "www.example.com", want: []string{`<a href="http://www.example.com" rel="nofollow noopener noreferrer">`}},
	} {
		got := string(markdown(tc.in))
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("markdown(%q) = %q\nwant it to hold %q", tc.in, got, w)
			}
		}
		for _, n := range tc.never {
			if strings.Contains(strings.ToLower(got), strings.ToLower(n)) {
				t.Errorf("markdown(%q) = %q\nholds %q", tc.in, got, n)
			}
		}
	}
}

func TestSafeURL(t *testing.T) {
	for u, want := range map[string]bool{
		"https://x": true, "http://x": true, "mailto:a@b": true, "/ui/": true, "#a": true, "x/y": true, "?q=1": true,
		"javascript:x": false, " javascript:x": false, "JAVASCRIPT:x": false, "data:text/html,x": false,
		"vbscript:x": false, "file:///x": false, "javascript&colon;x": true, "java\nscript:x": false,
	} {
		if got := safeURL(u); got != want {
			t.Errorf("safeURL(%q) = %v, want %v", u, got, want)
		}
	}
}

var (
	rawTag     = regexp.MustCompile(`(?i)<(script|style|iframe|object|embed|svg|math|form|input[^>]*type="?(text|password|submit)|img|link|meta|base)\b`)
	handlerAt  = regexp.MustCompile(`(?i)<[a-z][^<>]*\son[a-z]+\s*=`)
	unsafeLink = regexp.MustCompile(`(?i)(href|src)\s*=\s*"\s*([a-z][a-z0-9+.-]*):`)
)

// FuzzMarkdown renders anything and checks the output for what must never
// be in it: elements that run or load something, event handler attributes,
// links with a scheme other than http, https and mailto.
func FuzzMarkdown(f *testing.F) {
	for _, s := range []string{
		"<script>alert(1)</script>", "[x](javascript:alert(1))", "![x](data:image/svg+xml,<svg onload=alert(1)>)",
		"<img src=x onerror=alert(1)>", "<a href=\"javascript:x\">x</a>", "<JAVASCRIPT:alert(1)>", "[x]: javascript:alert(1)\n\n[y][x]",
		"```\n<script>\n```", "| a |\n|---|\n| <svg onload=x> |", "<style>*{}</style>", "[x](  javascript:alert(1))",
		"[x](java\tscript:alert(1))", "<iframe srcdoc=x>", "www.example.com/<script>", "x@example.com",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := string(markdown(s))
		if m := rawTag.FindString(out); m != "" {
			t.Fatalf("markdown(%q) holds %q:\n%s", s, m, out)
		}
		if m := handlerAt.FindString(out); m != "" {
			t.Fatalf("markdown(%q) holds an event handler %q:\n%s", s, m, out)
		}
		for _, m := range unsafeLink.FindAllStringSubmatch(out, -1) {
			switch strings.ToLower(m[2]) {
			case "http", "https", "mailto":
			default:
				t.Fatalf("markdown(%q) links to scheme %q:\n%s", s, m[2], out)
			}
		}
	})
}
