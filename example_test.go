package convo_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"os"
	"strings"

	"github.com/convo-go/convo"
)

// Build a conversation, save it in the canonical format, and read it back.
func Example() {
	h := convo.History{
		convo.System("You are a weather assistant."),
		convo.User("Weather in Paris?"),
		convo.Assistant("", convo.ToolCall("call_1", "get_weather", json.RawMessage(`{"city":"Paris"}`))),
		convo.ToolResults(convo.ToolResult("call_1", "get_weather", `{"temp_c":18}`)),
		convo.Assistant("18 °C and sunny."),
	}
	if err := h.Validate(); err != nil {
		fmt.Println("invalid:", err)
		return
	}
	doc, err := convo.Marshal(h)
	if err != nil {
		fmt.Println(err)
		return
	}
	back, err := convo.Unmarshal(doc)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(back.Equal(h), back[len(back)-1].Text())
	// Output: true 18 °C and sunny.
}

func ExampleMarshal() {
	h := convo.History{convo.User("hi"), convo.Assistant("hello")}
	doc, _ := convo.Marshal(h)
	os.Stdout.Write(doc)
	// Output:
	// {"format":"convo/v1","messages":[
	// {"role":"user","parts":[{"type":"text","text":"hi"}]},
	// {"role":"assistant","parts":[{"type":"text","text":"hello"}]}
	// ]}
}

// A message's encoding written as it is made: a long reply's JSON is
// never whole in memory, only the message is.
func ExampleWriteMessage() {
	reply := convo.Assistant(strings.Repeat("rain ", 100_000)) // 500 KB of text
	var n countingWriter
	if err := convo.WriteMessage(&n, reply); err != nil {
		log.Fatal(err)
	}
	fmt.Println(n.bytes, "bytes in", n.writes, "writes")
	// Output:
	// 500056 bytes in 8 writes
}

// countingWriter counts what is written to it.
type countingWriter struct{ bytes, writes int }

func (w *countingWriter) Write(p []byte) (int, error) {
	w.bytes += len(p)
	w.writes++
	return len(p), nil
}

func ExampleAppendHistory() {
	var buf []byte // reused: once large enough, encoding allocates nothing
	for _, h := range []convo.History{
		{convo.User("hi")},
		{convo.User("hi"), convo.Assistant("hello")},
	} {
		var err error
		if buf, err = convo.AppendHistory(buf[:0], h); err != nil {
			log.Fatal(err)
		}
		fmt.Println(len(buf), "bytes")
	}
	// Output:
	// 91 bytes
	// 154 bytes
}

func ExampleUnmarshal() {
	// JSON Lines, with aliases other tools write.
	doc := `{"role":"human","parts":[{"type":"text","text":"hi"}]}
{"role":"ai","parts":[{"type":"text","text":"hello"}]}`
	h, err := convo.Unmarshal([]byte(doc))
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, m := range h {
		fmt.Println(m.Role, m.Text())
	}
	// Output:
	// user hi
	// assistant hello
}

func ExampleUnmarshal_error() {
	_, err := convo.Unmarshal([]byte(`[{"role":"user","parts":[{"type":"image","media_type":"image/png","data":"not base64!"}]}]`))
	fmt.Println(err)
	// Output: messages[0].parts[0].data: malformed base64 at offset 3
}

func ExampleHistory_Validate() {
	h := convo.History{
		convo.User("Weather?"),
		convo.Assistant("", convo.ToolCall("call_1", "get_weather", json.RawMessage(`{}`))),
		convo.User("Hello?"),
	}
	var ve *convo.ValidationError
	if errors.As(h.Validate(), &ve) {
		for _, p := range ve.Problems {
			fmt.Println(p)
		}
	}
	// Output: messages[1].parts[0]: tool call "call_1" (get_weather) has no result before messages[2] (Options.Repair repairs it when converting)
}

func ExampleHistory_Compact() {
	h := convo.History{
		convo.System("Be brief."),
		convo.User("What is 2+2?"),
		convo.Assistant("4"),
		convo.User("And 3+3?"),
	}
	short, err := h.Compact(2, "The user asked 2+2; the answer was 4.")
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, m := range short {
		fmt.Printf("%s(%d): %s\n", m.Role, m.Compacted, m.Text())
	}
	// Output:
	// system(0): Be brief.
	// summary(2): The user asked 2+2; the answer was 4.
	// user(0): And 3+3?
}

func ExampleHistory_Curated() {
	h := convo.History{
		convo.TurnSystem("Answer in French for this turn."),
		convo.User("Hello"),
		convo.Assistant("Bonjour"),
		convo.ErrorMessage("upstream timeout"),
		convo.User("And now?"),
	}
	for _, m := range h.Curated() {
		fmt.Println(m.Role, m.Text())
	}
	// Output:
	// user Hello
	// assistant Bonjour
	// user And now?
}

func ExampleMessage_WithActorPrefix() {
	m := convo.User("Can we ship today?")
	m.Name = "Alice"
	fmt.Println(m.WithActorPrefix().Text())
	// Output: [Alice] Can we ship today?
}

func ExampleMessage_WithoutReasoning() {
	m := convo.Message{Role: convo.RoleAssistant, Parts: []convo.Part{
		{Type: convo.TypeReasoning, Text: "The user wants a number.", Signature: "EqQB", Provider: "anthropic"},
		convo.Text("42"),
	}}
	fmt.Println(len(m.Parts), len(m.WithoutReasoning().Parts))
	// Output: 2 1
}

func ExampleMessageFromMap() {
	m, err := convo.MessageFromMap(map[string]any{
		"role":  "user",
		"parts": []any{map[string]any{"type": "text", "text": "from YAML"}},
	})
	fmt.Println(m.Text(), err)
	_, err = convo.MessageFromMap(map[string]any{"role": "wizard"})
	fmt.Println(strings.TrimSpace(err.Error()))
	// Output:
	// from YAML <nil>
	// role: unknown role "wizard"
}
