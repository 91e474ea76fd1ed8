// Command tiktokengo counts the tokens of its standard input with
// github.com/tiktoken-go/tokenizer; it exists to measure binary size and
// start-up time.
package main

import (
	"fmt"
	"io"
	"os"

	"github.com/tiktoken-go/tokenizer"
)

func main() {
	enc, err := tokenizer.Get(tokenizer.O200kBase)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	b, _ := io.ReadAll(os.Stdin)
	n, _ := enc.Count(string(b))
	fmt.Println(n)
}
