module github.com/go-curator/curator/zktest

go 1.24.0

require (
	github.com/go-zookeeper/zk v1.0.4
	go.uber.org/goleak v1.3.0
)
