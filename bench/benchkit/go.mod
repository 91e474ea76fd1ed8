module github.com/convo-go/convo/bench/benchkit

go 1.26.8

require github.com/convo-go/convo v0.0.0

replace github.com/convo-go/convo => ../..
