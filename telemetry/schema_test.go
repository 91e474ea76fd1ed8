package telemetry

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strings"
)

// A validator for the subset of JSON Schema (2020-12) the GenAI semantic
// conventions' message schemas use: type, const, enum, required,
// properties, items, anyOf, oneOf, $ref into $defs. One rule is added: in an
// anyOf or oneOf of parts, a part whose "type" equals the const "type" of
// one alternative is checked against that alternative alone — the
// discriminator the earlier versions of the schemas declared
// (discriminator.propertyName "type"), without which the GenericPart
// alternative would let any malformed text or tool_call part through.
type schema struct {
	defs map[string]json.RawMessage
}

func loadSchema(path string) (*schema, json.RawMessage, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	var doc struct {
		Defs map[string]json.RawMessage `json:"$defs"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	return &schema{defs: doc.Defs}, b, nil
}

type node struct {
	Ref        string                     `json:"$ref"`
	Type       json.RawMessage            `json:"type"`
	Const      json.RawMessage            `json:"const"`
	Enum       []json.RawMessage          `json:"enum"`
	Required   []string                   `json:"required"`
	Properties map[string]json.RawMessage `json:"properties"`
	Items      json.RawMessage            `json:"items"`
	AnyOf      []json.RawMessage          `json:"anyOf"`
	OneOf      []json.RawMessage          `json:"oneOf"`
}

func (s *schema) resolve(raw json.RawMessage) (node, error) {
	var n node
	if err := json.Unmarshal(raw, &n); err != nil {
		return n, err
	}
	for n.Ref != "" {
		name, ok := strings.CutPrefix(n.Ref, "#/$defs/")
		if !ok || s.defs[name] == nil {
			return n, fmt.Errorf("unknown $ref %q", n.Ref)
		}
		n = node{}
		if err := json.Unmarshal(s.defs[name], &n); err != nil {
			return n, err
		}
	}
	return n, nil
}

// validate checks the JSON value v against the schema raw; path names v.
func (s *schema) validate(raw json.RawMessage, v any, path string) error {
	n, err := s.resolve(raw)
	if err != nil {
		return fmt.Errorf("%s: schema: %w", path, err)
	}
	if len(n.Type) > 0 {
		var t string
		if json.Unmarshal(n.Type, &t) != nil {
			return fmt.Errorf("%s: schema: type lists are not supported", path)
		}
		if !hasType(v, t) {
			return fmt.Errorf("%s: want %s, got %s", path, t, typeOf(v))
		}
	}
	if len(n.Const) > 0 && !sameJSON(n.Const, v) {
		return fmt.Errorf("%s: want %s", path, n.Const)
	}
	if n.Enum != nil {
		ok := false
		for _, e := range n.Enum {
			ok = ok || sameJSON(e, v)
		}
		if !ok {
			return fmt.Errorf("%s: %v is not one of the enum", path, v)
		}
	}
	if obj, ok := v.(map[string]any); ok {
		for _, r := range n.Required {
			if _, ok := obj[r]; !ok {
				return fmt.Errorf("%s: missing required %q", path, r)
			}
		}
		for k, ps := range n.Properties {
			if pv, ok := obj[k]; ok {
				if err := s.validate(ps, pv, path+"."+k); err != nil {
					return err
				}
			}
		}
	}
	if arr, ok := v.([]any); ok && len(n.Items) > 0 {
		for i, x := range arr {
			if err := s.validate(n.Items, x, fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	}
	for k, alts := range [][]json.RawMessage{n.AnyOf, n.OneOf} {
		if alts == nil {
			continue
		}
		if alt := s.discriminated(alts, v); alt != nil {
			if err := s.validate(alt, v, path); err != nil {
				return err
			}
			continue
		}
		matched := 0
		var firstErr error
		for _, a := range alts {
			if err := s.validate(a, v, path); err == nil {
				matched++
			} else if firstErr == nil {
				firstErr = err
			}
		}
		if matched == 0 {
			return fmt.Errorf("%s: matches no alternative (first: %v)", path, firstErr)
		}
		if k == 1 && matched > 1 {
			return fmt.Errorf("%s: matches %d alternatives of a oneOf", path, matched)
		}
	}
	return nil
}

// discriminated returns the alternative whose properties.type.const equals
// v's "type", if any.
func (s *schema) discriminated(alts []json.RawMessage, v any) json.RawMessage {
	obj, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	t, ok := obj["type"].(string)
	if !ok {
		return nil
	}
	for _, a := range alts {
		n, err := s.resolve(a)
		if err != nil || n.Properties["type"] == nil {
			continue
		}
		var tp node
		if json.Unmarshal(n.Properties["type"], &tp) == nil && len(tp.Const) > 0 && sameJSON(tp.Const, t) {
			return a
		}
	}
	return nil
}

func hasType(v any, t string) bool {
	switch t {
	case "object":
		_, ok := v.(map[string]any)
		return ok
	case "array":
		_, ok := v.([]any)
		return ok
	case "string":
		_, ok := v.(string)
		return ok
	case "number":
		_, ok := v.(float64)
		return ok
	case "integer":
		f, ok := v.(float64)
		return ok && f == math.Trunc(f)
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "null":
		return v == nil
	}
	return false
}

func typeOf(v any) string {
	switch v.(type) {
	case map[string]any:
		return "object"
	case []any:
		return "array"
	case string:
		return "string"
	case float64:
		return "number"
	case bool:
		return "boolean"
	case nil:
		return "null"
	}
	return fmt.Sprintf("%T", v)
}

func sameJSON(raw json.RawMessage, v any) bool {
	var x any
	if json.Unmarshal(raw, &x) != nil {
		return false
	}
	a, _ := json.Marshal(x)
	b, _ := json.Marshal(v)
	return string(a) == string(b)
}

// checkSchema validates the JSON document doc against the schema file.
func checkSchema(file string, doc []byte) error {
	s, root, err := loadSchema("testdata/semconv/" + file)
	if err != nil {
		return err
	}
	var v any
	if err := json.Unmarshal(doc, &v); err != nil {
		return err
	}
	return s.validate(root, v, "$")
}
