package main

import (
	"os"
	"strings"
	"testing"

	"github.com/convo-go/convo"
)

// TestReply reads a recorded response and the same reply streamed: both give
// the assistant message recorded beside them.
func TestReply(t *testing.T) {
	dir := "../../provider/anthropic/testdata/reply/"
	want, err := os.ReadFile(dir + "interleaved.convo.json")
	if err != nil {
		t.Fatal(err)
	}
	wantMsg, err := convo.UnmarshalMessage(want)
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"reply", "--from", "anthropic", dir + "interleaved.json"},
		{"reply", "--from", "anthropic", "--stream", dir + "interleaved.sse"},
	} {
		out, errs, code := runCLI(t, "", args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errs)
		}
		got, err := convo.UnmarshalMessage([]byte(out))
		if err != nil {
			t.Fatalf("%v: output is not a canonical message: %v\n%s", args, err, out)
		}
		if !got.Equal(wantMsg) || got.Usage == nil || got.Finish == "" || got.Origin == nil {
			t.Fatalf("%v:\n got %s\nwant %s", args, out, want)
		}
	}
}

func TestReplyErrors(t *testing.T) {
	tests := []struct {
		args  []string
		stdin string
		code  int
		want  string
	}{
		{[]string{"reply"}, "", 2, "--from is required"},
		{[]string{"reply", "--from", "convo"}, "", 2, `unknown format "convo" for replies`},
		{[]string{"reply", "--from", "anthropic"}, `{"type":"message","content":7}`, 1, "content"},
		{[]string{"reply", "--from", "anthropic", "--stream"}, "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"model\":\"x\"}}\n\n", 1, ""},
	}
	for _, tt := range tests {
		_, errs, code := runCLI(t, tt.stdin, tt.args...)
		if code != tt.code || !strings.Contains(errs, tt.want) || strings.Count(strings.TrimSpace(errs), "\n") > 1 {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", tt.args, code, errs, tt.code, tt.want)
		}
	}
}

// TestReplyRecognisesStream: a captured stream needs no --stream.
func TestReplyRecognisesStream(t *testing.T) {
	dir := "../../provider/anthropic/testdata/reply/"
	body, _, _ := runCLI(t, "", "reply", "--from", "anthropic", dir+"interleaved.json")
	stream, errs, code := runCLI(t, "", "reply", "--from", "anthropic", dir+"interleaved.sse")
	if code != 0 || stream != body {
		t.Fatalf("exit %d %s\nstream %s\nbody   %s", code, errs, stream, body)
	}
	for in, want := range map[string]bool{
		`{"id":"x"}`: false, " \n[1,2]\n": false, `{"id":`: false, "": false,
		"event: message_start\ndata: {}\n\n": true, ": comment\n\n": true, "data: {}\n\n": true,
		"{\"a\":1}\n{\"b\":2}\n": true, "\x00\x00\x00\x10binary": true,
	} {
		if got := isStream([]byte(in)); got != want {
			t.Errorf("isStream(%q) = %v", in, got)
		}
	}
}

// TestReplyPartial: a stream cut off fails; with --partial what arrived is
// printed, marked incomplete, and the exit code is still 1.
func TestReplyPartial(t *testing.T) {
	sse, err := os.ReadFile("../../provider/anthropic/testdata/reply/interleaved.sse")
	if err != nil {
		t.Fatal(err)
	}
	cut := string(sse[:len(sse)*2/3])
	out, errs, code := runCLI(t, cut, "reply", "--from", "anthropic")
	if code != 1 || out != "" || !strings.Contains(errs, "incomplete") {
		t.Fatalf("without --partial: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	out, errs, code = runCLI(t, cut, "reply", "--from", "anthropic", "--partial")
	if code != 1 || !strings.Contains(errs, "printed what arrived") {
		t.Fatalf("--partial: exit %d, stderr %q", code, errs)
	}
	m, err := convo.UnmarshalMessage([]byte(out))
	if err != nil {
		t.Fatalf("--partial printed no message: %v\n%s", err, out)
	}
	if string(m.Meta) != `{"incomplete":true}` || len(m.Parts) == 0 {
		t.Errorf("meta %s, %d parts", m.Meta, len(m.Parts))
	}
}

// TestReplyWrongFormat: a reply read as the wrong format says which format
// it looks like; every recorded reply is recognised as its own.
func TestReplyWrongFormat(t *testing.T) {
	for _, tc := range []struct{ file, format string }{
		{"../../provider/anthropic/testdata/reply/interleaved.sse", "anthropic"},
		{"../../provider/anthropic/testdata/reply/interleaved.json", "anthropic"},
		{"../../provider/openai/testdata/recorded/chat/pydantic-moderation.sse", "openai-chat"},
		{"../../provider/openai/testdata/recorded/responses/pydantic-annotations.sse", "openai-responses"},
		{"../../provider/openai/testdata/recorded/responses/pydantic-reasoning-summary.json", "openai-responses"},
		{"../../provider/gemini/testdata/recorded/pydantic-code-execution.sse", "gemini"},
		{"../../provider/gemini/testdata/recorded/pydantic-max-tokens.json", "gemini"},
		{"../../provider/ollama/testdata/recorded/langchaingo-chat-stream.ndjson", "ollama"},
		{"../../provider/bedrock/testdata/recorded/pydantic-thinking.eventstream", "bedrock"},
		{"../../provider/bedrock/testdata/recorded/pydantic-guardrail.json", "bedrock"},
	} {
		b, err := os.ReadFile(tc.file)
		if err != nil {
			t.Fatal(err)
		}
		if got := sniff(b); got != tc.format {
			t.Errorf("%s looks like %q, want %s", tc.file, got, tc.format)
		}
	}
	_, errs, code := runCLI(t, "", "reply", "--from", "openai-chat", "../../provider/anthropic/testdata/reply/interleaved.sse")
	if code != 1 || !strings.Contains(errs, `this looks like an anthropic stream, not openai-chat (events named "message_start"): try --from anthropic`) {
		t.Fatalf("exit %d: %s", code, errs)
	}
}

// TestReplyRefusesOtherInput: input of another format, a canonical
// document, a truncated document or binary bytes is refused with one line
// saying what it is; nothing is printed.
func TestReplyRefusesOtherInput(t *testing.T) {
	chat, err := os.ReadFile("../../provider/openai/testdata/recorded/chat/vercel-openai-text.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		from, file, stdin, want string
	}{
		{"anthropic", "../../provider/openai/testdata/recorded/chat/vercel-openai-text.json", "", `this looks like an openai-chat reply, not anthropic ("object":"chat.completion"): try --from openai-chat`},
		{"anthropic", "../../provider/gemini/testdata/recorded/pydantic-max-tokens.json", "", `this looks like a gemini reply, not anthropic (top-level "candidates"): try --from gemini`},
		{"anthropic", "../../testdata/v1/example.json", "", `this is a convo document ("format":"convo/v1"), not an anthropic reply`},
		{"litert", "../../provider/anthropic/testdata/reply/interleaved.json", "", `this looks like an anthropic reply, not litert ("type":"message"): try --from anthropic`},
		{"ollama", "../../provider/openai/testdata/recorded/responses/pydantic-streaming-usage.sse", "", `this looks like an openai-responses stream, not ollama`},
		{"openai-responses", "../../provider/bedrock/testdata/recorded/pydantic-thinking.eventstream", "", `this looks like a bedrock stream, not openai-responses (the AWS event-stream framing): try --from bedrock`},
		{"openai-chat", "", string(chat[:300]), "the input is a truncated JSON document: it ends at byte 300 inside a value"},
		{"openai-chat", "", "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "the input is binary, not JSON or Server-Sent Events"},
		{"anthropic", "", `{"error":{"message":"x"},"object":"chat.completion"}`, "try --from openai-chat"},
	} {
		args := []string{"reply", "--from", tt.from}
		if tt.file != "" {
			args = append(args, tt.file)
		}
		out, errs, code := runCLI(t, tt.stdin, args...)
		if code != 1 || out != "" || !strings.Contains(errs, tt.want) || strings.Count(strings.TrimSpace(errs), "\n") > 0 {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 1 and %q", args, code, out, errs, tt.want)
		}
	}
}
