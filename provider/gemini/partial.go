package gemini

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/convo-go/convo/internal/jsonx"
)

// Streamed function-call arguments. With streamFunctionCallArguments on
// (Vertex AI and Gemini 3), a call arrives in pieces: a functionCall with
// its name and willContinue:true, then name-less functionCalls whose
// partialArgs each set one value at a JSON path ($.city, $.stops[0].name),
// a string value possibly split over several pieces (willContinue on the
// partial arg), and an empty functionCall (no willContinue) that closes it.
// The accumulator assembles the arguments into one args object.

// partialArg is one partialArgs element as read.
type partialArg struct {
	path  string
	value []byte // the JSON value: a quoted string, a number, true/false, null
	str   string // for a string value, its text
	isStr bool
	cont  bool // willContinue: the next piece for this path continues the string
}

// readPartialArgs reads a partialArgs array.
func readPartialArgs(r *jsonx.Reader) ([]partialArg, error) {
	var out []partialArg
	err := r.ReadArray(func(i int) error {
		var a partialArg
		n := 0
		err := r.ReadObject(func(key []byte) error {
			switch string(key) {
			case "jsonPath", "json_path":
				s, err := r.ReadString()
				a.path = s
				return err
			case "willContinue", "will_continue":
				b, err := r.ReadBool()
				a.cont = b
				return err
			case "stringValue", "string_value":
				n++
				s, err := r.ReadString()
				a.str, a.isStr = s, true
				a.value = jsonx.AppendString(nil, s)
				return err
			case "numberValue", "number_value":
				n++
				if r.Peek() != jsonx.Number {
					return r.Errorf("numberValue must be a number, got %s", r.Peek())
				}
				raw, err := r.ReadRaw()
				a.value = raw
				return err
			case "boolValue", "bool_value":
				n++
				b, err := r.ReadBool()
				a.value = []byte(strconv.FormatBool(b))
				return err
			case "nullValue", "null_value":
				n++
				a.value = []byte("null")
				return r.Skip()
			}
			return r.Skip() // a newer member: the value is what matters
		})
		if err == nil && a.path == "" {
			err = errors.New("partial argument has no jsonPath")
		}
		if err == nil && n != 1 {
			err = fmt.Errorf("partial argument at %s has %d values, want one", a.path, n)
		}
		if err != nil {
			return fmt.Errorf("partialArgs[%d]: %w", i, err)
		}
		out = append(out, a)
		return nil
	})
	return out, err
}

// argNode is one value of arguments being assembled: an object (keys in
// the order first set), an array, or a scalar.
type argNode struct {
	kind  byte // '{', '[' or 0 for a scalar
	keys  []string
	kids  map[string]*argNode
	elems []*argNode
	value []byte           // a finished scalar
	str   *strings.Builder // a string still arriving
}

// argsBuilder assembles one call's arguments from partial args.
type argsBuilder struct {
	root *argNode
	open *argNode // the string node the last piece left open, if any
}

func newArgsBuilder() *argsBuilder {
	return &argsBuilder{root: &argNode{kind: '{', kids: map[string]*argNode{}}}
}

// seed starts from the arguments the opening functionCall carried, if
// any: each member is kept as a whole value.
func (b *argsBuilder) seed(args []byte) error {
	if args == nil {
		return nil
	}
	r := jsonx.NewReader(args, 0)
	return r.ReadObject(func(key []byte) error {
		raw, err := r.ReadRaw()
		if err != nil {
			return err
		}
		k := string(key)
		b.root.keys = append(b.root.keys, k)
		b.root.kids[k] = &argNode{value: raw}
		return nil
	})
}

// apply sets the value of one partial arg.
func (b *argsBuilder) apply(a partialArg) error {
	steps, err := parsePath(a.path)
	if err != nil {
		return err
	}
	n := b.root
	for i, s := range steps {
		last := i == len(steps)-1
		n, err = n.child(s, last)
		if err != nil {
			return fmt.Errorf("%s: %w", a.path, err)
		}
	}
	switch {
	case a.isStr && n == b.open && n.str != nil:
		n.str.WriteString(a.str) // the string goes on
	case a.isStr:
		n.value, n.str = nil, &strings.Builder{}
		n.str.WriteString(a.str)
	default:
		n.value, n.str = a.value, nil
	}
	b.open = nil
	if a.isStr && a.cont {
		b.open = n
	}
	return nil
}

// prefix returns the arguments so far as the JSON text they begin with:
// without the brackets still to close, and without the closing quote of a
// string still arriving. While pieces come in path order (as Gemini sends
// them) it is a prefix of the final arguments.
func (b *argsBuilder) prefix() string {
	s := b.root.json(nil)
	s = bytes.TrimRight(s, "}]")
	if b.open != nil {
		s = s[:len(s)-1] // the string's closing quote
	}
	return string(s)
}

// step is one step of a JSON path: a member name or an array index.
type step struct {
	name  string
	index int // -1 for a name
}

// parsePath reads the JSON paths Gemini sends: $ followed by .name,
// ['name'] / ["name"] and [index] steps.
func parsePath(p string) ([]step, error) {
	if !strings.HasPrefix(p, "$") {
		return nil, fmt.Errorf("jsonPath %q does not start with $", p)
	}
	var out []step
	rest := p[1:]
	for rest != "" {
		switch {
		case rest[0] == '.':
			rest = rest[1:]
			end := strings.IndexAny(rest, ".[")
			if end < 0 {
				end = len(rest)
			}
			if end == 0 {
				return nil, fmt.Errorf("jsonPath %q has an empty member name", p)
			}
			out = append(out, step{name: rest[:end], index: -1})
			rest = rest[end:]
		case strings.HasPrefix(rest, "['") || strings.HasPrefix(rest, `["`):
			q := rest[1]
			end := strings.IndexByte(rest[2:], q)
			if end < 0 || len(rest) < end+4 || rest[end+3] != ']' {
				return nil, fmt.Errorf("jsonPath %q has an unclosed quoted name", p)
			}
			out = append(out, step{name: rest[2 : end+2], index: -1})
			rest = rest[end+4:]
		case rest[0] == '[':
			end := strings.IndexByte(rest, ']')
			if end < 0 {
				return nil, fmt.Errorf("jsonPath %q has an unclosed index", p)
			}
			i, err := strconv.Atoi(rest[1:end])
			if err != nil || i < 0 || i > maxArgIndex {
				return nil, fmt.Errorf("jsonPath %q has a bad index %q", p, rest[1:end])
			}
			out = append(out, step{index: i})
			rest = rest[end+1:]
		default:
			return nil, fmt.Errorf("jsonPath %q is not understood at %q", p, rest)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("jsonPath %q names the arguments themselves, not a value in them", p)
	}
	return out, nil
}

// maxArgIndex bounds an array index in a path, so a hostile stream cannot
// make the accumulator allocate a huge array.
const maxArgIndex = 1 << 16

// child returns the node at s under n, creating it (and n's container kind)
// as needed. A leaf is a scalar; a node on the way is a container, whose
// kind the next step decides.
func (n *argNode) child(s step, leaf bool) (*argNode, error) {
	want := byte('{')
	if s.index >= 0 {
		want = '['
	}
	if n.kind == 0 && n.value == nil && n.str == nil {
		n.kind = want // a fresh node becomes the container its step needs
		if want == '{' {
			n.kids = map[string]*argNode{}
		}
	}
	if n.kind != want {
		return nil, errors.New("the path needs an object where an array or a value was, or the reverse")
	}
	var c *argNode
	if want == '{' {
		c = n.kids[s.name]
		if c == nil {
			c = &argNode{}
			n.kids[s.name] = c
			n.keys = append(n.keys, s.name)
		}
	} else {
		for len(n.elems) <= s.index {
			n.elems = append(n.elems, &argNode{})
		}
		c = n.elems[s.index]
	}
	if !leaf && c.kind == 0 && (c.value != nil || c.str != nil) {
		return nil, errors.New("the path goes through a value")
	}
	if leaf && c.kind != 0 {
		return nil, errors.New("the path sets a value where an object or an array is")
	}
	return c, nil
}

// json appends the arguments as compact JSON.
func (n *argNode) json(dst []byte) []byte {
	switch n.kind {
	case '{':
		dst = append(dst, '{')
		for i, k := range n.keys {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = jsonx.AppendString(dst, k)
			dst = append(dst, ':')
			dst = n.kids[k].json(dst)
		}
		return append(dst, '}')
	case '[':
		dst = append(dst, '[')
		for i, e := range n.elems {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = e.json(dst)
		}
		return append(dst, ']')
	}
	switch {
	case n.str != nil:
		return jsonx.AppendString(dst, n.str.String())
	case n.value != nil:
		return append(dst, n.value...)
	}
	return append(dst, "null"...) // an array element no piece set
}
