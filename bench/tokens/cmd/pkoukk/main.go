// Command pkoukk counts the tokens of its standard input with
// github.com/pkoukk/tiktoken-go and its offline loader; it exists to
// measure binary size and start-up time.
package main

import (
	"fmt"
	"io"
	"os"

	tiktoken "github.com/pkoukk/tiktoken-go"
	loader "github.com/pkoukk/tiktoken-go-loader"
)

func main() {
	tiktoken.SetBpeLoader(loader.NewOfflineLoader())
	enc, err := tiktoken.GetEncoding("o200k_base")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	b, _ := io.ReadAll(os.Stdin)
	fmt.Println(len(enc.EncodeOrdinary(string(b))))
}
