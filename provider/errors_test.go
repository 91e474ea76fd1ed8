package provider_test

import (
	"testing"

	"github.com/convo-go/convo/provider"
)

func TestAPIErrorText(t *testing.T) {
	for _, tt := range []struct {
		e    provider.APIError
		want string
	}{
		{provider.APIError{Provider: "openai", Type: "server_error", Message: "boom"}, "openai: boom (server_error)"},
		{provider.APIError{Provider: "openai", Type: "invalid_request_error", Code: "invalid_api_key", Message: "bad key"}, "openai: bad key (invalid_api_key)"},
		{provider.APIError{Provider: "gemini", Status: 429, Type: "RESOURCE_EXHAUSTED", Message: "quota"}, "gemini: quota (429 RESOURCE_EXHAUSTED)"},
		{provider.APIError{Provider: "ollama", Message: "model not found"}, "ollama: model not found"},
		{provider.APIError{Status: 500}, "provider: an error with no message (500)"},
	} {
		if got := tt.e.Error(); got != tt.want {
			t.Errorf("%+v: got %q, want %q", tt.e, got, tt.want)
		}
	}
}
