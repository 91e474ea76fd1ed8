package tokens

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"image"
	_ "image/gif" // for image.DecodeConfig in the differential fuzz test
	_ "image/jpeg"
	_ "image/png"
	"os"
	"testing"
)

// Builders of image headers at any size: the files hold no pixels, which is
// all ImageSize may read.

func pngHeader(w, h uint32) []byte {
	b := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR")
	b = binary.BigEndian.AppendUint32(b, w)
	b = binary.BigEndian.AppendUint32(b, h)
	return append(b, 8, 6, 0, 0, 0, 0xde, 0xad, 0xbe, 0xef) // depth, colour type, …, CRC
}

func gifHeader(w, h uint16) []byte {
	b := []byte("GIF89a")
	b = binary.LittleEndian.AppendUint16(b, w)
	b = binary.LittleEndian.AppendUint16(b, h)
	return append(b, 0, 0, 0)
}

// jpegHeader builds SOI, metadata segments of the given sizes, then a
// baseline frame header (SOF0) of w×h.
func jpegHeader(w, h uint16, app ...int) []byte {
	b := []byte{0xFF, 0xD8}
	for _, n := range app {
		b = append(b, 0xFF, 0xE1)
		b = binary.BigEndian.AppendUint16(b, uint16(n+2))
		b = append(b, make([]byte, n)...)
	}
	b = append(b, 0xFF, 0xFF, 0xC0, 0, 17, 8) // a fill byte before the marker
	b = binary.BigEndian.AppendUint16(b, h)
	b = binary.BigEndian.AppendUint16(b, w)
	return append(b, 3, 1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1, 0xFF, 0xD9)
}

func riff(chunk string, payload []byte) []byte {
	b := []byte("RIFF")
	b = binary.LittleEndian.AppendUint32(b, uint32(4+8+len(payload)))
	b = append(b, "WEBP"...)
	b = append(b, chunk...)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(payload)))
	return append(b, payload...)
}

func webpLossy(w, h uint16) []byte {
	p := []byte{0x10, 0x02, 0x00, 0x9d, 0x01, 0x2a} // frame tag, start code
	p = binary.LittleEndian.AppendUint16(p, w)
	p = binary.LittleEndian.AppendUint16(p, h)
	return riff("VP8 ", append(p, 0, 0))
}

func webpLossless(w, h uint32) []byte {
	p := []byte{0x2f}
	p = binary.LittleEndian.AppendUint32(p, (w-1)|(h-1)<<14)
	return riff("VP8L", append(p, 0, 0, 0, 0))
}

func webpExtended(w, h uint32) []byte {
	p := []byte{0x10, 0, 0, 0}
	w, h = w-1, h-1
	p = append(p, byte(w), byte(w>>8), byte(w>>16), byte(h), byte(h>>8), byte(h>>16))
	return riff("VP8X", p)
}

func readFile(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestImageSize(t *testing.T) {
	tests := []struct {
		name   string
		data   []byte
		w, h   int
		format string
	}{
		{"png file", readFile(t, "testdata/images/photo.png"), 300, 200, "png"},
		{"jpeg file", readFile(t, "testdata/images/photo.jpg"), 300, 200, "jpeg"},
		{"gif file", readFile(t, "testdata/images/tiny.gif"), 40, 30, "gif"},
		{"png header", pngHeader(4096, 8192), 4096, 8192, "png"},
		{"gif header", gifHeader(65535, 1), 65535, 1, "gif"},
		{"jpeg header", jpegHeader(2048, 4096), 2048, 4096, "jpeg"},
		{"jpeg behind metadata", jpegHeader(1800, 2400, 65000, 30000), 1800, 2400, "jpeg"},
		{"webp lossy", webpLossy(1024, 768), 1024, 768, "webp"},
		{"webp lossless", webpLossless(16384, 1), 16384, 1, "webp"},
		{"webp extended", webpExtended(5000, 3000), 5000, 3000, "webp"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, h, format, err := ImageSize(tt.data)
			if err != nil || w != tt.w || h != tt.h || format != tt.format {
				t.Fatalf("ImageSize = %d, %d, %q, %v; want %d, %d, %q", w, h, format, err, tt.w, tt.h, tt.format)
			}
			// The same through base64, as images are held in a history.
			w, h, format, err = imageSizeBase64(base64.StdEncoding.EncodeToString(tt.data))
			if err != nil || w != tt.w || h != tt.h || format != tt.format {
				t.Fatalf("imageSizeBase64 = %d, %d, %q, %v; want %d, %d, %q", w, h, format, err, tt.w, tt.h, tt.format)
			}
		})
	}
}

func TestImageSizeErrors(t *testing.T) {
	png := pngHeader(10, 10)
	zeroPNG := pngHeader(0, 10)
	tests := []struct {
		name      string
		data      []byte
		truncated bool
	}{
		{"empty", nil, true},
		{"short", []byte("\x89PN"), true},
		{"text", []byte("this is not an image at all"), false},
		{"png cut", png[:20], true},
		{"png no IHDR", append(append([]byte{}, png[:12]...), "IDAT\x00\x00\x00\x01\x00\x00\x00\x01"...), false},
		{"png zero width", zeroPNG, false},
		{"png huge", pngHeader(1<<31-1, 1), false},
		{"gif cut", []byte("GIF89a\x01\x00"), true},
		{"jpeg cut in metadata", jpegHeader(10, 10, 500)[:300], true},
		{"jpeg without frame", []byte{0xFF, 0xD8, 0xFF, 0xDA, 0, 2}, false},
		{"jpeg bad length", []byte{0xFF, 0xD8, 0xFF, 0xE0, 0, 1, 0, 0}, false},
		{"jpeg junk between segments", []byte{0xFF, 0xD8, 0xFF, 0xE0, 0, 2, 0x12, 0xFF, 0xC0}, false},
		{"webp cut", webpLossy(10, 10)[:25], true},
		{"webp bad start code", func() []byte { b := webpLossy(10, 10); b[23] = 0; return b }(), false},
		{"webp unknown chunk", riff("ALPH", make([]byte, 20)), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, h, _, err := ImageSize(tt.data)
			if err == nil {
				t.Fatalf("ImageSize = %d×%d, want an error", w, h)
			}
			if got := errors.Is(err, ErrTruncated); got != tt.truncated {
				t.Errorf("error %q: truncated = %v, want %v", err, got, tt.truncated)
			}
		})
	}
	if _, _, _, err := imageSizeBase64("not base64!"); err == nil {
		t.Error("imageSizeBase64 of invalid base64: no error")
	}
}

// FuzzImageSize checks that the header reader never panics, that its sizes
// are plausible, and that it agrees with the standard library's
// DecodeConfig wherever both read a size.
func FuzzImageSize(f *testing.F) {
	for _, name := range []string{"photo.png", "photo.jpg", "tiny.gif"} {
		f.Add(readFile(f, "testdata/images/"+name))
	}
	f.Add(pngHeader(1024, 1024))
	f.Add(jpegHeader(640, 480, 40))
	f.Add(webpLossy(10, 20))
	f.Add(webpLossless(30, 40))
	f.Add(webpExtended(50, 60))
	f.Fuzz(func(t *testing.T, b []byte) {
		w, h, format, err := ImageSize(b)
		if err != nil {
			return
		}
		if w <= 0 || h <= 0 || w > maxSide || h > maxSide {
			t.Fatalf("implausible size %d×%d accepted", w, h)
		}
		cfg, stdFormat, stdErr := image.DecodeConfig(bytes.NewReader(b))
		if stdErr == nil && stdFormat == format && (cfg.Width != w || cfg.Height != h) {
			t.Fatalf("%s: ImageSize %d×%d, image.DecodeConfig %d×%d", format, w, h, cfg.Width, cfg.Height)
		}
	})
}

func TestImageCost(t *testing.T) {
	openai := ImageRule{Method: "tile", Base: 85, Tile: 170, Low: 85, Unknown: 1445}
	mini := ImageRule{Method: "tile", Base: 2833, Tile: 5667, Low: 2833, Unknown: 48169}
	patch := ImageRule{Method: "patch", Multiplier: 1, Unknown: 1536}
	patchMini := ImageRule{Method: "patch", Multiplier: 1.62, Unknown: 2489}
	claude := ImageRule{Method: "pixels", Divisor: 750, MaxEdge: 1568, MaxTokens: 1600, Unknown: 1600}
	gemini := ImageRule{Method: "gemini", Tile: 258, Small: 384, Unknown: 1032}
	fixed := ImageRule{Method: "fixed", Tokens: 256, Unknown: 256}
	tests := []struct {
		name   string
		rule   ImageRule
		w, h   int
		detail string
		want   int
	}{
		// OpenAI's worked examples (Images and vision guide).
		{"openai 1024² high", openai, 1024, 1024, "high", 765},
		{"openai 2048×4096 high", openai, 2048, 4096, "high", 1105},
		{"openai 4096×8192 low", openai, 4096, 8192, "low", 85},
		{"openai auto is high", openai, 1024, 1024, "auto", 765},
		{"openai small", openai, 512, 512, "", 255},
		{"openai no upscale", openai, 100, 100, "high", 255},
		// Reported usage at rounding edges: 1453 and 773 billed, 8 of them
		// text framing.
		{"openai 2049×513", openai, 2049, 513, "high", 1445},
		{"openai 2050×513", openai, 2050, 513, "high", 765},
		{"gpt-4o-mini 1024²", mini, 1024, 1024, "high", 25501},
		// Patch examples from the same guide.
		{"patch 1024²", patch, 1024, 1024, "", 1024},
		{"patch 1800×2400", patch, 1800, 2400, "", 1452},
		{"patch mini 1800×2400", patchMini, 1800, 2400, "", 2353},
		{"patch cap", patch, 10000, 10000, "", 1521},
		// Anthropic's table (Vision guide): 200×200 ≈ 54, 1000×1000 ≈ 1334,
		// 1092×1092 ≈ 1590; larger images are scaled to the limits.
		{"claude 200²", claude, 200, 200, "", 54},
		{"claude 1000²", claude, 1000, 1000, "", 1334},
		{"claude 1092²", claude, 1092, 1092, "", 1590},
		{"claude long edge", claude, 3136, 784, "", 820},
		{"claude megapixels", claude, 4000, 4000, "", 1599},
		// Gemini: ≤384 on both sides is one tile; 960×540 crops into 6
		// tiles of 360 pixels.
		{"gemini 384²", gemini, 384, 384, "", 258},
		{"gemini 960×540", gemini, 960, 540, "", 1548},
		{"gemini 1024²", gemini, 1024, 1024, "", 1032},
		{"gemini 4000×3000", gemini, 4000, 3000, "", 258 * 6 * 4},
		{"fixed", fixed, 4000, 3000, "", 256},
		{"unknown size", openai, 0, 0, "high", 1445},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.rule.Cost(tt.w, tt.h, tt.detail); got != tt.want {
				t.Errorf("Cost(%d, %d, %q) = %d, want %d", tt.w, tt.h, tt.detail, got, tt.want)
			}
			if got := tt.rule.Cost(tt.h, tt.w, tt.detail); got != tt.want && tt.w > 0 {
				t.Errorf("Cost(%d, %d, %q) = %d, want %d (rules are symmetric)", tt.h, tt.w, tt.detail, got, tt.want)
			}
		})
	}
}
