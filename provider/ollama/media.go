package ollama

import (
	"cmp"

	"github.com/convo-go/convo/provider/internal/wire"
)

// octetStream is the media type of image bytes whose format the sniffer
// does not know: Ollama's wire carries no media type at all.
const octetStream = "application/octet-stream"

// sniffImage returns the media type of the base64 image data b64 from its
// first bytes: PNG, JPEG, GIF or WebP, else application/octet-stream.
func sniffImage(b64 string) string {
	return cmp.Or(wire.ImageType(wire.Head(b64)), octetStream)
}
