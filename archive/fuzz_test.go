package archive

import (
	"bytes"
	"database/sql"
	"io"
	"os"
	"testing"
)

// fuzzReader feeds arbitrary bytes to the reader of f: it must never panic,
// and whatever it returns must be valid histories (a store takes nothing
// else) that the canonical format can write.
func fuzzReader(f *testing.F, format Format, seeds ...string) {
	for _, s := range seeds {
		b, err := os.ReadFile(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`[]`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := NewReader(bytes.NewReader(data), format, Options{MaxBytes: 1 << 20})
		if err != nil {
			t.Fatal(err)
		}
		for range 1000 {
			c, err := r.Next()
			if err == io.EOF || err != nil {
				return
			}
			checkValid(t, c)
			for _, fk := range c.Forks {
				if fk.At < 0 || fk.At > len(c.History) {
					t.Fatalf("fork at %d of %d", fk.At, len(c.History))
				}
			}
			for _, w := range Writable() {
				if _, err := Write(io.Discard, w, []*Conversation{c}, WriteOptions{Reasoning: true}); err != nil {
					t.Fatalf("writing %s: %v", w, err)
				}
			}
		}
	})
}

func FuzzChatGPT(f *testing.F) {
	fuzzReader(f, ChatGPT, "testdata/chatgpt/conversations.json", "testdata/chatgpt-shards/conversations-001.json")
}

func FuzzClaude(f *testing.F) { fuzzReader(f, Claude, "testdata/claude/conversations.json") }

func FuzzClaudeCode(f *testing.F) { fuzzReader(f, ClaudeCode, "testdata/claude-code/session.jsonl") }

func FuzzShareGPT(f *testing.F) { fuzzReader(f, ShareGPT, "testdata/sharegpt/sample.json") }

func FuzzFineTune(f *testing.F) { fuzzReader(f, FineTune, "testdata/finetune/sample.jsonl") }

// FuzzLLM puts arbitrary values in the columns of a logs.db that the llm
// reader interprets.
func FuzzLLM(f *testing.F) {
	f.Add("hi", "sys", "hello", "2024-09-20T18:00:01.123456", "call_1", "t", `{"a":1}`, "out", "", "image/png", []byte{1, 2})
	f.Add("", "", "", "", "", "", "{", "", "boom", "", []byte(nil))
	path := makeLLM(f)
	db, err := sql.Open("sqlite", path)
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { db.Close() })
	f.Fuzz(func(t *testing.T, prompt, system, response, when, callID, name, args, output, exception, mt string, blob []byte) {
		stmts := []struct {
			q    string
			args []any
		}{
			{`DELETE FROM tool_calls`, nil}, {`DELETE FROM tool_results`, nil}, {`DELETE FROM prompt_attachments`, nil},
			{`DELETE FROM attachments`, nil}, {`DELETE FROM responses`, nil},
			{`INSERT INTO responses (id, model, prompt, system, response, conversation_id, datetime_utc, input_tokens) VALUES ('r1', 'm', ?, ?, ?, 'c', ?, 3)`, []any{prompt, system, response, when}},
			{`INSERT INTO responses (id, model, prompt, system, response, conversation_id, datetime_utc) VALUES ('r2', 'm', '', ?, ?, 'c', ?)`, []any{system, output, when}},
			{`INSERT INTO tool_calls (response_id, name, arguments, tool_call_id) VALUES ('r1', ?, ?, ?)`, []any{name, args, callID}},
			{`INSERT INTO tool_results (response_id, name, output, tool_call_id, exception) VALUES ('r2', ?, ?, ?, ?)`, []any{name, output, callID, exception}},
			{`INSERT INTO attachments (id, type, content) VALUES ('a', ?, ?)`, []any{mt, blob}},
			{`INSERT INTO prompt_attachments VALUES ('r1', 'a', 0)`, nil},
		}
		for _, s := range stmts {
			if _, err := db.Exec(s.q, s.args...); err != nil {
				t.Fatal(err)
			}
		}
		r, err := OpenLLM(path)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		cs, err := ReadAll(r)
		if err != nil {
			return // strings that are not UTF-8 and the like are refused, not crashed on
		}
		for _, c := range cs {
			checkValid(t, c)
		}
	})
}
