module github.com/go-curator/curator/cmd/curatorctl

go 1.26.0

replace github.com/go-curator/curator => ../../

replace github.com/go-curator/curator/zktest => ../../zktest
