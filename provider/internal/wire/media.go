package wire

import (
	"bytes"
	"encoding/base64"
)

// Head returns the first bytes of base64 data, enough for every magic
// number a codec looks for; nil when they are not standard base64. Only a
// short prefix is decoded.
func Head(b64 string) []byte {
	// 24 characters are 18 bytes: the longest check needs 14.
	if len(b64) > 24 {
		b64 = b64[:24]
	}
	b, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return nil
	}
	return b
}

// ImageType returns the media type of the image whose first bytes are b,
// from its magic number: image/png, image/jpeg, image/gif or image/webp,
// the formats every provider takes; "" for anything else.
func ImageType(b []byte) string {
	switch {
	case bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")):
		return "image/png"
	case bytes.HasPrefix(b, []byte("\xff\xd8\xff")):
		return "image/jpeg"
	case bytes.HasPrefix(b, []byte("GIF87a")), bytes.HasPrefix(b, []byte("GIF89a")):
		return "image/gif"
	case IsRIFF(b, "WEBP"):
		return "image/webp"
	}
	return ""
}

// IsRIFF reports whether b starts a RIFF file of the given form ("WEBP",
// "WAVE").
func IsRIFF(b []byte, form string) bool {
	return len(b) >= 12 && string(b[:4]) == "RIFF" && string(b[8:12]) == form
}
