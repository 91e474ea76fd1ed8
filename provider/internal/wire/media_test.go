package wire

import "testing"

func TestImageType(t *testing.T) {
	for _, tc := range []struct{ b64, want string }{
		{"iVBORw0KGgoAAAANSUhEUg==", "image/png"},
		{"/9j/4AAQSkZJRg==", "image/jpeg"},
		{"R0lGODlhAQABAIAAAA==", "image/gif"},
		{"R0lGODdhAQABAIAAAA==", "image/gif"},                // GIF87a
		{"UklGRhoAAABXRUJQVlA4IA==", "image/webp"},           // RIFF…WEBP
		{"UklGRhoAAABXQVZFZm10IA==", ""},                     // RIFF…WAVE: audio
		{"Qk0eAAAAAAA=", ""},                                 // BMP: not every provider takes it
		{"iVBO", ""},                                         // too short to tell
		{"", ""},                                             // nothing
		{"iVBORw0KGgo!AAANSUhEUg==", ""},                     // not base64
		{"iVBORw0KGgoAAAANSUhEUgAAAAEAAAAB!!!", "image/png"}, // only the head is decoded
	} {
		if got := ImageType(Head(tc.b64)); got != tc.want {
			t.Errorf("ImageType(Head(%q)) = %q, want %q", tc.b64, got, tc.want)
		}
	}
}

func TestHead(t *testing.T) {
	if h := Head("AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="); len(h) != 18 || h[17] != 17 {
		t.Errorf("Head = %v, want the first 18 bytes", h)
	}
	if !IsRIFF(Head("UklGRhoAAABXQVZFZm10IA=="), "WAVE") || IsRIFF(Head("UklGRhoAAABXQVZF"), "WEBP") {
		t.Error("IsRIFF")
	}
}
