// Package temporaltest holds ralph's tests against an in-process Temporal
// server. It is a separate Go module so that go.temporal.io/server stays a
// test-only dependency: the main module's go.sum and the ralph binary never
// pull the server in.
package temporaltest
