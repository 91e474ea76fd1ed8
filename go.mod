module github.com/convo-go/convo

go 1.26.8
