package jsonx

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math/bits"
	"strings"
	"testing"
	"unicode/utf8"
)

// stdString is the reference: encoding/json without HTML escaping.
func stdString(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(s)
	return strings.TrimSuffix(b.String(), "\n")
}

func TestAppendStringMatchesEncodingJSON(t *testing.T) {
	for _, s := range []string{"", "plain", `a"b\c`, "tab\tnl\ncr\r", "\x00\x01\x1f\x7f", "é😀", "<&>", "\u2028\u2029",
		strings.Repeat("abcdefgh", 9) + `"` + strings.Repeat("x", 15), strings.Repeat("é", 20)} {
		got, ok := AppendStringChecked(nil, s)
		// encoding/json escapes U+2028/9; convo need not, both are valid JSON.
		want := strings.NewReplacer(`\u2028`, "\u2028", `\u2029`, "\u2029", `\u007f`, "\x7f").Replace(stdString(s))
		if !ok || string(got) != want {
			t.Errorf("AppendString(%q) = %s, want %s", s, got, want)
		}
	}
	if _, ok := AppendStringChecked(nil, "a\xffb"); ok {
		t.Error("invalid UTF-8 reported as valid")
	}
}

func FuzzAppendString(f *testing.F) {
	f.Add("hello \"world\"\n")
	f.Add(strings.Repeat("x", 17) + "\\")
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := AppendStringChecked(nil, s)
		if ok != utf8.ValidString(s) {
			t.Fatalf("ok=%v for %q", ok, s)
		}
		var back string
		if err := json.Unmarshal(got, &back); err != nil {
			t.Fatalf("invalid JSON %s: %v", got, err)
		}
		if ok && back != s {
			t.Fatalf("round trip %q -> %s -> %q", s, got, back)
		}
		// The strict reader agrees.
		r := NewReader(got, 0)
		rs, err := r.ReadString()
		if err != nil || (ok && rs != s) {
			t.Fatalf("reader: %q %v", rs, err)
		}
	})
}

func TestReaderRejects(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{`{"a":1,"a":2}`, `duplicate key "a"`},
		{`[1,]`, "want JSON value"},
		{`{"a" 1}`, "':' after object key"},
		{`{1:2}`, "want object key"},
		{`"\x"`, `invalid escape`},
		{"\"a\xc3\"", "invalid UTF-8"},
		{`01`, "unexpected data"},
		{`1.`, "no digits after the decimal point"},
		{`1e`, "no digits in the exponent"},
		{`-`, "want number"},
		{`tru`, "invalid literal"},
		{`[nul]`, "invalid literal"},
		{`{"a":true}`, ""},
		{`[[[[`, "nesting deeper than 3 levels"},
		{`{"a":1}x`, "unexpected data"},
		{`"abc`, "unexpected end of input in string"},
	} {
		_, err := Compact([]byte(tt.in), 3)
		if tt.want == "" {
			if err != nil {
				t.Errorf("%q: %v", tt.in, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: got %v, want %q", tt.in, err, tt.want)
		}
	}
}

func TestDuplicateKeysInLargeObjects(t *testing.T) {
	var b strings.Builder
	b.WriteString("{")
	for i := 0; i < 100; i++ {
		b.WriteString(`"k` + strings.Repeat("x", i) + `":1,`)
	}
	b.WriteString(`"kxxxx":2}`)
	if _, err := Compact([]byte(b.String()), 0); err == nil || !strings.Contains(err.Error(), "duplicate") {
		t.Fatalf("got %v", err)
	}
}

func TestCompact(t *testing.T) {
	for in, want := range map[string]string{
		" { \"b\" : [ 1 , 2.50 , true , null ] , \"a\" : \"x y\" } ": `{"b":[1,2.50,true,null],"a":"x y"}`,
		`"\u00e9"`:                 `"\u00e9"`,
		`{"\u0061":1}`:             `{"\u0061":1}`,
		"[\n]":                     `[]`,
		`{"a":{"b":{}}}`:           `{"a":{"b":{}}}`,
		`-0.5e+10`:                 `-0.5e+10`,
		`{"s":"tab\there","n":-1}`: `{"s":"tab\there","n":-1}`,
	} {
		got, err := Compact([]byte(in), 0)
		if err != nil || string(got) != want {
			t.Errorf("Compact(%q) = %s, %v; want %s", in, got, err, want)
		}
		r := NewReader([]byte(in), 0)
		raw, err := r.ReadRaw()
		if err != nil || !json.Valid(raw) {
			t.Errorf("ReadRaw(%q) = %s, %v", in, raw, err)
		}
	}
}

// FuzzReader checks the strict reader against encoding/json: what it
// accepts is valid JSON, and its compaction means the same.
func FuzzReader(f *testing.F) {
	for _, s := range []string{`{"a":[1,2,{"b":null}]}`, `"\ud83d\ude00"`, `[1e5,-0.0,"x"]`, `{"a":1,"a":2}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		out, err := Compact(b, 0)
		if err != nil {
			return
		}
		if !json.Valid(b) || !json.Valid(out) {
			t.Fatalf("accepted invalid JSON %q -> %q", b, out)
		}
		// Numbers are kept as text, so compare them as text too (1e700
		// is valid JSON that no float64 holds).
		var x, y any
		dx, dy := json.NewDecoder(bytes.NewReader(b)), json.NewDecoder(bytes.NewReader(out))
		dx.UseNumber()
		dy.UseNumber()
		if dx.Decode(&x) != nil || dy.Decode(&y) != nil {
			t.Fatal("unmarshal failed")
		}
		bx, _ := json.Marshal(x)
		by, _ := json.Marshal(y)
		if !bytes.Equal(bx, by) {
			t.Fatalf("compaction changed meaning: %s vs %s", bx, by)
		}
		if !Valid(b) {
			t.Fatal("Valid disagrees with Compact")
		}
	})
}

// FuzzSkipAgreesWithRead: validating a string without decoding it accepts
// exactly what decoding it accepts.
func FuzzSkipAgreesWithRead(f *testing.F) {
	for _, s := range []string{`"a\"b"`, `"\u00e9\ud83d\ude00"`, `"\ud800"`, `"\x"`, "\"\xff\"", `"\u12"`, `"\/\b\f\n\r\t"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) == 0 || b[0] != '"' {
			return
		}
		_, errRead := NewReader(b, 0).ReadString()
		errSkip := NewReader(b, 0).Skip()
		if (errRead == nil) != (errSkip == nil) {
			t.Fatalf("%q: read %v, skip %v", b, errRead, errSkip)
		}
	})
}

func TestSkipAllocatesNothing(t *testing.T) {
	doc := []byte(`{"summary":"Cloudy with \"light\" rain \u00e9","n":[1,2,{"k":"v\\w"}]}`)
	var r Reader
	if n := testing.AllocsPerRun(100, func() {
		r.Reset(doc, 0)
		if err := r.Skip(); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Fatalf("Skip allocated %v times", n)
	}
}

func TestReadStringScratchAndRawSpan(t *testing.T) {
	doc := []byte(`["plain","esc\"aped \u00e9",{"a": [1, 2]},{"b":true}]`)
	var r Reader
	want := []string{"plain", "esc\"aped é"}
	if n := testing.AllocsPerRun(50, func() {
		r.Reset(doc, 0)
		err := r.ReadArray(func(i int) error {
			if i < 2 {
				b, err := r.ReadStringScratch()
				if err == nil && string(b) != want[i] {
					t.Fatalf("string %d: %q", i, b)
				}
				return err
			}
			span, compact, err := r.RawSpan()
			if err == nil && (string(span) != [...]string{`{"a": [1, 2]}`, `{"b":true}`}[i-2] || compact != (i == 3)) {
				t.Fatalf("value %d: %q compact %v", i, span, compact)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Fatalf("allocated %v times", n)
	}
}

// special8's lowest marked byte is the first byte a string scanner must
// look at (a control character, '"', '\\' or non-ASCII), for words made
// of bytes around every boundary, each at every position.
func TestSpecial8First(t *testing.T) {
	edges := []byte{0x00, 0x1f, 0x20, 0x21, '"', '#', '[', '\\', ']', 'a', 0x7f, 0x80, 0xc3, 0xff}
	want := func(w [8]byte) int {
		for i, c := range w {
			if c < 0x20 || c == '"' || c == '\\' || c >= 0x80 {
				return i
			}
		}
		return 8
	}
	for _, a := range edges {
		for _, b := range edges {
			for i := range 8 {
				for j := range 8 {
					w := [8]byte{'x', 'x', 'x', 'x', 'x', 'x', 'x', 'x'}
					w[i], w[j] = a, b
					m := special8(binary.LittleEndian.Uint64(w[:]))
					got := 8
					if m != 0 {
						got = bits.TrailingZeros64(m) >> 3
					}
					if got != want(w) || plain8(binary.LittleEndian.Uint64(w[:])) != (want(w) == 8) {
						t.Fatalf("%q: first special byte %d, want %d", w, got, want(w))
					}
				}
			}
		}
	}
}

// TestPlainPrefix checks PlainPrefix against a byte-by-byte scan, for
// strings of every length up to 20 with a special byte at every place.
func TestPlainPrefix(t *testing.T) {
	want := func(b []byte) int {
		for i, c := range b {
			if c < 0x20 || c == '"' || c == '\\' || c >= 0x80 {
				return i
			}
		}
		return len(b)
	}
	for n := range 21 {
		for _, c := range []byte{0x00, 0x1f, '"', '\\', 0x7f, 0x80, 0xff, 'x'} {
			for i := range n {
				b := bytes.Repeat([]byte{'a'}, n)
				b[i] = c
				if got := PlainPrefix(b); got != want(b) {
					t.Fatalf("PlainPrefix(%q) = %d, want %d", b, got, want(b))
				}
			}
		}
	}
}
