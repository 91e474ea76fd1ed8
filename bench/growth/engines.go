package growth

import (
	"encoding/json"

	"github.com/bytedance/sonic"
	"github.com/convo-go/convo"
)

// Engine is one way to read and write the canonical document. Decode reads
// doc into the engine's own representation; Encode writes the value Decode
// returned. A nil Encode means the engine is measured decoding only.
type Engine struct {
	Name   string
	Decode func(doc []byte) (any, error)
	Encode func(v any) ([]byte, error)
}

// Engines returns every engine this build has, convo first. The
// encoding/json/v2 engine is there only when the package is built with
// GOEXPERIMENT=jsonv2 (jsonv2.go).
func Engines() []Engine {
	out := []Engine{
		{
			Name:   "convo",
			Decode: func(doc []byte) (any, error) { return convo.Unmarshal(doc) },
			Encode: func(v any) ([]byte, error) { return convo.Marshal(v.(convo.History)) },
		},
		{
			Name:   "encoding-json",
			Decode: func(doc []byte) (any, error) { var d Doc; err := json.Unmarshal(doc, &d); return &d, err },
			Encode: func(v any) ([]byte, error) { return json.Marshal(v) },
		},
	}
	out = append(out, v2Engines...)
	return append(out,
		Engine{
			Name:   "sonic",
			Decode: func(doc []byte) (any, error) { var d Doc; err := sonic.Unmarshal(doc, &d); return &d, err },
			Encode: func(v any) ([]byte, error) { return sonic.Marshal(v) },
		},
		Engine{
			Name:   "sonic-any",
			Decode: func(doc []byte) (any, error) { var v any; err := sonic.Unmarshal(doc, &v); return v, err },
		},
	)
}

// v2Engines is filled by jsonv2.go when encoding/json/v2 is built in.
var v2Engines []Engine

// InterleavedName is the benchmark name the growth measurement
// (TestInterleaved, run by bench/run.sh) prints its samples under, followed
// by "/n=<size>/<engine>/<op>"; bench/cmd/report reads them.
const InterleavedName = "BenchmarkGrowthInterleaved"

// AloneName is the benchmark name of the same measurement with one engine
// alone in its process (-growth.engines naming one engine): its heap holds
// only that engine's inputs, so a collection cycle costs its slices less
// and the rounds spread less.
const AloneName = "BenchmarkGrowthAlone"

// Sizes are the history lengths of the growth benchmark: three decades, so
// that a cost per message that rises with the length shows.
var Sizes = []int{100, 1000, 10000, 100000}
