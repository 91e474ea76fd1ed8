package sdktest

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/bedrock"
)

// sdkJSON is the JSON of an SDK document value.
func sdkJSON(t *testing.T, d interface{ MarshalSmithyDocument() ([]byte, error) }) []byte {
	t.Helper()
	b, err := d.MarshalSmithyDocument()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestBedrockSDKServerTools: aws-sdk-go-v2 reads the recorded replies with
// tools Bedrock ran (Nova web grounding, Nova code interpreter) into
// ToolUseBlock of type server_tool_use and ToolResultBlock with a type;
// convo reads the same bytes into server tool parts with the same ids,
// names, inputs, result types, statuses and contents; and the SDK,
// sending the message it read as the next request's, writes the JSON
// convo writes for its parts.
func TestBedrockSDKServerTools(t *testing.T) {
	for _, name := range []string{"rubyllm-nova-grounding.json", "pydantic-code-execution.json"} {
		t.Run(name, func(t *testing.T) {
			body, err := os.ReadFile("../provider/bedrock/testdata/recorded/" + name)
			if err != nil {
				t.Fatal(err)
			}
			f := &fakeBedrock{respond: func(*http.Request) (int, string, []byte) { return 200, "application/json", body }}
			out, err := bedrockClient(f).Converse(context.Background(), &bedrockruntime.ConverseInput{ModelId: aws.String("us.amazon.nova-2-lite-v1:0"),
				Messages: []types.Message{{Role: types.ConversationRoleUser, Content: []types.ContentBlock{&types.ContentBlockMemberText{Value: "q"}}}}})
			if err != nil {
				t.Fatal(err)
			}
			sdk := out.Output.(*types.ConverseOutputMemberMessage).Value
			m, _, err := bedrock.Converse().DecodeReply(body, provider.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if len(m.Parts) != len(sdk.Content) {
				t.Fatalf("convo has %d parts, the SDK %d blocks", len(m.Parts), len(sdk.Content))
			}
			n := 0
			for i, b := range sdk.Content {
				p := m.Parts[i]
				switch b := b.(type) {
				case *types.ContentBlockMemberToolUse:
					if b.Value.Type != types.ToolUseTypeServerToolUse {
						continue
					}
					n++
					if !p.IsServerTool() || p.Type != convo.TypeToolCall || p.Provider != bedrock.ProviderID ||
						p.ID != aws.ToString(b.Value.ToolUseId) || p.Name != aws.ToString(b.Value.Name) || !sameJSON(t, p.Args, sdkJSON(t, b.Value.Input)) {
						t.Errorf("content[%d]: convo %+v, SDK %+v", i, p, b.Value)
					}
				case *types.ContentBlockMemberToolResult:
					n++
					var native struct{ Type, Status string }
					_ = json.Unmarshal(p.Native[bedrock.ProviderID], &native)
					if !p.IsServerTool() || p.Type != convo.TypeToolResult || p.ID != aws.ToString(b.Value.ToolUseId) ||
						native.Type != aws.ToString(b.Value.Type) || native.Status != string(b.Value.Status) || len(p.Parts) != len(b.Value.Content) {
						t.Errorf("content[%d]: convo %+v, SDK %+v", i, p, b.Value)
						continue
					}
					for j, c := range b.Value.Content {
						switch c := c.(type) {
						case *types.ToolResultContentBlockMemberText:
							if p.Parts[j].Text != c.Value {
								t.Errorf("content[%d].content[%d]: %q, SDK %q", i, j, p.Parts[j].Text, c.Value)
							}
						case *types.ToolResultContentBlockMemberJson:
							if !sameJSON(t, p.Parts[j].Value, sdkJSON(t, c.Value)) {
								t.Errorf("content[%d].content[%d]: %s, SDK %s", i, j, p.Parts[j].Value, sdkJSON(t, c.Value))
							}
						default:
							t.Errorf("content[%d].content[%d]: SDK block %T", i, j, c)
						}
					}
				}
			}
			if n != 2 {
				t.Fatalf("%d server tool blocks, want 2", n)
			}

			// The next request: the SDK writes the message it read, convo
			// its parts.
			if _, err := bedrockClient(f).Converse(context.Background(), &bedrockruntime.ConverseInput{ModelId: aws.String("m"),
				Messages: []types.Message{{Role: types.ConversationRoleUser, Content: []types.ContentBlock{&types.ContentBlockMemberText{Value: "q"}}}, sdk}}); err != nil {
				t.Fatal(err)
			}
			mine, _, err := bedrock.Converse().Encode(convo.History{convo.User("q"), m}, provider.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if got := conversationOf(t, f.last()); !sameJSON(t, mine, got) {
				t.Errorf("the next request:\nconvo %s\nSDK   %s", mine, got)
			}
		})
	}
}
