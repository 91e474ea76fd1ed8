package tokens

import (
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strings"
)

// ErrTruncated is returned (wrapped) by ImageSize when the data ends before
// the header that holds the size.
var ErrTruncated = errors.New("image header truncated")

// maxSide bounds a dimension ImageSize accepts: no format stores more than
// 2^24 (WebP) or 2^31-1 (PNG) and no provider accepts even 2^16, so anything
// larger is a corrupt header.
const maxSide = 1 << 24

// ImageSize reads the width and height of a PNG, JPEG, GIF or WebP image from
// its header, without decoding pixels, and names the format ("png", "jpeg",
// "gif", "webp"). It never panics: anything it cannot read is an error, and
// an error wrapping ErrTruncated means more bytes might hold the answer.
func ImageSize(b []byte) (w, h int, format string, err error) {
	switch {
	case len(b) >= 8 && string(b[:8]) == "\x89PNG\r\n\x1a\n":
		w, h, err = pngSize(b)
		return w, h, "png", err
	case len(b) >= 3 && b[0] == 0xFF && b[1] == 0xD8 && b[2] == 0xFF:
		w, h, err = jpegSize(b)
		return w, h, "jpeg", err
	case len(b) >= 6 && (string(b[:6]) == "GIF87a" || string(b[:6]) == "GIF89a"):
		w, h, err = gifSize(b)
		return w, h, "gif", err
	case len(b) >= 12 && string(b[:4]) == "RIFF" && string(b[8:12]) == "WEBP":
		w, h, err = webpSize(b)
		return w, h, "webp", err
	case len(b) < 12:
		return 0, 0, "", fmt.Errorf("%w: %d bytes cannot tell the format", ErrTruncated, len(b))
	}
	return 0, 0, "", errors.New("not a PNG, JPEG, GIF or WebP image")
}

func checkSize(w, h int) (int, int, error) {
	if w <= 0 || h <= 0 || w > maxSide || h > maxSide {
		return 0, 0, fmt.Errorf("implausible image size %d×%d", w, h)
	}
	return w, h, nil
}

func pngSize(b []byte) (int, int, error) {
	// The IHDR chunk must come first: length 13, type, width, height.
	if len(b) < 24 {
		return 0, 0, fmt.Errorf("%w: PNG needs 24 bytes, have %d", ErrTruncated, len(b))
	}
	if string(b[12:16]) != "IHDR" {
		return 0, 0, errors.New("PNG does not start with an IHDR chunk")
	}
	w := binary.BigEndian.Uint32(b[16:20])
	h := binary.BigEndian.Uint32(b[20:24])
	return checkSize(int(w), int(h))
}

func gifSize(b []byte) (int, int, error) {
	if len(b) < 10 {
		return 0, 0, fmt.Errorf("%w: GIF needs 10 bytes, have %d", ErrTruncated, len(b))
	}
	return checkSize(int(binary.LittleEndian.Uint16(b[6:8])), int(binary.LittleEndian.Uint16(b[8:10])))
}

func webpSize(b []byte) (int, int, error) {
	// The first chunk after "RIFF" size "WEBP" says which bitstream follows.
	need := func(n int) error {
		if len(b) < n {
			return fmt.Errorf("%w: WebP needs %d bytes, have %d", ErrTruncated, n, len(b))
		}
		return nil
	}
	if err := need(16); err != nil {
		return 0, 0, err
	}
	switch string(b[12:16]) {
	case "VP8 ": // lossy: a key frame's start code, then 14-bit sizes
		if err := need(30); err != nil {
			return 0, 0, err
		}
		if b[23] != 0x9d || b[24] != 0x01 || b[25] != 0x2a {
			return 0, 0, errors.New("WebP VP8 chunk without a key frame start code")
		}
		w := int(binary.LittleEndian.Uint16(b[26:28]) & 0x3fff)
		h := int(binary.LittleEndian.Uint16(b[28:30]) & 0x3fff)
		return checkSize(w, h)
	case "VP8L": // lossless: signature 0x2f, then 14-bit width-1 and height-1
		if err := need(25); err != nil {
			return 0, 0, err
		}
		if b[20] != 0x2f {
			return 0, 0, errors.New("WebP VP8L chunk without its signature")
		}
		bits := binary.LittleEndian.Uint32(b[21:25])
		return checkSize(int(bits&0x3fff)+1, int(bits>>14&0x3fff)+1)
	case "VP8X": // extended: 24-bit canvas width-1 and height-1
		if err := need(30); err != nil {
			return 0, 0, err
		}
		w := int(b[24]) | int(b[25])<<8 | int(b[26])<<16
		h := int(b[27]) | int(b[28])<<8 | int(b[29])<<16
		return checkSize(w+1, h+1)
	}
	return 0, 0, fmt.Errorf("WebP with an unknown first chunk %q", b[12:16])
}

func jpegSize(b []byte) (int, int, error) {
	i := 2
	for {
		if i >= len(b) {
			return 0, 0, fmt.Errorf("%w: JPEG ends before its frame header", ErrTruncated)
		}
		if b[i] != 0xFF {
			return 0, 0, fmt.Errorf("JPEG: expected a marker at offset %d", i)
		}
		// Markers may be preceded by any number of 0xFF fill bytes.
		for i < len(b) && b[i] == 0xFF {
			i++
		}
		if i >= len(b) {
			return 0, 0, fmt.Errorf("%w: JPEG ends before its frame header", ErrTruncated)
		}
		marker := b[i]
		i++
		switch {
		case marker == 0x00:
			return 0, 0, fmt.Errorf("JPEG: expected a marker at offset %d", i-2)
		case marker == 0xD8 || marker == 0x01 || marker >= 0xD0 && marker <= 0xD7:
			continue // no length
		case marker == 0xD9 || marker == 0xDA:
			// End of image, or scan data before any frame header.
			return 0, 0, errors.New("JPEG has no frame header before its image data")
		}
		if i+2 > len(b) {
			return 0, 0, fmt.Errorf("%w: JPEG segment length at offset %d", ErrTruncated, i)
		}
		n := int(binary.BigEndian.Uint16(b[i : i+2]))
		if n < 2 {
			return 0, 0, fmt.Errorf("JPEG: segment length %d at offset %d", n, i)
		}
		if isSOF(marker) {
			if i+7 > len(b) {
				return 0, 0, fmt.Errorf("%w: JPEG frame header at offset %d", ErrTruncated, i)
			}
			h := int(binary.BigEndian.Uint16(b[i+3 : i+5]))
			w := int(binary.BigEndian.Uint16(b[i+5 : i+7]))
			return checkSize(w, h)
		}
		i += n
	}
}

// isSOF reports whether a JPEG marker starts a frame (SOF0–SOF15, except
// DHT C4, JPG C8 and DAC CC, which share the range).
func isSOF(m byte) bool {
	return m >= 0xC0 && m <= 0xCF && m != 0xC4 && m != 0xC8 && m != 0xCC
}

// imageSizeBase64 reads the size of an image held as standard base64,
// decoding only as much as the header needs: a short prefix first, the
// whole only for a JPEG whose frame header sits behind large metadata.
func imageSizeBase64(data string) (w, h int, format string, err error) {
	for _, n := range []int{64, 4096, 1 << 16, math.MaxInt} {
		chunk := data
		if n < len(data) {
			chunk = data[:n] // n is a multiple of 4: a whole number of quanta
		}
		b, derr := base64.StdEncoding.DecodeString(strings.TrimRight(chunk, "\r\n"))
		if derr != nil && len(chunk) == len(data) {
			return 0, 0, "", fmt.Errorf("image data is not valid base64: %w", derr)
		}
		if derr != nil {
			continue // a line break or similar inside the prefix: try a longer one
		}
		w, h, format, err = ImageSize(b)
		if err == nil || !errors.Is(err, ErrTruncated) || len(chunk) == len(data) {
			return w, h, format, err
		}
	}
	return 0, 0, "", ErrTruncated
}
