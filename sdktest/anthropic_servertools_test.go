package sdktest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/anthropics/anthropic-sdk-go"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
	anth "github.com/convo-go/convo/provider/anthropic"
)

// TestAnthropicServerToolsFitSDK: anthropic-sdk-go unmarshals the server
// tool blocks convo writes (EncodeReply) from its tool_call and tool_result
// parts marked as run by Anthropic, with the same ids, names, inputs and
// results: the recorded web search and MCP replies.
func TestAnthropicServerToolsFitSDK(t *testing.T) {
	for _, name := range []string{"vercel-anthropic-web-search-tool.1.json", "vercel-anthropic-mcp.1.json"} {
		t.Run(name, func(t *testing.T) {
			rec, err := os.ReadFile(filepath.Join("..", "provider", "anthropic", "testdata", "recorded", name))
			if err != nil {
				t.Fatal(err)
			}
			m, _, err := anth.Messages().DecodeReply(rec, provider.Options{})
			if err != nil {
				t.Fatal(err)
			}
			var sdk anthropic.Message
			if err := json.Unmarshal(anth.EncodeReply(m, provider.StreamOptions{}), &sdk); err != nil {
				t.Fatal(err)
			}
			parts := m.ServerTools()
			var n int
			for _, b := range sdk.Content {
				switch b.Type {
				case "server_tool_use", "mcp_tool_use":
					p := parts[n]
					n++
					if p.Type != convo.TypeToolCall || b.ID != p.ID || b.Name != p.Name || !sameJSON(t, b.Input, p.Args) {
						t.Errorf("%s block %s %s %s, part %+v", b.Type, b.ID, b.Name, b.Input, p)
					}
				case "web_search_tool_result", "mcp_tool_result":
					p := parts[n]
					n++
					if p.Type != convo.TypeToolResult || b.ToolUseID != p.ID {
						t.Errorf("%s block for %s, part %+v", b.Type, b.ToolUseID, p)
					}
					if b.Type == "web_search_tool_result" {
						r := b.AsWebSearchToolResult()
						if !sameJSON(t, []byte(r.Content.RawJSON()), p.Parts[0].Value) {
							t.Errorf("search results %s, part %s", r.Content.RawJSON(), p.Parts[0].Value)
						}
					}
				}
			}
			if n != len(parts) || n == 0 {
				t.Errorf("%d server tool blocks, want %d", n, len(parts))
			}
		})
	}
}
