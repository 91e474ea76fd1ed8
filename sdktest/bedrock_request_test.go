package sdktest

import (
	"context"
	"net/http"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/document"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"

	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/bedrock"
)

// TestBedrockSDKWholeRequest: the SDK's ConverseInput cannot be read from
// JSON (its unions have no JSON form), so the oracle runs the other way: a
// whole request the SDK builds and serialises — inference settings, tools
// with a JSON Schema, tool choice, model fields, request metadata — decodes
// with convo into a provider.Request carrying each setting, and encodes
// back to the SDK's JSON.
func TestBedrockSDKWholeRequest(t *testing.T) {
	f := &fakeBedrock{respond: func(*http.Request) (int, string, []byte) { return 200, "application/json", []byte(okResponse) }}
	client := bedrockClient(f)
	system, messages := sdkConversation()
	schema := document.NewLazyDocument(map[string]any{
		"type":       "object",
		"properties": map[string]any{"city": map[string]any{"type": "string"}},
		"required":   []any{"city"},
	})
	if _, err := client.Converse(context.Background(), &bedrockruntime.ConverseInput{
		ModelId: aws.String("anthropic.claude-x"), System: system, Messages: messages,
		InferenceConfig: &types.InferenceConfiguration{MaxTokens: aws.Int32(512), Temperature: aws.Float32(0.5),
			TopP: aws.Float32(0.75), StopSequences: []string{"END"}},
		ToolConfig: &types.ToolConfiguration{
			Tools: []types.Tool{&types.ToolMemberToolSpec{Value: types.ToolSpecification{
				Name: aws.String("get_weather"), Description: aws.String("Weather for a city."),
				InputSchema: &types.ToolInputSchemaMemberJson{Value: schema}}}},
			ToolChoice: &types.ToolChoiceMemberTool{Value: types.SpecificToolChoice{Name: aws.String("get_weather")}},
		},
		AdditionalModelRequestFields: document.NewLazyDocument(map[string]any{"top_k": 40}),
		RequestMetadata:              map[string]string{"team": "search"},
	}); err != nil {
		t.Fatal(err)
	}
	sent := f.last()
	r, warns, err := bedrock.Converse().DecodeRequest(sent, provider.Options{})
	if err != nil {
		t.Fatalf("decode %s: %v", sent, err)
	}
	if len(warns) > 0 {
		t.Errorf("decode warnings: %v", warns)
	}
	switch {
	case r.MaxTokens != 512, r.Temperature == nil || *r.Temperature != 0.5, r.TopP == nil || *r.TopP != 0.75:
		t.Errorf("inference settings: max %d, temperature %v, top_p %v", r.MaxTokens, r.Temperature, r.TopP)
	case len(r.Stop) != 1 || r.Stop[0] != "END":
		t.Errorf("stop %v", r.Stop)
	case len(r.Tools) != 1 || r.Tools[0].Name != "get_weather" || len(r.Tools[0].Parameters) == 0:
		t.Errorf("tools %+v", r.Tools)
	case r.ToolChoice.Name != "get_weather":
		t.Errorf("tool choice %+v", r.ToolChoice)
	case r.Metadata["team"] != "search":
		t.Errorf("metadata %v", r.Metadata)
	}
	out, warns, err := bedrock.Converse().EncodeRequest(r, provider.Options{})
	if err != nil {
		t.Fatalf("encode: %v (%v)", err, warns)
	}
	if !sameJSON(t, out, sent) {
		t.Errorf("round trip differs:\nconvo %s\nSDK   %s", out, sent)
	}
}
