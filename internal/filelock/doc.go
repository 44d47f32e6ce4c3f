// Package filelock is the advisory file lock that orders two processes'
// read-modify-write of one file (the daemon and a CLI command): memory.md
// and the vault.
//
// Contract: Lock(path) blocks until it holds an exclusive flock on path
// and returns its release; on systems without flock it holds nothing.
package filelock
