package server

import (
	"maps"
	"strings"
	"testing"
)

func TestParseTokens(t *testing.T) {
	tests := []struct {
		name, in string
		want     map[string]string
		err      string
	}{
		{name: "empty", in: "", want: map[string]string{}},
		{name: "pairs", in: "tok1 alice\n\n# comment\n  tok2\tbob  \n", want: map[string]string{"tok1": "alice", "tok2": "bob"}},
		{name: "crlf", in: "tok1 alice\r\ntok2 bob\r\n", want: map[string]string{"tok1": "alice", "tok2": "bob"}},
		{name: "one field", in: "tok1 alice\ntok2\n", err: "line 2: want \"TOKEN TENANT\", got 1 fields"},
		{name: "three fields", in: "tok1 alice bob\n", err: "line 1: want \"TOKEN TENANT\", got 3 fields"},
		{name: "duplicate", in: "tok1 alice\ntok1 bob\n", err: "line 2: token for tenant \"bob\" listed twice"},
		{name: "control character", in: "tok1 al\x01ice\n", err: "line 1: tenant \"al\\x01ice\": has a space or control character"},
		{name: "long tenant", in: "tok1 " + strings.Repeat("t", 201) + "\n", err: "line 1: tenant \"tttttttttttttttttttt\"...: longer than 200 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseTokens(strings.NewReader(tt.in))
			if tt.err != "" {
				if err == nil || err.Error() != tt.err {
					t.Fatalf("error %v, want %q", err, tt.err)
				}
				if strings.Contains(err.Error(), "tok1") {
					t.Errorf("error %q shows the token", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !maps.Equal(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestParseTokenList(t *testing.T) {
	tests := []struct {
		in   string
		want map[string]string
		err  string
	}{
		{in: "", want: map[string]string{}},
		{in: "tok1=tenantA,tok2=tenantB", want: map[string]string{"tok1": "tenantA", "tok2": "tenantB"}},
		{in: " tok1 = tenantA , ,tok2=tenantB,", want: map[string]string{"tok1": "tenantA", "tok2": "tenantB"}},
		{in: "tok1=a=b", want: map[string]string{"tok1": "a=b"}}, // the first = separates
		{in: "tok1", err: "entry 1: want TOKEN=TENANT"},
		{in: "tok1=a,tok1=b", err: "entry 2: token for tenant \"b\" listed twice"},
		{in: "=a", err: "entry 1: empty token"},
		{in: "tok1=", err: "entry 1: empty tenant"},
	}
	for _, tt := range tests {
		got, err := ParseTokenList(tt.in)
		if tt.err != "" {
			if err == nil || err.Error() != tt.err {
				t.Errorf("ParseTokenList(%q): error %v, want %q", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseTokenList(%q): %v", tt.in, err)
			continue
		}
		if !maps.Equal(got, tt.want) {
			t.Errorf("ParseTokenList(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}
