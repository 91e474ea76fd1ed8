package gemini

import (
	"encoding/json"
	"strings"
)

// FromOpenAPI returns the JSON Schema for a schema in Gemini's OpenAPI
// subset (a function declaration's parameters, responseSchema): type names
// in lower case ("OBJECT" is "object") and "nullable": true as a type list
// with "null". Everything else is the same in both.
func FromOpenAPI(schema []byte) ([]byte, error) {
	var v any
	if err := json.Unmarshal(schema, &v); err != nil {
		return nil, err
	}
	return json.Marshal(fromOpenAPI(v))
}

func fromOpenAPI(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, sub := range x {
			switch k {
			case "properties", "$defs", "definitions":
				if m, ok := sub.(map[string]any); ok {
					for name, s := range m {
						m[name] = fromOpenAPI(s)
					}
				}
			case "items", "anyOf", "oneOf", "allOf", "not", "additionalProperties", "prefixItems":
				x[k] = fromOpenAPI(sub)
			}
		}
		if t, ok := x["type"].(string); ok {
			x["type"] = strings.ToLower(t)
		}
		if n, ok := x["nullable"].(bool); ok {
			delete(x, "nullable")
			if t, ok := x["type"].(string); ok && n {
				x["type"] = []any{t, "null"}
			}
		}
		return x
	case []any:
		for i := range x {
			x[i] = fromOpenAPI(x[i])
		}
	}
	return v
}
