// Package atomiccore is the compare-and-set engine that go-curator's
// atomic recipes share: Curator's DistributedAtomicValue, generic over the
// value's type by a Codec. recipes/atomiclong (an int64 in 8 bytes) and
// recipes/atomicvalue (raw bytes, and an int32 in 4 bytes) configure it
// with their codec and their errors; the algorithm, the promoted lock and
// the turns it takes with other writers are described in recipes/atomiclong's
// package doc, and are the same for every codec.
package atomiccore
