package gateway

import (
	"bytes"
	"encoding/json"
	"net/http/httptest"
	"os"
	"runtime"
	"testing"
)

// TestTapChunksReused checks what lets decode give a streamed reply's
// chunks back to their pools: the message decoded from them shares none
// of their memory. Each recorded stream, long enough to fill several
// chunks (its events repeated as pings or keep-alives would not do: the
// stream itself, cut into the chunks copyReply makes), is decoded from
// chunks the test keeps; the chunks are then written over, and the
// message must be what it was.
func TestTapChunksReused(t *testing.T) {
	for name, path := range map[string]string{
		"openai-chat":      "../provider/openai/testdata/replies/chat/tools.sse",
		"openai-responses": "../provider/openai/testdata/replies/responses/tools.sse",
		"anthropic":        "../provider/anthropic/testdata/reply/tool_use.sse",
		"gemini":           "../provider/gemini/testdata/replies/signed.sse",
		"ollama":           "../provider/ollama/testdata/replies/tools.ndjson",
		"bedrock":          "../provider/bedrock/testdata/replies/tool_use.bin",
	} {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, size := range []int{7, 64, replyBuf} {
			// The stream in chunks as the tap keeps them: pooled
			// arrays, filled to size bytes each.
			var body, arrays [][]byte
			for rest := data; len(rest) > 0; {
				c := getTapChunk()
				n := min(size, len(rest))
				c = append(c, rest[:n]...)
				rest = rest[n:]
				body, arrays = append(body, c), append(arrays, c)
			}
			rec := &record{upstream: protocols[name], body: body, streamed: true}
			rec.decode()
			if rec.reply == nil {
				t.Fatalf("%s: not decoded: %s", name, rec.unread)
			}
			before, err := json.Marshal(rec.reply)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range arrays {
				copy(c[:cap(c)], bytes.Repeat([]byte{'#'}, cap(c)))
			}
			after, _ := json.Marshal(rec.reply)
			if !bytes.Equal(before, after) {
				t.Errorf("%s in chunks of %d bytes: the decoded reply shares the tap's memory, which goes back to the pool:\nbefore %s\nafter  %s", name, size, before, after)
			}
		}
	}
}

// TestShortReplyKeepsPoolBuffer checks what copyReply keeps of a reply
// shorter than the pool's buffer it was read into: a streamed reply keeps
// the buffer itself, which decode gives back to the pool (reuseTap); a
// reply that is not streamed, which may be decoded into strings sharing
// its bytes, a copy of its own length.
func TestShortReplyKeepsPoolBuffer(t *testing.T) {
	data, err := os.ReadFile("../provider/anthropic/testdata/reply/tool_use.sse")
	if err != nil {
		t.Fatal(err)
	}
	g := &Gateway{opts: Options{MaxReplyBytes: 1 << 20}}
	for _, stream := range []bool{true, false} {
		tap, _, _, err := g.copyReply(httptest.NewRecorder(), bytes.NewReader(data), stream, true, nil)
		if err != nil || len(tap) != 1 || !bytes.Equal(tap[0], data) {
			t.Fatalf("stream %v: %d chunks, %v", stream, len(tap), err)
		}
		if pool := cap(tap[0]) == replyBuf; pool != stream {
			t.Errorf("stream %v: the reply kept in %d bytes, the pool's buffer %v", stream, cap(tap[0]), pool)
		}
	}
}

// TestFreeList checks what replyBufs is for: buffers given back are
// handed out again, also after a collection (which empties a sync.Pool),
// up to the list's capacity.
func TestFreeList(t *testing.T) {
	f := newFreeList(16, 2)
	a, b, c := f.Get().(*[]byte), f.Get().(*[]byte), f.Get().(*[]byte)
	if len(*a) != 16 || a == b {
		t.Fatalf("Get from an empty list: %d bytes, distinct %v", len(*a), a != b)
	}
	f.Put(a)
	f.Put(b)
	f.Put(c) // beyond the capacity: dropped
	runtime.GC()
	runtime.GC()
	got := map[*[]byte]bool{f.Get().(*[]byte): true, f.Get().(*[]byte): true}
	if !got[a] || !got[b] {
		t.Errorf("the buffers given back were not handed out again after two collections")
	}
	if d := f.Get().(*[]byte); d == c {
		t.Errorf("a buffer past the list's capacity was kept")
	}
}
