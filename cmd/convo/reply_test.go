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
