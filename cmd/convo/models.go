package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/convo-go/convo/catalog"
)

// modelsFlagUsage is the help of --models for the commands that take it.
const modelsFlagUsage = "lay the model catalogue in `FILE` over the shipped one (docs/models.md; default $CONVO_MODELS)"

// addModelsFlag registers --models on fs for a command that uses the model
// catalogue.
func addModelsFlag(fs *flag.FlagSet) *string {
	return fs.String("models", "", modelsFlagUsage)
}

// loadModels reads the model catalogue a command uses: the shipped one
// with the file named by flagValue (--models), or by $CONVO_MODELS when
// the flag is empty, laid over it; it also keeps it in e.models for the
// rest of the command. A bad file is an error at once, naming the file and
// the place in it.
//
// tokens and fit also take a file in the older format of
// tokens/models.json (tokenizer families and windows, no "format":
// "convo-catalog/v1"): with factsOK it comes back as facts for the token
// registry, and the catalogue stays the shipped one; other commands refuse
// it.
func (e *env) loadModels(flagValue string, factsOK bool) (cat *catalog.Catalog, facts []byte, err error) {
	path, from := flagValue, "--models "+flagValue
	if path == "" {
		path, from = e.getenv("CONVO_MODELS"), "CONVO_MODELS="+e.getenv("CONVO_MODELS")
	}
	e.models = catalog.Default()
	if path == "" {
		return e.models, nil, nil
	}
	b, err := readLimited(path, catalog.MaxDocument)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", from, err)
	}
	var head struct {
		Format string `json:"format"`
	}
	_ = json.Unmarshal(b, &head) // a broken document is reported by whichever parser reads it
	if head.Format != catalog.Format {
		if factsOK {
			return e.models, b, nil
		}
		return nil, nil, fmt.Errorf("%s: not a model catalogue (format %q, want %q; see docs/models.md)", from, head.Format, catalog.Format)
	}
	d, err := catalog.Parse(bytes.NewReader(b))
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", from, err)
	}
	e.models = catalog.Default().Merge(d)
	return e.models, nil, nil
}

// readLimited reads the file at path, refusing one larger than limit bytes.
func readLimited(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("larger than %d MiB", limit>>20)
	}
	return b, nil
}
