package ui

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/convo-go/convo"
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
}
