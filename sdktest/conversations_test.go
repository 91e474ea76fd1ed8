package sdktest

import (
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/conversations"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider/all"
	oai "github.com/convo-go/convo/provider/openai"
	"github.com/convo-go/convo/server"
	"github.com/convo-go/convo/store"
	"github.com/convo-go/convo/store/sqlite"
)

// convoServer runs the convo server over a SQLite store, with one token
// per tenant.
func convoServer(t *testing.T, tokens map[string]string) (*httptest.Server, store.Store) {
	t.Helper()
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "convo.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	h, err := server.New(st, server.Options{
		Tokens:  tokens,
		Formats: all.Formats(),
		Items:   server.ItemFuncs{Encode: oai.EncodeItems, Decode: oai.DecodeItems},
		Logger:  slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv, st
}

// sdkClient is the official client pointed at the server, unchanged but for
// its base URL and key. Retries are off so a refusal shows at once.
func sdkClient(srv *httptest.Server, token string) openai.Client {
	return openai.NewClient(option.WithBaseURL(srv.URL+"/v1/"), option.WithAPIKey(token), option.WithMaxRetries(0))
}

func apiStatus(t *testing.T, err error) (int, string) {
	t.Helper()
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) {
		t.Fatalf("error %v is not an API error", err)
	}
	return apiErr.StatusCode, apiErr.Code
}

// TestConversationsAPI drives the Conversations API of openai-go against
// convo serve: every call of the subset, the items coming back as they went
// in, and another tenant seeing nothing.
func TestConversationsAPI(t *testing.T) {
	srv, st := convoServer(t, map[string]string{"sk-alice": "alice", "sk-bob": "bob"})
	client := sdkClient(srv, "sk-alice")
	ctx := t.Context()

	conv, err := client.Conversations.New(ctx, conversations.ConversationNewParams{
		Items: []responses.ResponseInputItemUnionParam{
			responses.ResponseInputItemParamOfMessage("Be brief.", responses.EasyInputMessageRoleDeveloper),
			responses.ResponseInputItemParamOfMessage("Weather in Paris and the time?", responses.EasyInputMessageRoleUser),
		},
		Metadata: shared.Metadata{"topic": "weather"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if conv.ID == "" || conv.Object != "conversation" || conv.CreatedAt == 0 {
		t.Fatalf("created %+v", conv)
	}
	if m, ok := conv.Metadata.(map[string]any); !ok || m["topic"] != "weather" {
		t.Errorf("metadata %#v", conv.Metadata)
	}

	got, err := client.Conversations.Get(ctx, conv.ID)
	if err != nil || got.ID != conv.ID || got.CreatedAt != conv.CreatedAt {
		t.Fatalf("get: %+v, %v", got, err)
	}
	upd, err := client.Conversations.Update(ctx, conv.ID, conversations.ConversationUpdateParams{Metadata: shared.Metadata{"topic": "travel", "city": "Paris"}})
	if err != nil {
		t.Fatal(err)
	}
	if m, _ := upd.Metadata.(map[string]any); m["topic"] != "travel" || m["city"] != "Paris" {
		t.Errorf("updated metadata %#v", upd.Metadata)
	}

	// The model's turn, as a Responses call returns it: encrypted
	// reasoning and two parallel calls.
	reasoning := responses.ResponseInputItemParamOfReasoning("rs_1", []responses.ResponseReasoningItemSummaryParam{{Text: "Call both tools."}})
	reasoning.OfReasoning.EncryptedContent = openai.String("gAAAAenc")
	call1 := responses.ResponseInputItemParamOfFunctionCall(`{"city":"Paris"}`, "call_1", "get_weather")
	call1.OfFunctionCall.ID = openai.String("fc_1")
	call2 := responses.ResponseInputItemParamOfFunctionCall(`{"tz":"Europe/Paris"}`, "call_2", "get_time")
	call2.OfFunctionCall.ID = openai.String("fc_2")
	added, err := client.Conversations.Items.New(ctx, conv.ID, conversations.ItemNewParams{
		Items: []responses.ResponseInputItemUnionParam{reasoning, call1, call2},
	})
	if err != nil {
		t.Fatal(err)
	}
	if ids := itemIDsOf(added.Data); !slices.Equal(ids, []string{"rs_1", "fc_1", "fc_2"}) || added.FirstID != "rs_1" || added.LastID != "fc_2" {
		t.Fatalf("added %v (first %s, last %s)", ids, added.FirstID, added.LastID)
	}
	if r := added.Data[0].AsReasoning(); r.EncryptedContent != "gAAAAenc" || len(r.Summary) != 1 || r.Summary[0].Text != "Call both tools." {
		t.Errorf("reasoning came back as %+v", r)
	}

	// The tools' outputs and the answer, in a later request.
	answer := responses.ResponseInputItemParamOfMessage("18 °C and sunny; it is noon.", responses.EasyInputMessageRoleAssistant)
	answer.OfMessage.Phase = responses.EasyInputMessagePhaseFinalAnswer
	if _, err := client.Conversations.Items.New(ctx, conv.ID, conversations.ItemNewParams{
		Items: []responses.ResponseInputItemUnionParam{
			responses.ResponseInputItemParamOfFunctionCallOutput(`{"temp_c":18}`),
			responses.ResponseInputItemParamOfFunctionCallOutput("12:00"),
			answer,
		},
	}); err == nil {
		t.Fatal("outputs without call ids were accepted")
	} else if status, code := apiStatus(t, err); status != http.StatusUnprocessableEntity || code != "invalid" {
		t.Errorf("outputs without call ids: %d %s", status, code)
	}
	out1 := responses.ResponseInputItemParamOfFunctionCallOutput(`{"temp_c":18}`)
	out1.OfFunctionCallOutput.CallID = openai.String("call_1")
	out2 := responses.ResponseInputItemParamOfFunctionCallOutput("12:00")
	out2.OfFunctionCallOutput.CallID = openai.String("call_2")
	if _, err := client.Conversations.Items.New(ctx, conv.ID, conversations.ItemNewParams{
		Items: []responses.ResponseInputItemUnionParam{out1, out2, answer},
	}); err != nil {
		t.Fatal(err)
	}

	// Listing, oldest first, two at a time through the SDK's auto-pager
	// (which follows last_id).
	pager := client.Conversations.Items.ListAutoPaging(ctx, conv.ID, conversations.ItemListParams{
		Order: conversations.ItemListParamsOrderAsc, Limit: openai.Int(2),
	})
	var items []conversations.ConversationItemUnion
	for pager.Next() {
		items = append(items, pager.Current())
	}
	if err := pager.Err(); err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, it := range items {
		types = append(types, it.Type)
	}
	want := []string{"message", "message", "reasoning", "function_call", "function_call", "function_call_output", "function_call_output", "message"}
	if !slices.Equal(types, want) {
		t.Fatalf("listed %v, want %v", types, want)
	}
	if m := items[0].AsMessage(); m.Role != "developer" || len(m.Content) != 1 || m.Content[0].Text != "Be brief." || m.Status != "completed" {
		t.Errorf("developer message %+v", m)
	}
	if fc := items[3].AsFunctionCall(); fc.ID != "fc_1" || fc.CallID != "call_1" || fc.Name != "get_weather" || fc.Arguments != `{"city":"Paris"}` {
		t.Errorf("function call %+v", fc)
	}
	if out := items[5].AsFunctionCallOutput(); out.CallID != "call_1" || out.Output.OfString != `{"temp_c":18}` {
		t.Errorf("function call output %+v", out)
	}
	if m := items[7].AsMessage(); m.Role != "assistant" || m.Content[0].Text != "18 °C and sunny; it is noon." || m.Phase != conversations.MessagePhaseFinalAnswer {
		t.Errorf("answer %+v", m)
	}
	// Newest first is the default.
	page, err := client.Conversations.Items.List(ctx, conv.ID, conversations.ItemListParams{Limit: openai.Int(3)})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Data) != 3 || page.Data[0].ID != items[7].ID || !page.HasMore || page.LastID != items[5].ID {
		t.Errorf("newest page %v (has_more %v, last %s)", itemIDsOf(page.Data), page.HasMore, page.LastID)
	}

	// Retrieve one.
	one, err := client.Conversations.Items.Get(ctx, conv.ID, "fc_2", conversations.ItemGetParams{})
	if err != nil {
		t.Fatal(err)
	}
	if fc := one.AsFunctionCall(); fc.CallID != "call_2" || fc.Name != "get_time" {
		t.Errorf("fc_2 = %+v", fc)
	}

	// The stored history is one canonical conversation.
	h, _, err := st.Load(ctx, "alice", conv.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Validate(); err != nil {
		t.Errorf("stored history invalid: %v", err)
	}
	if len(h) != 6 || h[2].Role != convo.RoleAssistant || len(h[2].ToolCalls()) != 2 || h[5].Phase != convo.PhaseFinal {
		t.Errorf("stored %d messages: %+v", len(h), h)
	}

	// Deleting: an item sharing its message with others is refused; one
	// alone goes.
	if _, err := client.Conversations.Items.Delete(ctx, conv.ID, "fc_1"); err == nil {
		t.Error("deleted one function call of a turn alone")
	} else if status, code := apiStatus(t, err); status != http.StatusBadRequest || code != "item_not_alone" {
		t.Errorf("refusal %d %s", status, code)
	}
	after, err := client.Conversations.Items.Delete(ctx, conv.ID, items[7].ID)
	if err != nil {
		t.Fatal(err)
	}
	if after.ID != conv.ID {
		t.Errorf("delete answered %+v", after)
	}
	if _, err := client.Conversations.Items.Get(ctx, conv.ID, items[7].ID, conversations.ItemGetParams{}); err == nil {
		t.Error("the deleted item is still there")
	} else if status, _ := apiStatus(t, err); status != http.StatusNotFound {
		t.Errorf("deleted item: status %d", status)
	}

	// Another tenant sees nothing of it, and changes nothing.
	bob := sdkClient(srv, "sk-bob")
	if _, err := bob.Conversations.Get(ctx, conv.ID); err == nil {
		t.Error("bob read alice's conversation")
	} else if status, _ := apiStatus(t, err); status != http.StatusNotFound {
		t.Errorf("bob: status %d, want 404", status)
	}
	if _, err := bob.Conversations.Items.List(ctx, conv.ID, conversations.ItemListParams{}); err == nil {
		t.Error("bob listed alice's items")
	}
	if _, err := bob.Conversations.Delete(ctx, conv.ID); err == nil {
		t.Error("bob deleted alice's conversation")
	}
	nobody := sdkClient(srv, "sk-nobody")
	if _, err := nobody.Conversations.Get(ctx, conv.ID); err == nil {
		t.Error("an unknown key was let in")
	} else if status, _ := apiStatus(t, err); status != http.StatusUnauthorized {
		t.Errorf("unknown key: status %d", status)
	}

	del, err := client.Conversations.Delete(ctx, conv.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !del.Deleted || del.ID != conv.ID || del.Object != "conversation.deleted" {
		t.Errorf("delete %+v", del)
	}
	if _, err := client.Conversations.Get(ctx, conv.ID); err == nil {
		t.Error("the deleted conversation is still there")
	}
}

func itemIDsOf(items []conversations.ConversationItemUnion) []string {
	ids := make([]string, len(items))
	for i, it := range items {
		ids[i] = it.ID
	}
	return ids
}
