// Package wire holds what the provider codecs do alike with their wire
// formats, mostly the Ollama and LiteRT-LM codecs, whose formats are close
// kin: object members kept verbatim in Native, with null recording a value
// the wire did not have (Members, also used by Anthropic and Bedrock); the
// tool calls of the last assistant message, which the tool results after it
// answer (Calls); recognising images by their magic numbers (ImageType,
// also used by Bedrock); appending JSON values and string pieces; and the
// steps of Encode around provider.PrepareIndexed.
//
// It is internal to the provider codecs, which never import each other:
// what they share lives here.
package wire
