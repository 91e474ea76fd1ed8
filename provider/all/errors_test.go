package all

import (
	"errors"
	"strings"
	"testing"

	"github.com/convo-go/convo/provider"
)

// TestAPIError: an error the provider reported comes out of every format's
// reply reader as one *provider.APIError, whole body or stream.
func TestAPIError(t *testing.T) {
	for _, tt := range []struct {
		format, body string
		stream       bool
		want         provider.APIError
	}{
		{"openai-chat", `{"error":{"message":"m","type":"t","code":"c","param":"p"}}`, false,
			provider.APIError{Type: "t", Code: "c", Param: "p", Message: "m"}},
		{"openai-responses", `{"error":{"message":"m","type":"t"}}`, false, provider.APIError{Type: "t", Message: "m"}},
		{"anthropic", `{"type":"error","error":{"type":"t","message":"m"}}`, false, provider.APIError{Type: "t", Message: "m"}},
		{"gemini", `{"error":{"code":429,"message":"m","status":"t"}}`, false, provider.APIError{Status: 429, Type: "t", Message: "m"}},
		{"ollama", `{"error":"m"}`, false, provider.APIError{Message: "m"}},
		{"bedrock", `{"throttlingException":{"message":"m"}}` + "\n", true, provider.APIError{Type: "throttlingException", Message: "m"}},
		{"litert", `{"error":"m"}` + "\n", true, provider.APIError{Message: "m"}},
	} {
		t.Run(tt.format, func(t *testing.T) {
			f, err := Lookup(tt.format)
			if err != nil {
				t.Fatal(err)
			}
			if tt.stream {
				_, _, err = f.ReadStream(strings.NewReader(tt.body), provider.Options{})
			} else {
				_, _, err = f.DecodeReply([]byte(tt.body), provider.Options{})
			}
			var ae *provider.APIError
			if !errors.As(err, &ae) {
				t.Fatalf("got %v (%T), want a *provider.APIError", err, err)
			}
			want := tt.want
			want.Provider = f.Provider()
			if ae.Status != want.Status || ae.Provider != want.Provider || ae.Type != want.Type ||
				ae.Code != want.Code || ae.Param != want.Param || ae.Message != want.Message {
				t.Errorf("got %+v, want %+v", *ae, want)
			}
		})
	}
}
