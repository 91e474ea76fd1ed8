package wire

import (
	"testing"

	"github.com/convo-go/convo"
)

// TestSpanConvert: a Gemini span (native "gemini") counts bytes, any other
// characters; each converts to the other against the part's text, and an
// offset past the text keeps its distance beyond the end.
func TestSpanConvert(t *testing.T) {
	text := "a°b€c" // bytes: a 0, ° 1-2, b 3, € 4-6, c 7; 8 bytes, 5 characters
	gem := convo.Citation{Span: &convo.Span{Start: 3, End: 7}, Native: convo.Native{"gemini": []byte(`{}`)}}
	if s := CharSpan(&gem, text); *s != (convo.Span{Start: 2, End: 4}) {
		t.Errorf("bytes 3-7 are characters %v, want 2-4", *s)
	}
	if ByteSpan(&gem, text) != gem.Span {
		t.Error("a Gemini span changed on its way to bytes")
	}
	oai := convo.Citation{Span: &convo.Span{Start: 2, End: 4}}
	if s := ByteSpan(&oai, text); *s != (convo.Span{Start: 3, End: 7}) {
		t.Errorf("characters 2-4 are bytes %v, want 3-7", *s)
	}
	if CharSpan(&oai, text) != oai.Span {
		t.Error("a character span changed on its way to characters")
	}
	if CharSpan(&convo.Citation{}, text) != nil || ByteSpan(&convo.Citation{}, text) != nil {
		t.Error("no span became one")
	}
	past := convo.Citation{Span: &convo.Span{Start: 5, End: 7}}
	if s := ByteSpan(&past, text); *s != (convo.Span{Start: 8, End: 10}) {
		t.Errorf("characters 5-7 past the text are bytes %v, want 8-10", *s)
	}
	past.Native = gem.Native
	past.Span = &convo.Span{Start: 8, End: 10}
	if s := CharSpan(&past, text); *s != (convo.Span{Start: 5, End: 7}) {
		t.Errorf("bytes 8-10 past the text are characters %v, want 5-7", *s)
	}
}
