//go:build unix

package sqlite_test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/internal/cputime"
	"github.com/convo-go/convo/store"
	"github.com/convo-go/convo/store/sqlite"
)

// exchangeWords are what BenchmarkExchange's replies are written from:
// English prose, a vocabulary of a few hundred words as a model's replies
// have, so that the search index gets new terms and repeated ones.
var exchangeWords = strings.Fields(`the a of to and in is it that for on with as this be are you
	can or by an not from at your if will which more one has have but all also when there their they
	weather forecast rain showers sunny cloudy wind temperature degrees morning afternoon evening night
	saturday sunday weekend umbrella coat museum paris lyon city river walk tour ticket open hours
	price euro train station metro bus taxi airport hotel room breakfast dinner restaurant cafe menu
	function return value error string number list array object field type method call request response
	server client database query index table row column key cache memory disk file path stream buffer
	token model prompt reply answer question context window usage cost input output reasoning tool
	first second third next last before after during until while because however therefore example
	small large quick slow early late likely mostly partly dry wet cold warm hot mild light heavy`)

// exchangeReply is the i-th reply: about n bytes of prose drawn from
// exchangeWords (a fixed sequence, different for each i).
func exchangeReply(i, n int) string {
	var b strings.Builder
	x := uint32(i)*2654435761 + 1
	for b.Len() < n {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(exchangeWords[x%uint32(len(exchangeWords))])
		if x%11 == 0 {
			b.WriteByte('.')
		}
	}
	return b.String()
}

// userTime is the process's user CPU time so far (0 where unknown).
func userTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano())
}

// BenchmarkExchange measures what the store spends to record one exchange
// as convo gateway's writer does at one stream: a Batch of one write
// holding the request's user message and a reply of about 1.7 KB (the
// text stream of bench/gateway replies 1.7 KB, 227 words) with its origin
// and usage, and
// the conversation's fingerprint as metadata; "create" starts a
// conversation each exchange, "continue" appends to one of 64, and
// "batch" starts one each exchange in batches of 64, as the writer does
// under load (its fingerprints random, as a hash's are). It
// reports the process's CPU time per exchange beside the wall time, and
// its user CPU time apart: with synchronous commits the rest is mostly
// the kernel's fsync, which varies far more than the store's own work.
func BenchmarkExchange(b *testing.B) {
	for _, mode := range []string{"create", "continue", "batch"} {
		b.Run(mode, func(b *testing.B) {
			ctx := b.Context()
			s, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "exchange.db"))
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			write := func(i int) store.Write {
				reply := convo.Assistant(exchangeReply(i, 1700))
				reply.Origin = &convo.Origin{Provider: "anthropic", Model: "claude-x"}
				reply.Usage = &convo.Usage{Input: 812, Output: 296, Total: 1108}
				reply.Finish = convo.FinishStop
				w := store.Write{Tenant: "t", Version: store.AnyVersion,
					Messages: []convo.Message{convo.User(fmt.Sprintf("Question %d: %s?", i, exchangeReply(-i, 100))), reply},
					Meta:     json.RawMessage(fmt.Sprintf(`{"convo_gateway_fingerprint":"%064d"}`, i))}
				if mode == "batch" {
					w.Meta = json.RawMessage(fmt.Sprintf(`{"convo_gateway_fingerprint":"%016x"}`, uint64(i)*0x9e3779b97f4a7c15))
				}
				if mode != "continue" || i < 64 {
					w.ID, w.Create = fmt.Sprintf("c%d", i), true
				} else {
					w.ID = fmt.Sprintf("c%d", i%64)
				}
				return w
			}
			for i := range 64 { // the conversations continued, and warm caches
				if res := s.Batch(ctx, []store.Write{write(i)}); res[0].Err != nil {
					b.Fatal(res[0].Err)
				}
			}
			ws := make([]store.Write, b.N) // prepared beforehand: only the store counts
			for i := range ws {
				ws[i] = write(64 + i)
			}
			b.ReportAllocs()
			b.ResetTimer()
			cpu0, user0 := cputime.Process(), userTime()
			n := 1
			if mode == "batch" {
				n = 64
			}
			for i := 0; i < len(ws); i += n {
				for _, res := range s.Batch(ctx, ws[i:min(i+n, len(ws))]) {
					if res.Err != nil {
						b.Fatal(res.Err)
					}
				}
			}
			b.StopTimer()
			b.ReportMetric(float64((cputime.Process()-cpu0).Nanoseconds())/1e3/float64(b.N), "cpu-µs/exchange")
			b.ReportMetric(float64((userTime()-user0).Nanoseconds())/1e3/float64(b.N), "user-µs/exchange")
		})
	}
}
