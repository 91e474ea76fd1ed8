package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestValidateJSONFailures: validate --json answers with one JSON report
// for every failure, a document that does not decode included, and lists
// every problem it can reach.
func TestValidateJSONFailures(t *testing.T) {
	good := `{"role":"user","parts":[{"type":"text","text":"hi"}]}`
	bad := `{"role":"user","parts":[{"type":"text","text":1}]}`
	call := `{"role":"assistant","parts":[{"type":"tool_call","id":"c","name":"f","args":{}}]}`
	big := writeFile(t, "big.json", "["+strings.Repeat(good+",", 30000)+good+"]")
	tests := []struct {
		name, stdin string
		args        []string
		want        string
	}{
		{"missing file", "", []string{"/no/such/file"},
			`{"messages":0,"problems":[{"path":"","message":"open /no/such/file: no such file or directory","kind":"input"}]}`},
		{"too large", "", []string{"--max-size", "1", big},
			`{"messages":0,"problems":[{"path":"","message":"` + big + ` is 1.5 MiB, more than the limit of 1.0 MiB (raise it with --max-size): too large","kind":"input"}]}`},
		{"not json", "hello", nil,
			`{"messages":0,"problems":[{"path":"","message":"not a convo document: want an object, an array or JSON Lines, got 'h'","kind":"decode"}]}`},
		{"empty envelope format", `{"format":"convo/v9","messages":[]}`, nil,
			`{"messages":0,"problems":[{"path":"format","message":"unsupported format \"convo/v9\" (this reader knows convo/v1)","kind":"decode"}]}`},
		{"every bad message", "[" + bad + "," + good + "," + bad + "]", nil,
			`{"messages":3,"problems":[{"path":"messages[0].parts[0].text","message":"got number, want string (line 1, column 47)","kind":"decode"},` +
				`{"path":"messages[2].parts[0].text","message":"got number, want string (line 1, column 47)","kind":"decode"}]}`},
		{"decode and history problems", "[" + bad + `,{"role":"user","phase":"final","parts":[{"type":"text","text":"x"}]},` + call + `,{"role":"user","parts":[{"type":"text","text":"y"}]}]`, nil,
			`{"messages":4,"problems":[{"path":"messages[0].parts[0].text","message":"got number, want string (line 1, column 47)","kind":"decode"},` +
				`{"path":"messages[1]","message":"phase on a user message (only assistant messages have a phase)"},` +
				`{"path":"messages[2].parts[0]","message":"tool call \"c\" (f) has no result before messages[3]","unpaired":true}]}`},
		{"cut off", "[" + good + ",", nil,
			`{"messages":1,"problems":[{"path":"","message":"unexpected end of input: the document is cut off","kind":"decode"}]}`},
	}
	for _, tt := range tests {
		out, errs, code := runCLI(t, tt.stdin, append([]string{"validate", "--json"}, tt.args...)...)
		if code != 1 || errs != "" || out != tt.want+"\n" {
			t.Errorf("%s: exit %d, stderr %q\n got %s\nwant %s", tt.name, code, errs, out, tt.want)
		}
		var rep validateReport
		if err := json.Unmarshal([]byte(out), &rep); err != nil || len(rep.Problems) == 0 {
			t.Errorf("%s: not a report: %v", tt.name, err)
		}
	}
	// Without --json the first decoding error still ends the check.
	_, errs, code := runCLI(t, "["+bad+","+bad+"]", "validate")
	if code != 1 || strings.Count(errs, "messages[") != 1 {
		t.Errorf("text mode: exit %d: %q", code, errs)
	}
}
