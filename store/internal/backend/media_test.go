package backend

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"strings"
	"testing"

	"github.com/convo-go/convo"
)

func TestStripRestoreMedia(t *testing.T) {
	img := make([]byte, 3000)
	rand.Read(img)
	small := convo.Part{Type: convo.TypeImage, MediaType: "image/png", Data: "iVBORw=="}
	big := convo.Part{Type: convo.TypeImage, MediaType: "image/png", Data: base64.StdEncoding.EncodeToString(img)}
	odd := []byte(base64.StdEncoding.EncodeToString(img[:2999])) // ends "…x=" (2 bytes in the last group)
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	odd[len(odd)-2] = alphabet[strings.IndexByte(alphabet, odd[len(odd)-2])|1] // non-zero padding bits: decodes, re-encodes differently
	oddPart := convo.Part{Type: convo.TypeImage, MediaType: "image/png", Data: string(odd)}
	msgs := []convo.Message{
		convo.User("", convo.Text("no media")),
		convo.User("", small),
		convo.User("", big, convo.Text(`"data":"`+big.Data+`"`), big),
		convo.User("", convo.ToolResultParts("c1", "shot", big, convo.Text("x"))),
		convo.User("", oddPart),
	}
	wantRefs := []int{0, 0, 2, 1, 0}
	for i, m := range msgs {
		body, err := convo.AppendMessage(nil, m)
		if err != nil {
			t.Fatal(err)
		}
		stripped, refs, blobs := StripMedia(body)
		if len(refs) != wantRefs[i] {
			t.Errorf("msgs[%d]: %d refs, want %d", i, len(refs), wantRefs[i])
		}
		if len(refs) > 0 && (len(blobs) != 1 || !bytes.Equal(blobs[0].Data, img)) {
			t.Errorf("msgs[%d]: blobs %d, want the image once", i, len(blobs))
		}
		if _, err := convo.UnmarshalMessage(stripped); err != nil {
			t.Errorf("msgs[%d]: stripped body does not decode: %v", i, err)
		}
		data := map[string][]byte{}
		for _, b := range blobs {
			data[b.Hash] = b.Data
		}
		back, err := RestoreMedia(stripped, refs, data)
		if err != nil {
			t.Fatalf("msgs[%d]: %v", i, err)
		}
		if !bytes.Equal(back, body) {
			t.Errorf("msgs[%d]: restored body differs", i)
		}
		if len(refs) > 0 {
			if _, err := RestoreMedia(stripped, refs, nil); err == nil {
				t.Errorf("msgs[%d]: restored without its blob", i)
			}
			if _, err := RestoreMedia(stripped, []MediaRef{{Off: 0, Hash: refs[0].Hash}}, data); err == nil {
				t.Errorf("msgs[%d]: restored at a wrong offset", i)
			}
		}
	}
}

// FuzzStripMedia checks that any body, canonical or not, restores to
// exactly its bytes, and that a stripped body is never longer.
func FuzzStripMedia(f *testing.F) {
	img := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{1, 2, 3}, 400))
	f.Add([]byte(`{"role":"user","parts":[{"type":"image","media_type":"image/png","data":"` + img + `"}]}`))
	f.Add([]byte(`{"data":"` + img + `","x":{"data":"` + img + `"}}`))
	f.Add([]byte(`"data":"` + img[:len(img)-1]))
	f.Fuzz(func(t *testing.T, body []byte) {
		stripped, refs, blobs := StripMedia(body)
		data := map[string][]byte{}
		for _, b := range blobs {
			data[b.Hash] = b.Data
		}
		back, err := RestoreMedia(stripped, refs, data)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(back, body) {
			t.Fatalf("restored %q, want %q", back, body)
		}
		if len(stripped) > len(body) {
			t.Fatalf("stripped body grew from %d to %d bytes", len(body), len(stripped))
		}
	})
}
