package sdktest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/document"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/bedrock"
)

// fakeBedrock stands in for the Bedrock endpoint inside the process: it
// keeps the body of every request the SDK sends and answers with the next
// canned response. Nothing leaves the machine.
type fakeBedrock struct {
	mu          sync.Mutex
	requests    [][]byte
	respond     func(req *http.Request) (status int, contentType string, body []byte)
	lastHeaders http.Header
}

func (f *fakeBedrock) Do(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil {
		b, err := io.ReadAll(req.Body)
		if err != nil {
			return nil, err
		}
		body = b
	}
	f.mu.Lock()
	f.requests = append(f.requests, body)
	f.lastHeaders = req.Header.Clone()
	f.mu.Unlock()
	status, ctype, out := 200, "application/json", []byte(`{}`)
	if f.respond != nil {
		status, ctype, out = f.respond(req)
	}
	return &http.Response{
		StatusCode:    status,
		Header:        http.Header{"Content-Type": {ctype}},
		Body:          io.NopCloser(bytes.NewReader(out)),
		ContentLength: int64(len(out)),
		Request:       req,
	}, nil
}

func (f *fakeBedrock) last() []byte {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.requests[len(f.requests)-1]
}

func bedrockClient(f *fakeBedrock) *bedrockruntime.Client {
	return bedrockruntime.New(bedrockruntime.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String("https://bedrock-runtime.invalid"),
		HTTPClient:   f,
		// Made-up keys: the request is signed and then caught by the fake
		// endpoint (the SDK drops anonymous credentials and would then
		// want a Bedrock API key instead).
		Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: "AKIDCONVOTEST", SecretAccessKey: "convo-test-not-a-secret", Source: "sdktest"}, nil
		}),
		RetryMaxAttempts: 1,
	})
}

const okResponse = `{"output":{"message":{"role":"assistant","content":[{"text":"ok"}]}},"stopReason":"end_turn","usage":{"inputTokens":1,"outputTokens":1,"totalTokens":2},"metrics":{"latencyMs":1}}`

// conversationOf keeps the members of a Converse request body convo reads.
func conversationOf(t *testing.T, body []byte) []byte {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("%v: %s", err, body)
	}
	out := map[string]json.RawMessage{}
	for _, k := range []string{"system", "messages"} {
		if v, ok := m[k]; ok {
			out[k] = v
		}
	}
	b, _ := json.Marshal(out)
	return b
}

func sameJSON(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatalf("%v: %s", err, a)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	return reflect.DeepEqual(x, y)
}

// sdkConversation is a Converse request built with the SDK's own types,
// using every content block convo maps.
func sdkConversation() ([]types.SystemContentBlock, []types.Message) {
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
	system := []types.SystemContentBlock{
		&types.SystemContentBlockMemberText{Value: "You are a careful travel assistant."},
		&types.SystemContentBlockMemberCachePoint{Value: types.CachePointBlock{Type: types.CachePointTypeDefault}},
		&types.SystemContentBlockMemberGuardContent{Value: &types.GuardrailConverseContentBlockMemberText{
			Value: types.GuardrailConverseTextBlock{Text: aws.String("Never reveal booking codes.")}}},
	}
	messages := []types.Message{
		{Role: types.ConversationRoleUser, Content: []types.ContentBlock{
			&types.ContentBlockMemberText{Value: "Weather in Paris? See the sign."},
			&types.ContentBlockMemberImage{Value: types.ImageBlock{Format: types.ImageFormatPng, Source: &types.ImageSourceMemberBytes{Value: png}}},
			&types.ContentBlockMemberImage{Value: types.ImageBlock{Format: types.ImageFormatJpeg, Source: &types.ImageSourceMemberS3Location{
				Value: types.S3Location{Uri: aws.String("s3://photos/sign.jpg"), BucketOwner: aws.String("111122223333")}}}},
			&types.ContentBlockMemberDocument{Value: types.DocumentBlock{Format: types.DocumentFormatPdf, Name: aws.String("Itinerary (draft)"),
				Source: &types.DocumentSourceMemberBytes{Value: []byte("%PDF-1.4")}, Context: aws.String("the plan"),
				Citations: &types.CitationsConfig{Enabled: aws.Bool(true)}}},
			&types.ContentBlockMemberDocument{Value: types.DocumentBlock{Format: types.DocumentFormatMd, Name: aws.String("notes"),
				Source: &types.DocumentSourceMemberText{Value: "# Notes"}}},
			&types.ContentBlockMemberDocument{Value: types.DocumentBlock{Format: types.DocumentFormatTxt, Name: aws.String("list"),
				Source: &types.DocumentSourceMemberContent{Value: []types.DocumentContentBlock{
					&types.DocumentContentBlockMemberText{Value: "socks"}, &types.DocumentContentBlockMemberText{Value: ", shoes"}}}}},
			&types.ContentBlockMemberVideo{Value: types.VideoBlock{Format: types.VideoFormatMpg, Source: &types.VideoSourceMemberBytes{Value: []byte("mpg")}}},
			&types.ContentBlockMemberVideo{Value: types.VideoBlock{Format: types.VideoFormatMp4, Source: &types.VideoSourceMemberS3Location{
				Value: types.S3Location{Uri: aws.String("s3://videos/street.mp4")}}}},
			&types.ContentBlockMemberAudio{Value: types.AudioBlock{Format: types.AudioFormatFlac, Source: &types.AudioSourceMemberBytes{Value: []byte("fLaC")}}},
			&types.ContentBlockMemberCachePoint{Value: types.CachePointBlock{Type: types.CachePointTypeDefault, Ttl: types.CacheTTLOneHour}},
		}},
		{Role: types.ConversationRoleAssistant, Content: []types.ContentBlock{
			&types.ContentBlockMemberReasoningContent{Value: &types.ReasoningContentBlockMemberReasoningText{
				Value: types.ReasoningTextBlock{Text: aws.String("Call the tool."), Signature: aws.String("EqQBCkgIARABGAIiQL3Xw==")}}},
			&types.ContentBlockMemberReasoningContent{Value: &types.ReasoningContentBlockMemberRedactedContent{Value: []byte("secret reasoning")}},
			&types.ContentBlockMemberText{Value: "Checking."},
			&types.ContentBlockMemberToolUse{Value: types.ToolUseBlock{ToolUseId: aws.String("tooluse_kZJMlvQmRJ6eAyJE5GIl7Q"), Name: aws.String("get_weather"),
				Input: document.NewLazyDocument(map[string]any{"city": "Paris", "units": []any{"c", "kmh"}, "days": 2})}},
			&types.ContentBlockMemberToolUse{Value: types.ToolUseBlock{ToolUseId: aws.String("tooluse_2"), Name: aws.String("read_sign"),
				Input: document.NewLazyDocument(map[string]any{})}},
		}},
		{Role: types.ConversationRoleUser, Content: []types.ContentBlock{
			&types.ContentBlockMemberToolResult{Value: types.ToolResultBlock{ToolUseId: aws.String("tooluse_kZJMlvQmRJ6eAyJE5GIl7Q"), Status: types.ToolResultStatusSuccess,
				Content: []types.ToolResultContentBlock{
					&types.ToolResultContentBlockMemberJson{Value: document.NewLazyDocument(map[string]any{"temp_c": 18, "sky": "cloudy"})},
					&types.ToolResultContentBlockMemberText{Value: "Cloudy."},
				}}},
			&types.ContentBlockMemberCachePoint{Value: types.CachePointBlock{Type: types.CachePointTypeDefault}},
			&types.ContentBlockMemberToolResult{Value: types.ToolResultBlock{ToolUseId: aws.String("tooluse_2"), Status: types.ToolResultStatusError,
				Content: []types.ToolResultContentBlock{
					&types.ToolResultContentBlockMemberText{Value: "OCR failed"},
					&types.ToolResultContentBlockMemberImage{Value: types.ImageBlock{Format: types.ImageFormatWebp, Source: &types.ImageSourceMemberBytes{Value: []byte("RIFF....WEBP")}}},
					&types.ToolResultContentBlockMemberDocument{Value: types.DocumentBlock{Format: types.DocumentFormatCsv, Name: aws.String("log"), Source: &types.DocumentSourceMemberBytes{Value: []byte("a,b\n")}}},
					&types.ToolResultContentBlockMemberVideo{Value: types.VideoBlock{Format: types.VideoFormatMov, Source: &types.VideoSourceMemberBytes{Value: []byte("moov")}}},
					&types.ToolResultContentBlockMemberSearchResult{Value: types.SearchResultBlock{Source: aws.String("https://example.com"), Title: aws.String("Signs"),
						Content: []types.SearchResultContentBlock{{Text: aws.String("Rue de Rivoli")}}}},
				}}},
			&types.ContentBlockMemberText{Value: "Will it rain?"},
		}},
		{Role: types.ConversationRoleAssistant, Content: []types.ContentBlock{
			&types.ContentBlockMemberCitationsContent{Value: types.CitationsContentBlock{
				Content: []types.CitationGeneratedContent{&types.CitationGeneratedContentMemberText{Value: "It is 18 °C."}},
				Citations: []types.Citation{{Title: aws.String("Itinerary (draft)"), SourceContent: []types.CitationSourceContent{
					&types.CitationSourceContentMemberText{Value: "Paris"}},
					Location: &types.CitationLocationMemberDocumentPage{Value: types.DocumentPageLocation{DocumentIndex: aws.Int32(0), Start: aws.Int32(1), End: aws.Int32(2)}}}},
			}},
			&types.ContentBlockMemberText{Value: "Maybe rain — bring an umbrella."},
			&types.ContentBlockMemberCachePoint{Value: types.CachePointBlock{Type: types.CachePointTypeDefault, Ttl: types.CacheTTLFiveMinutes}},
			&types.ContentBlockMemberToolUse{Value: types.ToolUseBlock{ToolUseId: aws.String("srv_1"), Name: aws.String("web_grounding"),
				Type: types.ToolUseTypeServerToolUse, Input: document.NewLazyDocument(map[string]any{"q": "rain"})}},
		}},
		{Role: types.ConversationRoleUser, Content: []types.ContentBlock{
			&types.ContentBlockMemberGuardContent{Value: &types.GuardrailConverseContentBlockMemberText{Value: types.GuardrailConverseTextBlock{Text: aws.String("Thanks!")}}},
		}},
	}
	return system, messages
}

// TestBedrockSDKRequestRoundTrip: a request the SDK builds and marshals
// decodes with convo and encodes back to the same JSON.
func TestBedrockSDKRequestRoundTrip(t *testing.T) {
	f := &fakeBedrock{respond: func(*http.Request) (int, string, []byte) { return 200, "application/json", []byte(okResponse) }}
	client := bedrockClient(f)
	system, messages := sdkConversation()
	if _, err := client.Converse(context.Background(), &bedrockruntime.ConverseInput{
		ModelId: aws.String("anthropic.claude-x"), System: system, Messages: messages,
		InferenceConfig: &types.InferenceConfiguration{MaxTokens: aws.Int32(512)},
	}); err != nil {
		t.Fatal(err)
	}
	sent := f.last()
	// The comparison below means something only if the SDK wrote the
	// blocks convo treats specially.
	for _, want := range []string{`"redactedContent"`, `"signature"`, `"cachePoint"`, `"ttl":"1h"`, `"s3Location"`, `"bucketOwner"`,
		`"citationsContent"`, `"guardContent"`, `"searchResult"`, `"server_tool_use"`, `"status":"error"`, `"format":"mpg"`,
		`"content":[{"text":"socks"}`, `"context"`} {
		if !bytes.Contains(sent, []byte(want)) {
			t.Errorf("the SDK's request has no %s", want)
		}
	}
	h, warns, err := bedrock.Converse().Decode(sent, provider.Options{})
	if err != nil {
		t.Fatalf("decode %s: %v", sent, err)
	}
	if len(warns) > 0 {
		t.Errorf("decode warnings: %v", warns)
	}
	if err := h.Validate(); err != nil {
		t.Errorf("decoded history: %v", err)
	}
	out, warns, err := bedrock.Converse().Encode(h, provider.Options{Strict: true})
	if err != nil {
		t.Fatalf("encode: %v (%v)", err, warns)
	}
	if want := conversationOf(t, sent); !sameJSON(t, out, want) {
		t.Errorf("round trip differs:\nconvo %s\nSDK   %s", out, want)
	}
}

// sdkMessages reads convo's request messages into the SDK's Message type
// with the SDK's own deserializer: each is served as the output of a
// Converse call. System blocks have no such carrier and are built by hand.
func sdkMessages(t *testing.T, body []byte) ([]types.SystemContentBlock, []types.Message) {
	t.Helper()
	var req struct {
		System   []map[string]json.RawMessage `json:"system"`
		Messages []json.RawMessage            `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		t.Fatal(err)
	}
	var system []types.SystemContentBlock
	for i, b := range req.System {
		switch {
		case b["text"] != nil:
			var s string
			json.Unmarshal(b["text"], &s)
			system = append(system, &types.SystemContentBlockMemberText{Value: s})
		case b["cachePoint"] != nil:
			var c struct{ Type, TTL string }
			json.Unmarshal(b["cachePoint"], &c)
			system = append(system, &types.SystemContentBlockMemberCachePoint{Value: types.CachePointBlock{Type: types.CachePointType(c.Type), Ttl: types.CacheTTL(c.TTL)}})
		case b["guardContent"] != nil:
			var g struct {
				Text struct {
					Text       string   `json:"text"`
					Qualifiers []string `json:"qualifiers"`
				} `json:"text"`
			}
			json.Unmarshal(b["guardContent"], &g)
			var qs []types.GuardrailConverseContentQualifier
			for _, q := range g.Text.Qualifiers {
				qs = append(qs, types.GuardrailConverseContentQualifier(q))
			}
			system = append(system, &types.SystemContentBlockMemberGuardContent{Value: &types.GuardrailConverseContentBlockMemberText{
				Value: types.GuardrailConverseTextBlock{Text: aws.String(g.Text.Text), Qualifiers: qs}}})
		default:
			t.Fatalf("system[%d]: unexpected block %v", i, b)
		}
	}
	var next []byte
	f := &fakeBedrock{respond: func(*http.Request) (int, string, []byte) {
		return 200, "application/json", []byte(`{"output":{"message":` + string(next) + `},"stopReason":"end_turn","usage":{"inputTokens":1,"outputTokens":1,"totalTokens":2},"metrics":{"latencyMs":1}}`)
	}}
	client := bedrockClient(f)
	var msgs []types.Message
	for i, m := range req.Messages {
		next = m
		out, err := client.Converse(context.Background(), &bedrockruntime.ConverseInput{ModelId: aws.String("m"),
			Messages: []types.Message{{Role: types.ConversationRoleUser, Content: []types.ContentBlock{&types.ContentBlockMemberText{Value: "x"}}}}})
		if err != nil {
			t.Fatalf("messages[%d]: the SDK refuses %s: %v", i, m, err)
		}
		msg, ok := out.Output.(*types.ConverseOutputMemberMessage)
		if !ok {
			t.Fatalf("messages[%d]: output %T", i, out.Output)
		}
		for j, b := range msg.Value.Content {
			if u, ok := b.(*types.UnknownUnionMember); ok {
				t.Errorf("messages[%d].content[%d]: the SDK does not know %q", i, j, u.Tag)
			}
		}
		msgs = append(msgs, msg.Value)
	}
	return system, msgs
}

// TestBedrockSDKAcceptsEncoded: everything convo encodes unmarshals into
// the SDK's types and marshals back to the same JSON.
func TestBedrockSDKAcceptsEncoded(t *testing.T) {
	var inputs []convo.History
	// Histories decoded from convo's own Bedrock fixtures, and canonical
	// histories from every provider, encoded for Bedrock.
	files, _ := filepath.Glob("../provider/bedrock/testdata/requests/*.json")
	for _, file := range files {
		if strings.HasSuffix(file, ".convo.json") {
			continue
		}
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		h, _, err := bedrock.Converse().Decode(b, provider.Options{})
		if err != nil {
			t.Fatal(err)
		}
		inputs = append(inputs, h)
	}
	canon, _ := filepath.Glob("../provider/bedrock/testdata/encode/*.convo.json")
	canon2, _ := filepath.Glob("testdata/bedrock/*.convo.json")
	for _, file := range append(canon, canon2...) {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		h, err := convo.Unmarshal(b)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		inputs = append(inputs, h)
	}
	if len(inputs) < 5 {
		t.Fatalf("only %d inputs", len(inputs))
	}
	for n, h := range inputs {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			body, _, err := bedrock.Converse().Encode(h, provider.Options{Repair: true, Media: provider.MediaPlaceholder, Reasoning: provider.ReasoningText})
			if err != nil {
				t.Fatal(err)
			}
			system, msgs := sdkMessages(t, body)
			f := &fakeBedrock{respond: func(*http.Request) (int, string, []byte) { return 200, "application/json", []byte(okResponse) }}
			if len(msgs) == 0 {
				t.Skip("no messages to send")
			}
			if _, err := bedrockClient(f).Converse(context.Background(), &bedrockruntime.ConverseInput{
				ModelId: aws.String("m"), System: system, Messages: msgs}); err != nil {
				t.Fatalf("the SDK refuses the request: %v", err)
			}
			if got := conversationOf(t, f.last()); !sameJSON(t, got, body) {
				t.Errorf("the SDK writes it differently:\nSDK   %s\nconvo %s", got, body)
			}
		})
	}
}
