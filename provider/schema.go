package provider

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/internal/jsonx"
)

// Dialect is a provider's dialect of JSON Schema.
type Dialect string

// The dialects TranslateSchema writes.
const (
	// DialectOpenAIStrict is OpenAI's strict mode (structured outputs and
	// strict function tools): every object has additionalProperties false
	// and lists every property as required, an optional property becomes
	// nullable, and keywords strict mode does not take are left out.
	DialectOpenAIStrict Dialect = "openai-strict"
	// DialectGemini is the OpenAPI subset Gemini's "parameters" and
	// "responseSchema" take: $ref inlined and $defs removed, type lists as
	// "nullable", const as a one-value enum, other keywords left out.
	DialectGemini Dialect = "gemini"
	// DialectOllama is what Ollama's /api/chat keeps of a tool's
	// parameters (its api.ToolFunctionParameters and api.ToolProperty
	// types): type, properties, required, items and $defs at the top;
	// type, description, enum, items, properties and anyOf in a property.
	// Ollama drops everything else before the model sees it.
	DialectOllama Dialect = "ollama"
)

// Limits of TranslateSchema: a schema is refused beyond them, with an error,
// rather than making a provider or convo spend unbounded time.
const (
	// maxSchemaNodes bounds the values of a translated schema, after $ref
	// inlining (a chain of references can double the size at each step).
	maxSchemaNodes = 200_000
	// openAIMaxProperties and openAIMaxDepth are OpenAI's documented limits
	// for strict schemas; beyond them the API refuses the request, so
	// TranslateSchema warns.
	openAIMaxProperties = 5000
	openAIMaxDepth      = 10
)

// openAIStrictKeywords are the keywords OpenAI's strict mode takes.
var openAIStrictKeywords = []string{"type", "properties", "required", "additionalProperties", "items",
	"anyOf", "enum", "const", "$ref", "$defs", "definitions", "description", "title",
	"pattern", "format", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf",
	"minItems", "maxItems"}

// geminiKeywords are the keywords of Gemini's OpenAPI subset.
var geminiKeywords = []string{"type", "format", "title", "description", "nullable", "enum", "maxItems",
	"minItems", "properties", "required", "minProperties", "maxProperties", "minLength", "maxLength",
	"pattern", "example", "anyOf", "propertyOrdering", "default", "items", "minimum", "maximum"}

// ollamaTop and ollamaProperty are the members Ollama's types keep.
var (
	ollamaTop      = []string{"type", "$defs", "items", "required", "properties"}
	ollamaProperty = []string{"anyOf", "type", "items", "description", "enum", "properties"}
)

// ErrSchema is wrapped by the errors of TranslateSchema.
var ErrSchema = errors.New("invalid schema")

// TranslateSchema rewrites the JSON Schema schema in a provider's dialect.
// What the dialect cannot say is a warning (CodeSchemaChanged) whose path
// starts with path ("tools[2].parameters.properties.when.format"); a
// schema that cannot be translated at all ($ref cycles for Gemini, a $ref
// that names nothing, more than 200,000 values after inlining, invalid
// JSON) is an error naming its place. A schema that needs no change is
// returned as it is.
func TranslateSchema(schema []byte, d Dialect, path string) ([]byte, []Warning, error) {
	root, err := parseNode(schema)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w: %w", path, ErrSchema, err)
	}
	t := &translator{dialect: d, root: root}
	var out *node
	switch d {
	case DialectOpenAIStrict:
		out, err = t.strict(root, path, 0)
		if err == nil && t.props > openAIMaxProperties {
			t.warn(path, "%d properties: OpenAI's strict mode takes at most %d", t.props, openAIMaxProperties)
		}
	case DialectGemini:
		out, err = t.gemini(root, path, nil)
	case DialectOllama:
		out = t.ollama(root, path, ollamaTop)
	default:
		return nil, nil, fmt.Errorf("%s: unknown schema dialect %q", path, d)
	}
	if err != nil {
		return nil, t.warns, err
	}
	if !t.changed {
		return schema, t.warns, nil
	}
	return out.append(nil), t.warns, nil
}

// node is a JSON value with object members in order.
type node struct {
	obj   []member // for an object
	arr   []*node  // for an array
	raw   []byte   // for a scalar: its JSON text
	isObj bool
	isArr bool
}

type member struct {
	key string
	val *node
}

func parseNode(b []byte) (*node, error) {
	r := jsonx.NewReader(b, convo.DefaultLimits.MaxDepth)
	n, err := readNode(r)
	if err == nil {
		err = r.ExpectEnd()
	}
	return n, err
}

func readNode(r *jsonx.Reader) (*node, error) {
	switch r.Peek() {
	case jsonx.Object:
		n := &node{isObj: true}
		err := r.ReadObject(func(k []byte) error {
			v, err := readNode(r)
			n.obj = append(n.obj, member{string(k), v})
			return err
		})
		return n, err
	case jsonx.Array:
		n := &node{isArr: true}
		err := r.ReadArray(func(int) error {
			v, err := readNode(r)
			n.arr = append(n.arr, v)
			return err
		})
		return n, err
	}
	raw, err := r.ReadRaw()
	return &node{raw: raw}, err
}

func (n *node) append(b []byte) []byte {
	switch {
	case n.isObj:
		b = append(b, '{')
		for i, m := range n.obj {
			if i > 0 {
				b = append(b, ',')
			}
			b = jsonx.AppendString(b, m.key)
			b = append(b, ':')
			b = m.val.append(b)
		}
		return append(b, '}')
	case n.isArr:
		b = append(b, '[')
		for i, v := range n.arr {
			if i > 0 {
				b = append(b, ',')
			}
			b = v.append(b)
		}
		return append(b, ']')
	}
	return append(b, n.raw...)
}

func (n *node) get(key string) *node {
	if n == nil || !n.isObj {
		return nil
	}
	for _, m := range n.obj {
		if m.key == key {
			return m.val
		}
	}
	return nil
}

// str returns n as a Go string when it is a JSON string.
func (n *node) str() (string, bool) {
	if n == nil || len(n.raw) == 0 || n.raw[0] != '"' {
		return "", false
	}
	s, err := jsonx.NewReader(n.raw, 1).ReadString()
	return s, err == nil
}

func strNode(s string) *node { return &node{raw: jsonx.AppendString(nil, s)} }

type translator struct {
	dialect Dialect
	root    *node
	warns   []Warning
	changed bool
	nodes   int
	props   int
	deep    bool // the nesting warning was given
}

func (t *translator) warn(path, format string, args ...any) {
	t.warns = append(t.warns, WarnCode(CodeSchemaChanged, path, format, args...))
}

func (t *translator) count() error {
	t.nodes++
	if t.nodes > maxSchemaNodes {
		return fmt.Errorf("%w: more than %d values", ErrSchema, maxSchemaNodes)
	}
	return nil
}

// subschemas calls fn for each member of object schema n whose value is a
// schema or holds schemas, replacing it with fn's result.
func (t *translator) subschemas(n *node, path string, fn func(v *node, path string) (*node, error)) error {
	for i := range n.obj {
		m := &n.obj[i]
		p := path + "." + m.key
		var err error
		switch m.key {
		case "properties", "$defs", "definitions":
			if !m.val.isObj {
				continue
			}
			for j := range m.val.obj {
				pm := &m.val.obj[j]
				if pm.val, err = fn(pm.val, p+"."+pm.key); err != nil {
					return err
				}
			}
		case "items", "additionalProperties", "not":
			if m.val.isObj {
				m.val, err = fn(m.val, p)
			}
		case "anyOf", "oneOf", "allOf", "prefixItems":
			if !m.val.isArr {
				continue
			}
			for j := range m.val.arr {
				if m.val.arr[j], err = fn(m.val.arr[j], fmt.Sprintf("%s[%d]", p, j)); err != nil {
					return err
				}
			}
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// strict rewrites n for OpenAI's strict mode.
func (t *translator) strict(n *node, path string, depth int) (*node, error) {
	if err := t.count(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if !n.isObj {
		return n, nil
	}
	if depth > openAIMaxDepth && !t.deep {
		t.warn(path, "nested %d deep: OpenAI's strict mode takes at most %d levels", depth, openAIMaxDepth)
		t.deep = true
	}
	kept := n.obj[:0:0]
	for _, m := range n.obj {
		if !slices.Contains(openAIStrictKeywords, m.key) {
			t.warn(path+"."+m.key, "OpenAI's strict mode has no %q: left out", m.key)
			t.changed = true
			continue
		}
		kept = append(kept, m)
	}
	n = &node{isObj: true, obj: kept}
	if err := t.subschemas(n, path, func(v *node, p string) (*node, error) { return t.strict(v, p, depth+1) }); err != nil {
		return nil, err
	}
	props := n.get("properties")
	if props == nil && !isType(n, "object") {
		return n, nil
	}
	var names []string
	if props != nil && props.isObj {
		t.props += len(props.obj)
		for _, m := range props.obj {
			names = append(names, m.key)
		}
	}
	required := map[string]bool{}
	if req := n.get("required"); req != nil && req.isArr {
		for _, v := range req.arr {
			if s, ok := v.str(); ok {
				required[s] = true
			}
		}
	}
	// Optional properties become required and nullable.
	for j := range names {
		if required[names[j]] {
			continue
		}
		pm := &props.obj[j]
		pm.val = nullable(pm.val)
		t.changed = true
	}
	if len(required) != len(names) || n.get("required") == nil {
		list := &node{isArr: true}
		for _, s := range names {
			list.arr = append(list.arr, strNode(s))
		}
		n.set("required", list)
		t.changed = true
	}
	if ap := n.get("additionalProperties"); ap == nil || string(ap.raw) != "false" {
		if ap != nil {
			t.warn(path+".additionalProperties", "OpenAI's strict mode takes no additional properties: set to false")
		}
		n.set("additionalProperties", &node{raw: []byte("false")})
		t.changed = true
	}
	return n, nil
}

func (n *node) set(key string, v *node) {
	for i := range n.obj {
		if n.obj[i].key == key {
			n.obj[i].val = v
			return
		}
	}
	n.obj = append(n.obj, member{key, v})
}

func isType(n *node, typ string) bool {
	s, ok := n.get("type").str()
	return ok && s == typ
}

// nullable returns schema n that also admits null.
func nullable(n *node) *node {
	if !n.isObj {
		return n
	}
	tp := n.get("type")
	switch {
	case tp != nil && len(tp.raw) > 0:
		if s, _ := tp.str(); s == "null" {
			return n
		}
		c := &node{isObj: true, obj: slices.Clone(n.obj)}
		c.set("type", &node{isArr: true, arr: []*node{tp, strNode("null")}})
		return c
	case tp != nil && tp.isArr:
		for _, v := range tp.arr {
			if s, _ := v.str(); s == "null" {
				return n
			}
		}
		c := &node{isObj: true, obj: slices.Clone(n.obj)}
		c.set("type", &node{isArr: true, arr: append(slices.Clone(tp.arr), strNode("null"))})
		return c
	}
	null := &node{isObj: true, obj: []member{{"type", strNode("null")}}}
	return &node{isObj: true, obj: []member{{"anyOf", &node{isArr: true, arr: []*node{n, null}}}}}
}

// gemini rewrites n in Gemini's OpenAPI subset; refs are the $refs being
// inlined, to find cycles.
func (t *translator) gemini(n *node, path string, refs []string) (*node, error) {
	if err := t.count(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if !n.isObj {
		return n, nil
	}
	if ref, ok := n.get("$ref").str(); ok {
		if slices.Contains(refs, ref) {
			return nil, fmt.Errorf("%s: %w: $ref cycle through %q: Gemini's schemas cannot refer to themselves", path, ErrSchema, ref)
		}
		target, err := t.resolve(ref)
		if err != nil {
			return nil, fmt.Errorf("%s.$ref: %w", path, err)
		}
		t.changed = true
		if len(n.obj) > 1 {
			t.warn(path, "members beside $ref left out: Gemini's schemas have no $ref, it is inlined")
		}
		return t.gemini(target, path, append(refs, ref))
	}
	out := &node{isObj: true}
	for _, m := range n.obj {
		switch {
		case m.key == "$defs" || m.key == "definitions" || m.key == "$schema":
			t.changed = true // inlined where used
		case m.key == "const":
			out.obj = append(out.obj, member{"enum", &node{isArr: true, arr: []*node{m.val}}})
			t.changed = true
		case m.key == "type" && m.val.isArr:
			var types []*node
			null := false
			for _, v := range m.val.arr {
				if s, _ := v.str(); s == "null" {
					null = true
				} else {
					types = append(types, v)
				}
			}
			t.changed = true
			switch len(types) {
			case 0:
				t.warn(path+".type", "Gemini has no null type: left out")
			case 1:
				out.obj = append(out.obj, member{"type", types[0]})
			default:
				alts := &node{isArr: true}
				for _, tp := range types {
					alts.arr = append(alts.arr, &node{isObj: true, obj: []member{{"type", tp}}})
				}
				out.obj = append(out.obj, member{"anyOf", alts})
			}
			if null {
				out.obj = append(out.obj, member{"nullable", &node{raw: []byte("true")}})
			}
		case m.key == "oneOf":
			t.warn(path+".oneOf", "Gemini has no oneOf: sent as anyOf")
			t.changed = true
			out.obj = append(out.obj, member{"anyOf", m.val})
		case m.key == "additionalProperties" && string(m.val.raw) == "false":
			t.changed = true // Gemini's objects take no others anyway
		case !slices.Contains(geminiKeywords, m.key):
			t.warn(path+"."+m.key, "Gemini's schemas have no %q: left out", m.key)
			t.changed = true
		default:
			out.obj = append(out.obj, m)
		}
	}
	err := t.subschemas(out, path, func(v *node, p string) (*node, error) { return t.gemini(v, p, refs) })
	return out, err
}

// resolve finds a local reference ("#/$defs/Node") in the root schema.
func (t *translator) resolve(ref string) (*node, error) {
	if !strings.HasPrefix(ref, "#") {
		return nil, fmt.Errorf("%w: $ref %q is not local to the schema", ErrSchema, ref)
	}
	n := t.root
	if ref == "#" {
		return n, nil
	}
	for _, step := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
		step = strings.ReplaceAll(strings.ReplaceAll(step, "~1", "/"), "~0", "~")
		if n = n.get(step); n == nil {
			return nil, fmt.Errorf("%w: $ref %q names nothing", ErrSchema, ref)
		}
	}
	return n, nil
}

// ollama leaves out of n what Ollama's types do not keep; keep lists the
// members kept at this level. items and $defs are kept whole (Ollama keeps
// them as any JSON).
func (t *translator) ollama(n *node, path string, keep []string) *node {
	if !n.isObj {
		return n
	}
	out := &node{isObj: true}
	for _, m := range n.obj {
		if !slices.Contains(keep, m.key) {
			t.warn(path+"."+m.key, "Ollama keeps no %q in tool parameters: left out", m.key)
			t.changed = true
			continue
		}
		switch m.key {
		case "properties":
			if m.val.isObj {
				props := &node{isObj: true}
				for _, pm := range m.val.obj {
					props.obj = append(props.obj, member{pm.key, t.ollama(pm.val, path+".properties."+pm.key, ollamaProperty)})
				}
				m.val = props
			}
		case "anyOf":
			if m.val.isArr {
				alts := &node{isArr: true}
				for j, v := range m.val.arr {
					alts.arr = append(alts.arr, t.ollama(v, fmt.Sprintf("%s.anyOf[%d]", path, j), ollamaProperty))
				}
				m.val = alts
			}
		}
		out.obj = append(out.obj, m)
	}
	return out
}
