// Command curatorctl inspects and operates go-curator and Apache Curator
// recipes on a ZooKeeper ensemble.
package main

func main() {}
