// Package tokens counts the tokens a conversation takes in a request to a
// model, so that it can be fitted to the model's context window.
//
// OpenAI models are counted exactly and offline: the real BPE vocabulary
// (o200k_base for gpt-4o, gpt-4.1, gpt-5 and the o-series, cl100k_base for
// gpt-4 and gpt-3.5-turbo, both embedded in the binary) plus the chat
// format's published framing — 3 tokens per message, 1 per name, 3 to prime
// the reply — and tool-call names and arguments. Other families (Anthropic,
// Gemini, Bedrock-hosted and local models) publish no offline tokenizer;
// their counts are estimates with a documented error bound, and every
// Result says which it is. Images are counted with each provider's
// published formula from the size read in the image header (PNG, JPEG, GIF,
// WebP) without decoding pixels.
//
// Model facts (context window, maximum output, tokenizer, family) are data:
// models.json, embedded, which callers extend or override with
// Registry.Load. docs/tokens.md gives the sources of every rule and number.
//
//	c, err := tokens.NewCounter("gpt-4o", tokens.Options{})
//	if err != nil { … } // an unknown model lists the known families
//	r := c.Count(history)
//	fmt.Println(r.Tokens, r.Exact)
package tokens
