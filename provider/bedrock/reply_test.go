package bedrock

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/internal/stream"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/internal/codectest"
)

// eventFrame encodes one event-stream message as ConverseStream sends it,
// with the "p" padding AWS adds to hide payload sizes.
func eventFrame(typ string, payload []byte, exception bool) []byte {
	hdr := func(b []byte, name, val string) []byte {
		b = append(b, byte(len(name)))
		b = append(b, name...)
		b = append(b, 7)
		b = binary.BigEndian.AppendUint16(b, uint16(len(val)))
		return append(b, val...)
	}
	var headers []byte
	if exception {
		headers = hdr(headers, ":exception-type", typ)
		headers = hdr(headers, ":content-type", "application/json")
		headers = hdr(headers, ":message-type", "exception")
	} else {
		headers = hdr(headers, ":event-type", typ)
		headers = hdr(headers, ":content-type", "application/json")
		headers = hdr(headers, ":message-type", "event")
		if bytes.HasSuffix(payload, []byte("}")) {
			pad := `,"p":"` + "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"[:1+len(payload)%50] + `"}`
			payload = append(payload[:len(payload)-1:len(payload)-1], pad...)
		}
	}
	total := 16 + len(headers) + len(payload)
	b := binary.BigEndian.AppendUint32(nil, uint32(total))
	b = binary.BigEndian.AppendUint32(b, uint32(len(headers)))
	b = binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE(b))
	b = append(b, headers...)
	b = append(b, payload...)
	return binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE(b))
}

// linesToEvents reads JSON event lines ({"<event>":{…}}) into events.
func linesToEvents(t testing.TB, lines []byte) []provider.Event {
	t.Helper()
	var evs []provider.Event
	sc := bufio.NewScanner(bytes.NewReader(lines))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil || len(m) != 1 {
			t.Fatalf("bad event line %s: %v", sc.Bytes(), err)
		}
		for k, v := range m {
			evs = append(evs, provider.Event{Type: k, Data: []byte(v)})
		}
	}
	return evs
}

// binaryStream frames events in the AWS event-stream framing.
func binaryStream(evs []provider.Event) []byte {
	var b []byte
	for _, e := range evs {
		b = append(b, eventFrame(e.Type, e.Data, strings.HasSuffix(e.Type, "Exception"))...)
	}
	return b
}

// TestReplies checks each composed reply: the non-streamed body decodes to
// its golden message, and the same reply streamed — as JSON event lines, in
// the binary framing, in one-byte reads — accumulates to an equal message.
func TestReplies(t *testing.T) {
	files, _ := filepath.Glob("testdata/replies/*.jsonl")
	if len(files) < 5 {
		t.Fatalf("only %d streams", len(files))
	}
	opts := provider.Options{Model: "anthropic.claude-sonnet-4-5-v1:0"}
	for _, f := range files {
		name := strings.TrimSuffix(f, ".jsonl")
		if codectest.Update() {
			// The binary form of every stream, for the tests here and for
			// the SDK's reader in sdktest.
			bin := binaryStream(linesToEvents(t, codectest.ReadFile(t, f)))
			if err := os.WriteFile(name+".bin", bin, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		body, err := os.ReadFile(name + ".json")
		if errors.Is(err, os.ErrNotExist) {
			continue // a stream with no non-streamed form: TestStreamFailures
		}
		t.Run(filepath.Base(name), func(t *testing.T) {
			want, warns, err := converse{}.DecodeReply(body, opts)
			if err != nil {
				t.Fatal(err)
			}
			if len(warns) > 0 {
				t.Errorf("warnings %v", warns)
			}
			canon, err := convo.AppendMessage(nil, want)
			if err != nil {
				t.Fatal(err)
			}
			codectest.Golden(t, name+".golden", codectest.Indent(t, canon, "  "))

			lines := codectest.ReadFile(t, f)
			bin := binaryStream(linesToEvents(t, lines))
			for _, src := range []struct {
				name string
				r    io.Reader
			}{
				{"lines", bytes.NewReader(lines)},
				{"lines CRLF", bytes.NewReader(bytes.ReplaceAll(lines, []byte("\n"), []byte("\r\n")))},
				{"binary", bytes.NewReader(bin)},
				{"binary file", bytes.NewReader(codectest.ReadFile(t, name+".bin"))},
				{"binary one byte at a time", iotest.OneByteReader(bytes.NewReader(bin))},
			} {
				got, warns, err := converse{}.ReadStream(src.r, opts)
				if err != nil {
					t.Fatalf("%s: %v", src.name, err)
				}
				if len(warns) > 0 {
					t.Errorf("%s: warnings %v", src.name, warns)
				}
				if !got.Equal(want) {
					g, _ := convo.AppendMessage(nil, got)
					t.Errorf("%s: accumulated\n%s\nwant\n%s", src.name, g, canon)
				}
			}
		})
	}
}

// TestSnapshots feeds events one by one: every snapshot is a valid message
// whose text only grows, and the last equals the final message.
func TestSnapshots(t *testing.T) {
	evs := linesToEvents(t, codectest.ReadFile(t, "testdata/replies/tool_use.jsonl"))
	acc := converse{}.NewAccumulator(provider.Options{})
	prev := ""
	sawPartialArgs := false
	for i, e := range evs {
		if err := acc.Add(e); err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
		s := acc.Snapshot()
		if s.Role != convo.RoleAssistant {
			t.Fatalf("snapshot role %q", s.Role)
		}
		text := s.Text()
		if !strings.HasPrefix(text, prev) {
			t.Fatalf("text went from %q to %q", prev, text)
		}
		prev = text
		for _, p := range s.Parts {
			if p.Type == convo.TypeToolCall && p.ArgsRaw == `{"city":` {
				sawPartialArgs = true
			}
		}
		if _, err := s.MarshalJSON(); err != nil {
			t.Fatalf("snapshot %d does not encode: %v", i, err)
		}
	}
	if !sawPartialArgs {
		t.Error("no snapshot showed the partial tool input")
	}
	final, _, err := acc.Message()
	if err != nil {
		t.Fatal(err)
	}
	if !acc.Snapshot().Equal(final) {
		t.Error("last snapshot differs from the final message")
	}
}

func TestStreamFailures(t *testing.T) {
	lines := func(s ...string) []byte { return []byte(strings.Join(s, "\n")) }
	start := `{"messageStart":{"role":"assistant"}}`
	hello := `{"contentBlockDelta":{"contentBlockIndex":0,"delta":{"text":"Paris is"}}}`
	good := codectest.ReadFile(t, "testdata/replies/tool_use.bin")
	tests := []struct {
		name     string
		in       []byte
		err      string
		is       error
		partial  string // text of the partial message
		asStream bool   // *provider.APIError expected
	}{
		{"throttled", lines(start, hello, `{"throttlingException":{"message":"Too many requests, please wait before trying again."}}`),
			"bedrock: Too many requests, please wait before trying again. (throttlingException)", nil, "Paris is", true},
		{"model stream error in binary", codectest.ReadFile(t, "testdata/replies/stream_error.bin"),
			"bedrock: Model stream error: the model produced an invalid sequence (modelStreamErrorException)", nil, "Paris is", true},
		{"no messageStop", lines(start, hello), "before messageStop", provider.ErrIncomplete, "Paris is", false},
		{"binary cut mid-message", good[:len(good)-40], "stream cut inside a message", io.ErrUnexpectedEOF,
			"Let me check the weather — one moment.", false},
		{"binary CRC mismatch", flipByte(good, 700), "checksum mismatch", stream.ErrCRC, "", false},
		// An error message of the framing is the service reporting an
		// error, so it is an APIError like an exception, and the partial
		// reply stays.
		{"binary error message", append(good[:0:0], eventFrameError("InternalServerException", "boom")...), "bedrock: boom (InternalServerException)", nil, "", true},
		{"binary error message mid-reply", append(binaryStream(linesToEvents(t, lines(start, hello))), eventFrameError("InternalServerException", "boom")...),
			"bedrock: boom (InternalServerException)", nil, "Paris is", true},
		{"bad JSON line", lines(start, hello, `{"contentBlockDelta":`), "line 3", nil, "Paris is", false},
		{"two members on a line", lines(start, `{"messageStop":{},"metadata":{}}`), "more than one member", nil, "", false},
		{"delta for an unstarted tool use", lines(start, `{"contentBlockDelta":{"contentBlockIndex":4,"delta":{"toolUse":{"input":"{}"}}}}`),
			"toolUse delta for block 4, which has no contentBlockStart", nil, "", false},
		{"text delta for a reasoning block", lines(start,
			`{"contentBlockDelta":{"contentBlockIndex":0,"delta":{"reasoningContent":{"text":"hm"}}}}`,
			`{"contentBlockDelta":{"contentBlockIndex":0,"delta":{"text":"x"}}}`), "text delta for block 0, a reasoning block", nil, "", false},
		{"block started twice", lines(start,
			`{"contentBlockStart":{"contentBlockIndex":0,"start":{"toolUse":{"toolUseId":"a","name":"f"}}}}`,
			`{"contentBlockStart":{"contentBlockIndex":0,"start":{"toolUse":{"toolUseId":"a","name":"f"}}}}`), "block 0 started twice", nil, "", false},
		{"index out of range", lines(start, `{"contentBlockDelta":{"contentBlockIndex":99999999,"delta":{"text":"x"}}}`), "out of range", nil, "", false},
		{"not the assistant", lines(`{"messageStart":{"role":"user"}}`), `role "user", want assistant`, nil, "", false},
		{"bad redacted content", lines(start, `{"contentBlockDelta":{"contentBlockIndex":0,"delta":{"reasoningContent":{"redactedContent":"!!"}}}}`),
			"redactedContent: malformed base64", nil, "", false},
		{"empty", nil, "after 0 events, before messageStop", provider.ErrIncomplete, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, _, err := converse{}.ReadStream(bytes.NewReader(tt.in), provider.Options{})
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Fatalf("got %v, want %q", err, tt.err)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error is not one line: %q", err)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("%v is not %v", err, tt.is)
			}
			var se *provider.APIError
			if errors.As(err, &se) != tt.asStream {
				t.Errorf("APIError: %v, want %v", errors.As(err, &se), tt.asStream)
			}
			if got := m.Text(); got != tt.partial {
				t.Errorf("partial text %q, want %q", got, tt.partial)
			}
		})
	}
}

func eventFrameError(code, msg string) []byte {
	hdr := func(b []byte, name, val string) []byte {
		b = append(b, byte(len(name)))
		b = append(b, name...)
		b = append(b, 7)
		b = binary.BigEndian.AppendUint16(b, uint16(len(val)))
		return append(b, val...)
	}
	headers := hdr(hdr(hdr(nil, ":message-type", "error"), ":error-code", code), ":error-message", msg)
	b := binary.BigEndian.AppendUint32(nil, uint32(16+len(headers)))
	b = binary.BigEndian.AppendUint32(b, uint32(len(headers)))
	b = binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE(b))
	b = append(b, headers...)
	return binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE(b))
}

func flipByte(b []byte, i int) []byte {
	b = append([]byte(nil), b...)
	b[i] ^= 1
	return b
}

func TestStreamWarnings(t *testing.T) {
	in := strings.Join([]string{
		`{"messageStart":{"role":"assistant"}}`,
		`{"contentBlockStart":{"contentBlockIndex":0,"start":{"toolUse":{"toolUseId":"t1","name":"f"}}}}`,
		`{"contentBlockDelta":{"contentBlockIndex":0,"delta":{"toolUse":{"input":"{\"a\":"}}}}`,
		`{"futureEvent":{"x":1}}`,
		`{"futureEvent":{"x":2}}`,
		`{"contentBlockDelta":{"contentBlockIndex":1,"delta":{"hologram":{"x":1}}}}`,
		`{"messageStop":{"stopReason":"malformed_tool_use"}}`,
	}, "\n")
	m, warns, err := converse{}.ReadStream(strings.NewReader(in), provider.Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(warnStrings(warns), "|")
	want := `event "futureEvent" skipped: unknown to this version of convo|"hologram" deltas skipped: unknown to this version of convo|` +
		`content[0]: tool-use input of "f" is not valid JSON (unexpected end of input, want JSON value (line 1, column 6)): kept in args_raw|` +
		`the stream has no metadata event: usage unknown`
	if got != want {
		t.Errorf("warnings\n%s\nwant\n%s", got, want)
	}
	if len(m.Parts) != 1 || m.Parts[0].ArgsRaw != `{"a":` || m.Parts[0].Args != nil || m.Finish != convo.FinishOther {
		t.Errorf("message %+v", m)
	}
	var se *provider.StrictError
	if _, _, err := (converse{}).ReadStream(strings.NewReader(in), provider.Options{Strict: true}); !errors.As(err, &se) {
		t.Errorf("strict: got %v, want a *provider.StrictError", err)
	}
}

func TestDecodeReplyErrors(t *testing.T) {
	tests := []struct{ name, body, want string }{
		{"not JSON", `{"output":`, "output: unexpected end of input, want object"},
		{"no output", `{"stopReason":"end_turn"}`, `no "output"`},
		{"unknown output", `{"output":{"audio":{}}}`, `output: unknown output member "audio"`},
		{"empty output", `{"output":{}}`, `output: no "message"`},
		{"user role", `{"output":{"message":{"role":"user","content":[]}}}`, `output.message.role: role "user", want assistant`},
		{"no content", `{"output":{"message":{"role":"assistant"}}}`, `output.message: message has no "content"`},
		{"bad block", `{"output":{"message":{"role":"assistant","content":[{"text":1}]}}}`, "output.message.content[0].text: got number, want string"},
		{"bad usage", `{"output":{"message":{"role":"assistant","content":[]}},"usage":{"inputTokens":"x"}}`, "usage.inputTokens: got string, want number"},
		{"fractional usage", `{"output":{"message":{"role":"assistant","content":[]}},"usage":{"inputTokens":1.5}}`, "usage.inputTokens: want an integer"},
		{"stop reason not a string", `{"output":{"message":{"role":"assistant","content":[]}},"stopReason":1}`, "stopReason: got number, want string"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := converse{}.DecodeReply([]byte(tt.body), provider.Options{})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want %q", err, tt.want)
			}
		})
	}
}

func TestFinishReasons(t *testing.T) {
	for stop, want := range map[string]convo.Finish{
		"end_turn": convo.FinishStop, "stop_sequence": convo.FinishStop, "max_tokens": convo.FinishLength,
		"model_context_window_exceeded": convo.FinishLength, "tool_use": convo.FinishToolUse,
		"guardrail_intervened": convo.FinishContentFilter, "content_filtered": convo.FinishContentFilter,
		"malformed_model_output": convo.FinishOther, "malformed_tool_use": convo.FinishOther, "something_new": convo.FinishOther,
	} {
		body := `{"output":{"message":{"role":"assistant","content":[{"text":"x"}]}},"stopReason":"` + stop + `"}`
		m, _, err := converse{}.DecodeReply([]byte(body), provider.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if m.Finish != want || string(m.Native[ProviderID]) != `{"stopReason":"`+stop+`"}` {
			t.Errorf("%s: finish %q, native %s", stop, m.Finish, m.Native[ProviderID])
		}
	}
}

// FuzzAccumulator feeds arbitrary event lines: no panic, snapshots at any
// point, a message (possibly with an error) at the end.
func FuzzAccumulator(f *testing.F) {
	files, _ := filepath.Glob("testdata/replies/*.jsonl")
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		acc := converse{}.NewAccumulator(provider.Options{Model: "m"})
		for i, line := range bytes.Split(b, []byte("\n")) {
			typ, data, _ := bytes.Cut(line, []byte(":"))
			// Lines are {"<event>":<payload>} when well formed; anything
			// else still goes in, cut at the first colon.
			typ = bytes.Trim(typ, `{" `)
			if len(data) > 0 && data[len(data)-1] == '}' {
				data = data[:len(data)-1]
			}
			_ = acc.Add(provider.Event{Type: string(typ), Data: data})
			if i%3 == 0 {
				if _, err := acc.Snapshot().MarshalJSON(); err != nil && !strings.Contains(err.Error(), "UTF-8") && !strings.Contains(err.Error(), "invalid JSON") {
					t.Fatalf("snapshot: %v", err)
				}
			}
		}
		m, _, err := acc.Message()
		if err == nil && m.Role != convo.RoleAssistant {
			t.Fatal("no role")
		}
		// The binary reader with the same bytes must not panic either.
		_, _, _ = converse{}.ReadStream(bytes.NewReader(b), provider.Options{})
	})
}

// TestReplyIntoNextRequest: a streamed reply, captured, saved in the
// canonical format, reloaded and sent back as the next request's history,
// keeps its reasoning signature, tool-use id and place.
func TestReplyIntoNextRequest(t *testing.T) {
	reply, _, err := converse{}.ReadStream(bytes.NewReader(codectest.ReadFile(t, "testdata/replies/tool_use.bin")), provider.Options{Model: "anthropic.claude-x"})
	if err != nil {
		t.Fatal(err)
	}
	h := convo.History{convo.User("Weather in Paris?"), reply,
		convo.ToolResults(convo.ToolResultParts("tooluse_kZJMlvQmRJ6eAyJE5GIl7Q", "get_weather", convo.JSON(json.RawMessage(`{"temp_c":18}`))))}
	saved, err := convo.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	loaded, err := convo.Unmarshal(saved)
	if err != nil {
		t.Fatal(err)
	}
	body, _, err := converse{}.Encode(loaded, provider.Options{Strict: true})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"messages":[
	 {"role":"user","content":[{"text":"Weather in Paris?"}]},
	 {"role":"assistant","content":[
	  {"reasoningContent":{"reasoningText":{"text":"The user wants the weather in Paris; call the tool.","signature":"EqQBCkgIARABGAIiQL3Xw2oQ9r"}}},
	  {"text":"Let me check the weather — one moment."},
	  {"toolUse":{"toolUseId":"tooluse_kZJMlvQmRJ6eAyJE5GIl7Q","name":"get_weather","input":{"city":"Paris","units":["c"]}}}]},
	 {"role":"user","content":[{"toolResult":{"toolUseId":"tooluse_kZJMlvQmRJ6eAyJE5GIl7Q","content":[{"json":{"temp_c":18}}]}}]}]}`
	if !codectest.SameJSON(t, body, []byte(want)) {
		t.Errorf("next request\n%s\nwant\n%s", body, want)
	}
}

// FuzzDecodeReply: no body makes DecodeReply panic; what it accepts is an
// assistant message the canonical format can write, with one-line errors
// otherwise.
func FuzzDecodeReply(f *testing.F) {
	files, _ := filepath.Glob("testdata/replies/*.json")
	for _, file := range files {
		f.Add(codectest.ReadFile(f, file))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		m, _, err := converse{}.DecodeReply(body, provider.Options{Model: "m"})
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("multi-line error %q", err)
			}
			return
		}
		if m.Role != convo.RoleAssistant || m.Origin == nil {
			t.Fatalf("message %+v", m)
		}
		if _, err := m.MarshalJSON(); err != nil {
			t.Fatalf("decoded reply does not encode: %v", err)
		}
	})
}

// TestSplitSignature: a reasoning signature that comes in several deltas
// is joined in order, so the streamed reply equals the body: the reply of
// tool_use.jsonl with its signature cut in three, as JSON lines and in the
// binary framing.
func TestSplitSignature(t *testing.T) {
	const sig = "EqQBCkgIARABGAIiQL3Xw2oQ9r"
	delta := func(piece string) string {
		return `{"contentBlockDelta":{"contentBlockIndex":0,"delta":{"reasoningContent":{"signature":"` + piece + `"}}}}`
	}
	lines := string(codectest.ReadFile(t, "testdata/replies/tool_use.jsonl"))
	split := strings.Replace(lines, delta(sig), delta(sig[:8])+"\n"+delta(sig[8:20])+"\n"+delta(sig[20:]), 1)
	if split == lines {
		t.Fatal("tool_use.jsonl has no signature delta to split")
	}
	want, _, err := converse{}.DecodeReply(codectest.ReadFile(t, "testdata/replies/tool_use.json"), provider.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if want.Parts[0].Signature != sig {
		t.Fatalf("body's signature %q", want.Parts[0].Signature)
	}
	for name, in := range map[string][]byte{
		"lines":  []byte(split),
		"binary": binaryStream(linesToEvents(t, []byte(split))),
	} {
		got, warns, err := converse{}.ReadStream(iotest.OneByteReader(bytes.NewReader(in)), provider.Options{})
		if err != nil || len(warns) > 0 {
			t.Fatalf("%s: %v, warnings %v", name, err, warns)
		}
		if got.Parts[0].Signature != sig || !got.Equal(want) {
			g, _ := convo.AppendMessage(nil, got)
			t.Errorf("%s: folded\n%s\nwant signature %q and the body's message", name, g, sig)
		}
	}
}
