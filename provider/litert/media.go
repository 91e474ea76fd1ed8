package litert

import (
	"bytes"
	"net/url"
	"path"
	"strings"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider/internal/wire"
)

// octetStream is the media type of bytes whose format the sniffer does not
// know: LiteRT-LM's JSON carries no media type.
const octetStream = "application/octet-stream"

// sniff returns the media type of base64 data from its first bytes, for
// the image and audio formats LiteRT-LM models read; application/
// octet-stream otherwise.
func sniff(b64 string) string {
	b := wire.Head(b64)
	if t := wire.ImageType(b); t != "" {
		return t
	}
	switch {
	case bytes.HasPrefix(b, []byte("BM")) && len(b) >= 14:
		return "image/bmp"
	case wire.IsRIFF(b, "WAVE"):
		return "audio/wav"
	case bytes.HasPrefix(b, []byte("fLaC")):
		return "audio/flac"
	case bytes.HasPrefix(b, []byte("OggS")):
		return "audio/ogg"
	case bytes.HasPrefix(b, []byte("ID3")), len(b) >= 2 && b[0] == 0xff && (b[1]&0xe6) == 0xe2:
		// An ID3 tag, or an MPEG audio layer III frame sync.
		return "audio/mpeg"
	case len(b) >= 12 && string(b[4:8]) == "ftyp" && (string(b[8:11]) == "M4A" || string(b[8:11]) == "M4B"):
		return "audio/mp4"
	}
	return octetStream
}

// extTypes maps file extensions to media types for parts given by path.
// It is a fixed table rather than the system's MIME database, so decoding
// gives the same result on every machine.
var extTypes = map[string]string{
	".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif",
	".webp": "image/webp", ".bmp": "image/bmp", ".heic": "image/heic", ".heif": "image/heif",
	".wav": "audio/wav", ".mp3": "audio/mpeg", ".flac": "audio/flac", ".ogg": "audio/ogg",
	".opus": "audio/opus", ".m4a": "audio/mp4", ".aac": "audio/aac", ".pcm": "audio/pcm",
}

func typeByExt(p string) string {
	return extTypes[strings.ToLower(path.Ext(p))]
}

// fileURL returns the file: URL convo keeps for a LiteRT-LM path. An
// absolute path becomes file:///…; a relative one file:… with the path
// escaped, so pathOf gives back exactly the same string.
func fileURL(p string) string {
	if strings.HasPrefix(p, "/") {
		return (&url.URL{Scheme: "file", Path: p}).String()
	}
	return "file:" + url.PathEscape(p)
}

// pathOf returns the LiteRT-LM path of a file: URL, and whether u is one.
func pathOf(u string) (string, bool) {
	if !strings.HasPrefix(u, "file:") {
		return "", false
	}
	v, err := url.Parse(u)
	if err != nil || v.Scheme != "file" || v.RawQuery != "" || v.Fragment != "" {
		return "", false
	}
	if v.Opaque != "" {
		p, err := url.PathUnescape(v.Opaque)
		return p, err == nil && p != ""
	}
	if v.Host != "" && v.Host != "localhost" {
		return "", false
	}
	return v.Path, v.Path != ""
}

// acceptsMedia reports whether LiteRT-LM takes p: an image or audio clip as
// inline bytes ("blob") or as a local file ("path", a file: URL in convo).
func acceptsMedia(p convo.Part, _ bool) bool {
	if p.Type != convo.TypeImage && p.Type != convo.TypeAudio {
		return false
	}
	if p.Data != "" {
		return true
	}
	_, ok := pathOf(p.URL)
	return ok
}
