package server

import (
	"encoding/json"
	"errors"
	"testing"
)

// parserServer is a Server with the limits the parsers read, for tests of
// the parsers alone.
func parserServer() *Server {
	return &Server{opts: Options{MaxBodyBytes: DefaultMaxBodyBytes, MaxMessageBytes: 1 << 10}}
}

// FuzzRequestBodies feeds every request-body parser the same bytes: each
// either succeeds or returns an *apiError (a 4xx problem), never panics and
// never fails in a way that would become a 500.
func FuzzRequestBodies(f *testing.F) {
	for _, seed := range []string{
		`{}`,
		`{"title":"t","meta":{"a":1},"messages":[{"role":"user","parts":[{"type":"text","text":"hi"}]}]}`,
		`{"version":3,"messages":[{"role":"assistant","parts":[{"type":"tool_call","id":"c","name":"f","args":{}}]}]}`,
		`{"at":2,"title":"x"}`,
		`{"before":"msg_1","meta":null}`,
		`{"title":"t","meta":null}`,
		`{"metadata":{"k":"v"}}`,
		`{"version":-1,"messages":[]}`,
		`{"messages":[{"role":"user","parts":[{"type":"image","media_type":"image/png","data":"!!"}]}]}`,
		`{"a":1,"a":2}`,
		`[1,2]`,
		`{"messages":[{"role":"user"}],}`,
		"{\"title\":\"\xff\"}",
	} {
		f.Add([]byte(seed))
	}
	s := parserServer()
	f.Fuzz(func(t *testing.T, body []byte) {
		check := func(what string, err error) {
			var ae *apiError
			if err != nil && !errors.As(err, &ae) {
				t.Fatalf("%s: %T %v is not a problem", what, err, err)
			}
			if ae != nil && (ae.status < 400 || ae.status >= 500) {
				t.Fatalf("%s: status %d", what, ae.status)
			}
		}
		_, msgs, err := s.parseCreate(body)
		check("create", err)
		for _, m := range msgs {
			if _, err := m.MarshalJSON(); err != nil {
				t.Fatalf("create accepted a message it cannot write: %v", err)
			}
		}
		_, _, err = s.parseAppend(body)
		check("append", err)
		_, _, err = parseUpdate(body)
		check("update", err)
		_, _, _, err = parseFork(body)
		check("fork", err)
	})
}

// FuzzNormalizeItem checks that whatever object an item codec produces, the
// item the API lists is one JSON object with a string id and type.
func FuzzNormalizeItem(f *testing.F) {
	for _, seed := range []string{
		`{"type":"message","role":"user","content":"hi"}`,
		`{"role":"assistant","content":"hi","phase":"final_answer"}`,
		`{"type":"function_call","id":"fc_1","call_id":"c","name":"f","arguments":"{}"}`,
		`{"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":"x","status":"in_progress"}`,
		`{"type":"message","role":"user","content":"a\"b\u2028"}`,
		`{"id":7}`,
		`{}`,
	} {
		f.Add([]byte(seed), "msg_1:0")
	}
	f.Fuzz(func(t *testing.T, raw []byte, fallback string) {
		it, err := normalizeItem(raw, fallback)
		if err != nil {
			return
		}
		var v map[string]any
		if err := json.Unmarshal(it.raw, &v); err != nil {
			t.Fatalf("normalized item is not a JSON object: %v\n%s", err, it.raw)
		}
		if id, ok := v["id"].(string); !ok || id != it.id {
			t.Fatalf("id %v, want %q", v["id"], it.id)
		}
		if _, ok := v["type"].(string); !ok {
			t.Fatalf("no type in %s", it.raw)
		}
		if c, ok := v["content"]; ok && v["type"] == "message" {
			if _, ok := c.(string); ok {
				t.Fatalf("string content left in %s", it.raw)
			}
		}
	})
}
