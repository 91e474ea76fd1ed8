package litert

import (
	"testing"

	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/internal/codectest"
)

func TestRequest(t *testing.T) {
	body := []byte(`[{"role":"user","content":"hi"}]`)
	r, _, err := conversation{}.DecodeRequest(body, provider.Options{})
	if err != nil {
		t.Fatal(err)
	}
	r.Model, r.Temperature = "gemma-3n", provider.Float(0.2)
	out, warns, err := conversation{}.EncodeRequest(r, provider.Options{})
	if err != nil {
		t.Fatal(err)
	}
	codectest.ExpectSameJSON(t, out, body)
	if len(warns) != 2 || warns[0].Path != "model" || warns[1].Path != "temperature" || warns[0].Code != provider.CodeSettingDropped {
		t.Errorf("warnings: %v", warns)
	}
	if _, _, err := (conversation{}).EncodeRequest(r, provider.Options{Strict: true}); err == nil {
		t.Error("strict: no error")
	}
}

var _ provider.RequestCodec = conversation{}
