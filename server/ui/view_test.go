package ui

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/redact"
	"github.com/convo-go/convo/store"
)

func TestDataURL(t *testing.T) {
	png := base64.StdEncoding.EncodeToString([]byte("\x89PNG"))
	for _, tc := range []struct {
		t        convo.PartType
		mt, data string
		want     string
	}{
		{convo.TypeImage, "image/png", png, "data:image/png;base64," + png},
		{convo.TypeImage, "IMAGE/PNG", png, "data:image/png;base64," + png},
		{convo.TypeImage, "image/svg+xml", png, "data:image/svg+xml;base64," + png},
		{convo.TypeAudio, "audio/wav", png, "data:audio/wav;base64," + png},
		{convo.TypeImage, "text/html", png, ""},
		{convo.TypeImage, "audio/wav", png, ""},
		{convo.TypeFile, "image/png", png, ""},
		{convo.TypeImage, `image/png" onerror="x`, png, ""},
		{convo.TypeImage, "image/png;charset=x", png, ""},
		{convo.TypeImage, "image/png", `AAAA" onerror="x`, ""},
	} {
		if got := string(dataURL(tc.t, tc.mt, tc.data)); got != tc.want {
			t.Errorf("dataURL(%s, %q) = %q, want %q", tc.t, tc.mt, got, tc.want)
		}
	}
	big := partOf(convo.Part{Type: convo.TypeImage, MediaType: "image/png", Data: strings.Repeat("A", maxInline+4)})
	if big.Src != "" || big.Size == 0 {
		t.Fatalf("an image over the inline limit: src %d bytes, size %d", len(big.Src), big.Size)
	}
	// The size shown is the decoded size, padding excluded, as show and the
	// Markdown export give it: 145 bytes, not the 147 of len/4*3.
	if v := partOf(convo.Image("image/png", make([]byte, 145))); v.Size != 145 {
		t.Errorf("a 145-byte image is shown as %d bytes", v.Size)
	}
}

// TestStoredMarkers: what redaction took out and content that expired or
// was never recorded are shown as such, read from the markers redact and
// the store write — never as if the message had said nothing.
func TestStoredMarkers(t *testing.T) {
	r, err := redact.New(redact.Builtin()...)
	if err != nil {
		t.Fatal(err)
	}
	red, _ := r.Message(convo.User("write to ann@example.com or bob@example.com",
		convo.Text("key sk-ant-api03-"+strings.Repeat("a", 40))))
	expired := store.WithoutContent(convo.Assistant("secret plans"), "expired")
	v := view(convo.History{red, expired, convo.User("plain")}, 0, nil)
	if got := strings.Join(v[0].Redactions, ", "); !strings.Contains(got, "email ×2") || len(v[0].Redactions) != 2 {
		t.Errorf("redactions %q, want email ×2 and the key's rule", got)
	}
	if v[1].Withheld != "expired" || len(v[1].Parts) != 0 {
		t.Errorf("expired message: withheld %q, %d parts", v[1].Withheld, len(v[1].Parts))
	}
	if v[2].Withheld != "" || len(v[2].Redactions) != 0 {
		t.Errorf("a plain message is marked: %+v", v[2])
	}
}
