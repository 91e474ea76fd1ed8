package openai

import (
	"encoding/json"
	"testing"

	"github.com/convo-go/convo/internal/jsonx"
	"github.com/convo-go/convo/provider"
)

// FuzzServerItem feeds arbitrary items of the provider-run tools to
// DecodeItems: nothing may panic, what decodes validates, and an item read
// as a call (and result) is written back as it came, compacted.
func FuzzServerItem(f *testing.F) {
	for _, s := range []string{
		`{"id":"ws_1","type":"web_search_call","status":"completed","action":{"type":"search","query":"go"}}`,
		`{"id":"mcp_1","type":"mcp_call","status":"failed","approval_request_id":null,"arguments":"{ \"a\": 1 }","error":{"code":1},"name":"add","output":null,"server_label":"calc"}`,
		`{"id":"ci_1","type":"code_interpreter_call","status":"completed","code":"print(1)","container_id":"c","outputs":[{"type":"logs","logs":"1\n"},{"type":"image","url":"u"}]}`,
		`{"id":"fs_1","type":"file_search_call","status":"completed","queries":["q"],"results":null}`,
		`{"id":"ig_1","type":"image_generation_call","status":"completed","output_format":"webp","result":"UklGRg==","revised_prompt":"caf\u00e9"}`,
		`{"id":"mcp_1","type":"mcp_call","arguments":"","name":"n","output":"\/"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, item []byte) {
		h, _, err := DecodeItems([]json.RawMessage{item}, provider.Options{})
		if err != nil || len(h) != 1 || len(h[0].Parts) == 0 || h[0].Parts[0].Server == "" {
			return
		}
		if err := h.Validate(); err != nil {
			t.Fatalf("mapped item does not validate: %v\n%s", err, item)
		}
		items, _, err := EncodeItems(h, provider.Options{})
		if err != nil || len(items) != 1 {
			t.Fatalf("EncodeItems: %v, %d items\n%s", err, len(items), item)
		}
		want, _ := jsonx.Compact(item, 0)
		if string(items[0]) != string(want) {
			t.Fatalf("written back\n got %s\nwant %s", items[0], want)
		}
	})
}
