module github.com/go-curator/curator/cmd/curatorctl

go 1.24.0

require (
	github.com/go-curator/curator v0.1.0
	github.com/go-curator/curator/zktest v0.1.0
	github.com/go-zookeeper/zk v1.0.4
	go.uber.org/goleak v1.3.0
)

require (
	github.com/cenkalti/backoff/v4 v4.3.0 // indirect
	github.com/google/uuid v1.6.0 // indirect
)
