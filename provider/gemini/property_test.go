package gemini

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
	"pgregory.net/rapid"
)

// genValue draws a JSON value for arguments and responses, with the keys
// that matter to the response convention ("output", "error") likely.
func genValue(t *rapid.T, depth int, label string) any {
	kind := rapid.IntRange(0, 5).Draw(t, label+"kind")
	if depth > 2 && kind >= 4 {
		kind = 0
	}
	switch kind {
	case 0:
		return rapid.StringMatching(`[a-zA-Z0-9 é"\\<>&\n]{0,12}`).Draw(t, label+"s")
	case 1:
		return rapid.IntRange(-1000, 1000).Draw(t, label+"n")
	case 2:
		return rapid.Bool().Draw(t, label+"b")
	case 3:
		return nil
	case 4:
		n := rapid.IntRange(0, 3).Draw(t, label+"len")
		a := make([]any, n)
		for i := range a {
			a[i] = genValue(t, depth+1, fmt.Sprintf("%s[%d]", label, i))
		}
		return a
	}
	return genObject(t, depth+1, label)
}

func genObject(t *rapid.T, depth int, label string) map[string]any {
	n := rapid.IntRange(0, 3).Draw(t, label+"keys")
	m := map[string]any{}
	for i := 0; i < n; i++ {
		k := rapid.SampledFrom([]string{"output", "error", "a", "b", "city"}).Draw(t, fmt.Sprintf("%sk%d", label, i))
		m[k] = genValue(t, depth, fmt.Sprintf("%s.%s", label, k))
	}
	return m
}

func genSig(t *rapid.T, label string) string {
	b := rapid.SliceOfN(rapid.Byte(), 1, 24).Draw(t, label)
	return base64.StdEncoding.EncodeToString(b)
}

func maybeSig(t *rapid.T, part map[string]any, label string) map[string]any {
	if rapid.Bool().Draw(t, label+"signed") {
		part["thoughtSignature"] = genSig(t, label+"sig")
	}
	return part
}

func genMedia(t *rapid.T, label string) map[string]any {
	if rapid.Bool().Draw(t, label+"inline") {
		mime := rapid.SampledFrom([]string{"image/png", "audio/wav", "video/mp4", "application/pdf"}).Draw(t, label+"mime")
		return map[string]any{"inlineData": map[string]any{"mimeType": mime, "data": genSig(t, label+"data")}}
	}
	uri := rapid.SampledFrom([]string{FilesPrefix + "v1beta/files/x1", "https://example.com/v.mp4", "gs://b/o.png"}).Draw(t, label+"uri")
	fd := map[string]any{"fileUri": uri}
	if rapid.Bool().Draw(t, label+"hasMime") {
		fd["mimeType"] = "video/mp4"
	}
	return map[string]any{"fileData": fd}
}

// genRequest draws a Gemini request of the shapes real histories have:
// user turns, one or more model contents per step (text, thoughts, signed
// and unsigned parts, empty signed parts, code execution, parallel calls
// with or without ids), and the function responses that answer them, in
// any order and in one or two user contents.
func genRequest(t *rapid.T) map[string]any {
	req := map[string]any{}
	if rapid.Bool().Draw(t, "system") {
		req["systemInstruction"] = map[string]any{"parts": []any{map[string]any{"text": "sys"}}}
	}
	var contents []any
	steps := rapid.IntRange(1, 4).Draw(t, "steps")
	for s := 0; s < steps; s++ {
		l := fmt.Sprintf("s%d.", s)
		user := []any{map[string]any{"text": rapid.String().Draw(t, l+"q")}}
		if rapid.Bool().Draw(t, l+"media") {
			user = append(user, genMedia(t, l+"um"))
		}
		contents = append(contents, map[string]any{"role": "user", "parts": user})

		type call struct {
			id, name string
		}
		var calls []call
		withIDs := rapid.Bool().Draw(t, l+"ids")
		nmodel := rapid.IntRange(1, 2).Draw(t, l+"contents")
		for c := 0; c < nmodel; c++ {
			var parts []any
			n := rapid.IntRange(1, 4).Draw(t, fmt.Sprintf("%sc%dn", l, c))
			for k := 0; k < n; k++ {
				pl := fmt.Sprintf("%sc%dp%d.", l, c, k)
				switch rapid.IntRange(0, 6).Draw(t, pl+"kind") {
				case 0:
					parts = append(parts, maybeSig(t, map[string]any{"text": rapid.String().Draw(t, pl+"text")}, pl))
				case 1:
					parts = append(parts, maybeSig(t, map[string]any{"text": rapid.String().Draw(t, pl+"text"), "thought": true}, pl))
				case 2:
					parts = append(parts, map[string]any{"text": "", "thoughtSignature": genSig(t, pl+"sig")})
				case 3:
					parts = append(parts, maybeSig(t, genMedia(t, pl), pl))
				case 4:
					parts = append(parts, map[string]any{"executableCode": map[string]any{"language": "PYTHON", "code": "print(1)"}})
				default:
					name := rapid.SampledFrom([]string{"f", "g"}).Draw(t, pl+"name")
					fc := map[string]any{"name": name}
					if rapid.Bool().Draw(t, pl+"args") {
						fc["args"] = genObject(t, 0, pl+"args")
					}
					id := ""
					if withIDs {
						id = fmt.Sprintf("id_%d_%d_%d", s, c, k)
						fc["id"] = id
					}
					calls = append(calls, call{id, name})
					parts = append(parts, maybeSig(t, map[string]any{"functionCall": fc}, pl))
				}
			}
			contents = append(contents, map[string]any{"role": "model", "parts": parts})
		}
		if len(calls) == 0 {
			continue
		}
		order := rapid.Permutation(calls).Draw(t, l+"order")
		var responses []any
		for k, c := range order {
			rl := fmt.Sprintf("%sr%d.", l, k)
			fr := map[string]any{"name": c.name, "response": genObject(t, 0, rl+"resp")}
			if c.id != "" {
				fr["id"] = c.id
			}
			if rapid.IntRange(0, 3).Draw(t, rl+"media") == 0 {
				fr["parts"] = []any{genMedia(t, rl+"m")}
			}
			responses = append(responses, map[string]any{"functionResponse": fr})
		}
		split := rapid.IntRange(0, len(responses)).Draw(t, l+"split")
		if split > 0 && split < len(responses) {
			contents = append(contents, map[string]any{"role": "user", "parts": responses[:split]})
			responses = responses[split:]
		}
		if rapid.Bool().Draw(t, l+"followUp") {
			responses = append(responses, map[string]any{"text": "and then?"})
		}
		contents = append(contents, map[string]any{"role": "user", "parts": responses})
	}
	req["contents"] = contents
	return req
}

// TestRoundTripProperty: every generated request decodes into a valid
// history and encodes back to the same conversation, signatures on the same
// parts, no id invented, every content boundary kept.
func TestRoundTripProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		req := genRequest(t)
		body, err := json.Marshal(req)
		if err != nil {
			t.Fatal(err)
		}
		h, warns, err := GenerateContent().Decode(body, provider.Options{})
		if err != nil {
			t.Fatalf("decode: %v\n%s", err, body)
		}
		if len(warns) > 0 {
			t.Fatalf("decode warnings: %v", warns)
		}
		if err := h.Validate(); err != nil {
			t.Fatalf("decoded history is invalid: %v\n%s", err, body)
		}
		canon, err := convo.Marshal(h)
		if err != nil {
			t.Fatal(err)
		}
		h, err = convo.Unmarshal(canon)
		if err != nil {
			t.Fatal(err)
		}
		out, warns, err := GenerateContent().Encode(h, provider.Options{})
		if err != nil {
			t.Fatalf("encode: %v\n%s", err, body)
		}
		if len(warns) > 0 {
			t.Fatalf("encode warnings: %v", warns)
		}
		var got, want any
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(body, &want); err != nil {
			t.Fatal(err)
		}
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(want)
		if string(g) != string(w) { // json.Marshal sorts map keys
			t.Fatalf("round trip differs\n got: %s\nwant: %s", g, w)
		}
	})
}

// delta is one part of a generated stream, as sent.
type delta struct {
	kind string // text, thought, call, image
	text string
	sig  string
}

// TestStreamProperty streams generated replies — text and thought deltas,
// signed or not, empty parts carrying only a signature, calls and images,
// several parts per chunk or one — and checks what the accumulator
// promises: no text lost or reordered, every signature kept once, in order,
// on a part holding exactly the text it came with, and unsigned runs joined
// as far as they go.
func TestStreamProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(1, 30).Draw(t, "deltas")
		var deltas []delta
		for i := 0; i < n; i++ {
			l := fmt.Sprintf("d%d.", i)
			d := delta{kind: rapid.SampledFrom([]string{"text", "text", "thought", "thought", "call", "image"}).Draw(t, l+"kind")}
			if d.kind == "text" || d.kind == "thought" {
				d.text = rapid.SampledFrom([]string{"", "a", "bc", " d", "é\n"}).Draw(t, l+"text")
			}
			if rapid.IntRange(0, 3).Draw(t, l+"signed") == 0 {
				d.sig = genSig(t, l+"sig")
			}
			deltas = append(deltas, d)
		}
		// Pack the deltas into chunks of one to three parts.
		var events []provider.Event
		for i := 0; i < len(deltas); {
			k := rapid.IntRange(1, 3).Draw(t, fmt.Sprintf("chunk%d", len(events)))
			var parts []any
			for ; k > 0 && i < len(deltas); k, i = k-1, i+1 {
				d := deltas[i]
				var p map[string]any
				switch d.kind {
				case "text":
					p = map[string]any{"text": d.text}
				case "thought":
					p = map[string]any{"text": d.text, "thought": true}
				case "call":
					p = map[string]any{"functionCall": map[string]any{"name": "f", "args": map[string]any{"i": i}}}
				case "image":
					p = map[string]any{"inlineData": map[string]any{"mimeType": "image/png", "data": "iVBO"}}
				}
				if d.sig != "" {
					p["thoughtSignature"] = d.sig
				}
				parts = append(parts, p)
			}
			cand := map[string]any{"content": map[string]any{"role": "model", "parts": parts}}
			if i == len(deltas) {
				cand["finishReason"] = "STOP"
			}
			b, _ := json.Marshal(map[string]any{"candidates": []any{cand}, "responseId": "r"})
			events = append(events, provider.Event{Data: b})
		}
		acc := GenerateContent().NewAccumulator(provider.Options{})
		for _, ev := range events {
			if err := acc.Add(ev); err != nil {
				t.Fatal(err)
			}
		}
		m, _, err := acc.Message()
		if err != nil {
			t.Fatal(err)
		}

		var wantText, wantThought, gotText, gotThought string
		var wantSigs, gotSigs []string
		for _, d := range deltas {
			switch d.kind {
			case "text":
				wantText += d.text
			case "thought":
				wantThought += d.text
			}
			if d.sig != "" {
				wantSigs = append(wantSigs, d.kind+":"+d.text+":"+d.sig)
			}
		}
		for j, p := range m.Parts {
			kind, sig := "", ""
			switch p.Type {
			case convo.TypeText:
				kind, sig = "text", sigOf(p)
				gotText += p.Text
			case convo.TypeReasoning:
				kind, sig = "thought", p.Signature
				gotThought += p.Text
			case convo.TypeToolCall:
				kind, sig = "call", sigOf(p)
			case convo.TypeImage:
				kind, sig = "image", sigOf(p)
			}
			if sig != "" {
				gotSigs = append(gotSigs, kind+":"+p.Text+":"+sig)
			} else if j > 0 && (kind == "text" || kind == "thought") {
				prev := m.Parts[j-1]
				if prev.Type == p.Type && prev.Native == nil && prev.Signature == "" {
					t.Fatalf("parts %d and %d are unsigned %s runs left apart", j-1, j, kind)
				}
			}
		}
		if gotText != wantText || gotThought != wantThought {
			t.Fatalf("text %q / %q, want %q / %q", gotText, gotThought, wantText, wantThought)
		}
		if fmt.Sprint(gotSigs) != fmt.Sprint(wantSigs) {
			t.Fatalf("signatures\n got %v\nwant %v", gotSigs, wantSigs)
		}
	})
}

func sigOf(p convo.Part) string {
	v := nativeMember(p.Native, "thoughtSignature")
	if v == nil {
		return ""
	}
	var s string
	json.Unmarshal(v, &s)
	return s
}
