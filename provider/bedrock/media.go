package bedrock

import (
	"strings"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider/internal/wire"
)

// formatInfo ties a Bedrock format name to the MIME type convo keeps.
type formatInfo struct {
	format string
	mime   string
}

// The formats of each Bedrock media block, with the MIME type a decoded
// block gets. The first entry of a MIME type is the format it encodes to;
// later formats with the same MIME type ("mpg", "mka", "mpga") keep their
// name in Native so a round trip gives them back.
var (
	imageFormats = []formatInfo{
		{"png", "image/png"},
		{"jpeg", "image/jpeg"},
		{"gif", "image/gif"},
		{"webp", "image/webp"},
	}
	documentFormats = []formatInfo{
		{"pdf", "application/pdf"},
		{"csv", "text/csv"},
		{"doc", "application/msword"},
		{"docx", "application/vnd.openxmlformats-officedocument.wordprocessingml.document"},
		{"xls", "application/vnd.ms-excel"},
		{"xlsx", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"},
		{"html", "text/html"},
		{"txt", "text/plain"},
		{"md", "text/markdown"},
	}
	videoFormats = []formatInfo{
		{"mkv", "video/x-matroska"},
		{"mov", "video/quicktime"},
		{"mp4", "video/mp4"},
		{"webm", "video/webm"},
		{"flv", "video/x-flv"},
		{"mpeg", "video/mpeg"},
		{"mpg", "video/mpeg"},
		{"wmv", "video/x-ms-wmv"},
		{"three_gp", "video/3gpp"},
	}
	audioFormats = []formatInfo{
		{"mp3", "audio/mpeg"},
		{"opus", "audio/opus"},
		{"wav", "audio/wav"},
		{"aac", "audio/aac"},
		{"flac", "audio/flac"},
		{"mp4", "audio/mp4"},
		{"ogg", "audio/ogg"},
		{"mkv", "audio/x-matroska"},
		{"mka", "audio/x-matroska"},
		{"x-aac", "audio/x-aac"},
		{"m4a", "audio/x-m4a"},
		{"mpeg", "audio/mpeg"},
		{"mpga", "audio/mpeg"},
		{"pcm", "audio/pcm"},
		{"webm", "audio/webm"},
	}
)

// mimeAliases are other spellings of MIME types in the tables, as other
// providers and programs write them.
var mimeAliases = map[string]string{
	"image/jpg":       "image/jpeg",
	"image/pjpeg":     "image/jpeg",
	"text/x-markdown": "text/markdown",
	"text/md":         "text/markdown",
	"video/mpg":       "video/mpeg",
	"video/3gp":       "video/3gpp",
	"audio/mp3":       "audio/mpeg",
	"audio/x-mp3":     "audio/mpeg",
	"audio/x-wav":     "audio/wav",
	"audio/wave":      "audio/wav",
	"audio/vnd.wave":  "audio/wav",
	"audio/x-flac":    "audio/flac",
	"audio/m4a":       "audio/x-m4a",
	"audio/mp4a":      "audio/mp4",
	"audio/x-aac":     "audio/x-aac",
	"audio/l16":       "audio/pcm",
}

func formatsOf(t convo.PartType) []formatInfo {
	switch t {
	case convo.TypeImage:
		return imageFormats
	case convo.TypeFile:
		return documentFormats
	case convo.TypeVideo:
		return videoFormats
	case convo.TypeAudio:
		return audioFormats
	}
	return nil
}

// fallbackMIME is the MIME family of a format Bedrock may add later.
func fallbackMIME(t convo.PartType) string {
	if t == convo.TypeFile {
		return "application/"
	}
	return string(t) + "/"
}

// mimeOf returns the MIME type of a decoded block's format, and whether the
// format must be kept in Native because mimeOf's inverse would not give it.
func mimeOf(t convo.PartType, format string) (mime string, keep bool) {
	if format == "" {
		return "", false
	}
	for _, f := range formatsOf(t) {
		if f.format == format {
			first, _ := formatOfMIME(t, f.mime)
			return f.mime, first != format
		}
	}
	return fallbackMIME(t) + format, true
}

// formatOfMIME returns the format a MIME type encodes to.
func formatOfMIME(t convo.PartType, mime string) (string, bool) {
	m := strings.ToLower(strings.TrimSpace(mime))
	if i := strings.IndexByte(m, ';'); i >= 0 {
		m = strings.TrimSpace(m[:i])
	}
	if a, ok := mimeAliases[m]; ok {
		m = a
	}
	for _, f := range formatsOf(t) {
		if f.mime == m {
			return f.format, true
		}
	}
	return "", false
}

// mediaFormat returns the format to send for media part p: its remembered
// Bedrock format when that still matches its MIME type, else the format
// of its MIME type. An image with no MIME type is recognised by its first
// bytes. An empty format (and true) means none is known and none is sent.
func mediaFormat(p convo.Part) (string, bool) {
	if nf := nativeString(p.Native, "format"); nf != "" {
		if m, _ := mimeOf(p.Type, nf); m == p.MediaType {
			return nf, true
		}
	}
	if p.MediaType == "" {
		if p.Type == convo.TypeImage && p.Data != "" {
			return formatOfMIME(p.Type, wire.ImageType(wire.Head(p.Data)))
		}
		return "", true
	}
	return formatOfMIME(p.Type, p.MediaType)
}

func isS3(url string) bool { return strings.HasPrefix(url, "s3://") }

// documentName returns a name Bedrock accepts for a document: it allows
// letters, digits, single white space, hyphens, parentheses and square
// brackets. A file extension naming the document's own format is dropped;
// other characters become hyphens; a document without a usable name is
// named after a hash of its content, so the same document always gets the
// same name.
func documentName(p convo.Part, format string) string {
	name := p.Name
	if i := strings.LastIndexByte(name, '.'); i > 0 {
		ext := strings.ToLower(name[i+1:])
		if ext == format || (format == "" && isDocumentFormat(ext)) ||
			(ext == "htm" && format == "html") || (ext == "markdown" && format == "md") {
			name = name[:i]
		}
	}
	var b strings.Builder
	b.Grow(len(name))
	space := false
	for _, r := range name {
		switch {
		case r == ' ' || r == '\t' || r == '\n' || r == '\r':
			if !space && b.Len() > 0 {
				b.WriteByte(' ')
			}
			space = true
			continue
		case r < 0x80 && (isAlnum(byte(r)) || r == '-' || r == '(' || r == ')' || r == '[' || r == ']'):
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
		space = false
	}
	out := strings.TrimRight(b.String(), " ")
	if strings.Trim(out, "-") == "" {
		src := p.Data
		if src == "" {
			src = p.URL + p.Text
		}
		return "document-" + hash32(src)
	}
	return out
}

func isDocumentFormat(s string) bool {
	for _, f := range documentFormats {
		if f.format == s {
			return true
		}
	}
	return false
}

func isAlnum(c byte) bool {
	return ('0' <= c && c <= '9') || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z')
}

func hash32(s string) string {
	// FNV-1a, written out so the name costs no allocation beyond the result.
	h := uint32(2166136261)
	for i := 0; i < len(s); i++ {
		h ^= uint32(s[i])
		h *= 16777619
	}
	const digits = "0123456789abcdef"
	var b [8]byte
	for i := 7; i >= 0; i-- {
		b[i] = digits[h&0xf]
		h >>= 4
	}
	return string(b[:])
}
