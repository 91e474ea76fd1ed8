//go:build goexperiment.jsonv2

package growth

import jsonv2 "encoding/json/v2"

func init() {
	v2Engines = append(v2Engines, Engine{
		Name:   "json-v2",
		Decode: func(doc []byte) (any, error) { var d Doc; err := jsonv2.Unmarshal(doc, &d); return &d, err },
		Encode: func(v any) ([]byte, error) { return jsonv2.Marshal(v) },
	})
}
