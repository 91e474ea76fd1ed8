package sqlite_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/store"
	"github.com/convo-go/convo/store/sqlite"
)

// Keep a conversation in a SQLite file: create it, append a turn with the
// version you read (a concurrent writer makes that a conflict), load it.
func Example() {
	dir, err := os.MkdirTemp("", "convo-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)

	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(dir, "convo.db"))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer st.Close()

	c, err := st.Create(ctx, store.Conversation{ID: "weather", Title: "Weather"},
		convo.System("You are a weather assistant."), convo.User("Weather in Paris?"))
	if err != nil {
		fmt.Println(err)
		return
	}
	c, err = st.Append(ctx, "", c.ID, c.Version, convo.Assistant("18 °C and sunny."))
	if err != nil {
		fmt.Println(err)
		return
	}
	_, err = st.Append(ctx, "", c.ID, 1, convo.User("stale"))
	fmt.Println(err != nil, c.Version, c.Messages)

	h, _, err := st.Load(ctx, "", c.ID, 0)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(len(h), h[2].Text())
	// Output:
	// true 2 3
	// 3 18 °C and sunny.
}
