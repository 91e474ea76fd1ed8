package openai

import (
	"strings"
	"testing"

	"github.com/convo-go/convo/provider"

	"github.com/convo-go/convo/provider/internal/codectest"
)

func TestChatRequestRoundTrip(t *testing.T) {
	codectest.RequestRoundTrip(t, chat{}, "testdata/requests/chat_*.json")
}

var _ provider.RequestCodec = chat{}

// A setting kept as it was read is replayed only while the field still says
// the same; a changed field wins.
func TestRequestSpelling(t *testing.T) {
	body := []byte(`{"model":"m","messages":[{"role":"user","content":"hi"}],"top_p":1.0,"stop":"END","max_tokens":5}`)
	r, _, err := chat{}.DecodeRequest(body, provider.Options{})
	if err != nil {
		t.Fatal(err)
	}
	out, _, _ := chat{}.EncodeRequest(r, provider.Options{})
	codectest.ExpectSameJSON(t, out, body)
	r.TopP, r.Stop, r.MaxTokens = provider.Float(0.5), []string{"A", "B"}, 9
	out, warns, _ := chat{}.EncodeRequest(r, provider.Options{})
	codectest.ExpectSameJSON(t, out, []byte(`{"model":"m","messages":[{"role":"user","content":"hi"}],"top_p":0.5,"stop":["A","B"],"max_tokens":9}`))
	if len(warns) != 0 {
		t.Errorf("warnings: %v", warns)
	}
}

func TestRequestErrors(t *testing.T) {
	for _, body := range []string{
		`{"model":1,"messages":[]}`,
		`{"messages":[],"temperature":"hot"}`,
		`{"messages":[],"tools":[{"type":"function","function":{"name":7}}]}`,
		`{"messages":[],"stop":[1]}`,
		`{"messages":[],"tools":{}}`,
	} {
		if _, _, err := (chat{}).DecodeRequest([]byte(body), provider.Options{}); err == nil {
			t.Errorf("%s: no error", body)
		} else if !strings.Contains(err.Error(), "openai-chat request: ") {
			t.Errorf("%s: error %q names no place", body, err)
		}
	}
}

func TestResponsesRequestRoundTrip(t *testing.T) {
	codectest.RequestRoundTrip(t, responses{}, "testdata/requests/responses_*.json")
}

var _ provider.RequestCodec = responses{}
