package gateway

import (
	"bytes"
	"encoding/json"
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
