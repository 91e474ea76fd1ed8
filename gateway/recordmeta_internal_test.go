package gateway

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/convo-go/convo/provider"
)

// marshalMeta is recordMeta as it was written first, by json.Marshal of a
// map: the bytes recordMeta must give.
func marshalMeta(fp, response string, settings json.RawMessage) json.RawMessage {
	if fp == "" && response == "" && settings == nil {
		return nil
	}
	m := map[string]any{}
	if fp != "" {
		m[metaKey] = fp
	}
	if response != "" {
		m[responseKey] = response
	}
	if settings != nil {
		m[RequestMeta] = settings
	}
	meta, _ := json.Marshal(m)
	return meta
}

// settingsFor is settings as settingsMeta makes them (json.Marshal of a
// request), from a string the fuzzer chooses; nil when use is false.
func settingsFor(use bool, s string) json.RawMessage {
	if !use {
		return nil
	}
	b, err := json.Marshal(&provider.Request{CacheKey: s, Stop: []string{s}, MaxTokens: 1024})
	if err != nil {
		panic(err)
	}
	return b
}

func TestRecordMetaAsMarshal(t *testing.T) {
	fp := Fingerprint(nil)
	for _, c := range []struct {
		fp, response string
		settings     bool
		s            string
	}{
		{"", "", false, ""},
		{fp, "", false, ""},
		{"", "resp_0123", false, ""},
		{fp, "resp_0123", true, "be <brief> & \"exact\"\u2028\x01\xff"},
		{"", "", true, ""},
		{"a<b", "c\"d\\e\u2029\x7f\xc3", true, "é"},
		{fp, "", true, "x"},
	} {
		got, want := recordMeta(c.fp, c.response, settingsFor(c.settings, c.s)), marshalMeta(c.fp, c.response, settingsFor(c.settings, c.s))
		if !bytes.Equal(got, want) {
			t.Errorf("recordMeta(%q, %q, %v)\n got %s\nwant %s", c.fp, c.response, c.settings, got, want)
		}
	}
}

func FuzzRecordMeta(f *testing.F) {
	f.Add("", "", false, "")
	f.Add("0123abcdef", "resp_1", true, "a <b> & c")
	f.Add("\x00\xff\u2028", "\"\\", true, "\ud7ff")
	f.Fuzz(func(t *testing.T, fp, response string, use bool, s string) {
		settings := settingsFor(use, s)
		if got, want := recordMeta(fp, response, settings), marshalMeta(fp, response, settings); !bytes.Equal(got, want) {
			t.Fatalf("recordMeta(%q, %q, %s)\n got %s\nwant %s", fp, response, settings, got, want)
		}
	})
}

// settingsMeta encodes a record's settings as json.Marshal does (nil when
// too long to record), and encodes the same settings again only when they
// changed: a request like the last one shares its JSON (the same bytes,
// not a new encoding).
func TestSettingsMetaReused(t *testing.T) {
	temp := 0.5
	schema := json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}}}`)
	tools := func() []provider.Tool {
		return []provider.Tool{{Name: "get_weather", Description: "Weather <now>", Parameters: append(json.RawMessage(nil), schema...)}}
	}
	big := strings.Repeat("k", maxSettingsMeta) // too long to be recorded
	settings := []*provider.Request{
		{MaxTokens: 1024},
		{MaxTokens: 1024},
		{MaxTokens: 1024, Tools: tools()},
		{MaxTokens: 1024, Tools: tools()},
		{MaxTokens: 1024, Tools: tools(), Temperature: &temp},
		{MaxTokens: 1024, Tools: tools(), Temperature: new(float64)},
		{MaxTokens: 1024},
		{MaxTokens: 2048},
		{MaxTokens: 1024, Stop: []string{}},
		{MaxTokens: 1024, Stop: nil},
		{MaxTokens: 1024, CacheKey: big},
		{MaxTokens: 1024, CacheKey: big},
		{MaxTokens: 1024, Stop: nil},
	}
	rc := &recorder{}
	var last json.RawMessage
	for i, s := range settings {
		got := rc.settingsMeta(&record{settings: s})
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if len(want) > maxSettingsMeta {
			want = nil
		}
		if !bytes.Equal(got, want) || (got == nil) != (want == nil) {
			t.Errorf("settings %d: %.80s, want %.80s", i, got, want)
		}
		same := i > 0 && reflect.DeepEqual(s, settings[i-1])
		if want == nil {
			last = nil
			continue
		}
		if shared := last != nil && len(got) > 0 && &got[0] == &last[0]; shared != same {
			t.Errorf("settings %d: JSON shared with the last's %v, want %v", i, shared, same)
		}
		last = got
	}
}
