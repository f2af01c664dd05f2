// Package mmapstore owns logdex's on-disk index format, both ways: the
// segment files (term dictionary, postings, offset index, file table,
// trigram filters) and the manifest that names them, with the writer
// beside the reader so that a change is made in one place, and FORMAT.md
// beside both as the specification.
//
// Readers map segments read-only and decode them in place, checking
// bounds and checksums before trusting bytes: damage is a
// *CorruptionError (matching ErrCorrupt), a version this build cannot
// read a *VersionError (matching ErrVersion), never a panic. An Index is
// one consistent snapshot (a manifest and its segments) whose Close waits
// for its readers; a Warmer brings a snapshot's pages into memory in paced
// stages.
//
// Subpackages hold what the indexer and the query engine share: the token
// rule (token) and how a log file is opened and recognized (logfile).
package mmapstore
