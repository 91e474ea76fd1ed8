package ollama

import (
	"bytes"
	"encoding/base64"
)

// octetStream is the media type of image bytes whose format the sniffer
// does not know: Ollama's wire carries no media type at all.
const octetStream = "application/octet-stream"

// sniffImage returns the media type of the base64 image data b64 from its
// first bytes: PNG, JPEG, GIF or WebP, else application/octet-stream. Only
// a short prefix is decoded.
func sniffImage(b64 string) string {
	head := b64
	if len(head) > 32 {
		head = head[:32]
	}
	b, err := base64.StdEncoding.DecodeString(head)
	if err != nil {
		return octetStream
	}
	switch {
	case bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")):
		return "image/png"
	case bytes.HasPrefix(b, []byte("\xff\xd8\xff")):
		return "image/jpeg"
	case bytes.HasPrefix(b, []byte("GIF87a")), bytes.HasPrefix(b, []byte("GIF89a")):
		return "image/gif"
	case len(b) >= 12 && string(b[:4]) == "RIFF" && string(b[8:12]) == "WEBP":
		return "image/webp"
	}
	return octetStream
}
