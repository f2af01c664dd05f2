// Package compressed owns random access into compressed log files (gzip,
// zstd, bzip2, xz): recognising them (Sniff), decompressing each once at
// index time while recording restart points (Indexer, Table), encoding
// those checkpoints for the index (Table.AppendBinary, DecodeTable), and
// reading decompressed bytes at any offset at query time (Reader) by
// decoding at most one checkpoint interval, or continuing forward when
// reads come in increasing offset order.
//
// It is a leaf package: the indexer and the query engine both use it, and
// it imports no other logdex package.
//
// # Checkpoints per format
//
//   - gzip: zran-style. At the end of a deflate block (klauspost/compress
//     flate's end-of-block callback) a checkpoint keeps the compressed byte
//     and bit position and the 32 KiB window the next block may copy from,
//     flate-compressed. Every gzip member start is also a restart point.
//     Trailers (CRC-32, size) are verified whenever a member was decoded
//     from its header. Deflate blocks written by GNU gzip hold ~200 KB of
//     log text, so checkpoints are at least that far apart.
//   - zstd: frames are independent; frame starts are the checkpoints. A
//     file written by zstd or logrotate is one frame: it has a single
//     checkpoint. Such a file (and an xz file of one block) gets a
//     seekable copy (ShadowWriter, ShadowReader): its decompressed bytes
//     as zstd frames of one interval each, kept by the index, so that a
//     random read decodes one interval of the copy, not the file from
//     its start.
//   - bzip2: every block (100-900 kB of input) is independent; its start
//     is found at any bit offset and resumed through a made-up stream (see
//     bzip2Stream).
//   - xz: every block starts with a dictionary reset, so block headers are
//     checkpoints (xz -T0 or --block-size files have many; plain xz one per
//     stream).
//
// # Damaged input
//
// The Indexer yields everything decoded before the damage and then returns
// an error wrapping ErrTruncated, or a *CorruptError with the compressed
// offset; its Table then covers exactly the yielded bytes. Bytes after the
// last complete stream give a *CorruptError whose Err is
// ErrTrailingGarbage; for gzip they are yielded verbatim first, as
// `gzip -cdf` (and so zgrep) prints them, except zero bytes up to the end
// of the file: padding, which gzip -d ignores, and so do we. Checksums are
// verified at the end of each member, block or frame, so a decoder may
// yield wrong bytes after corruption before it notices, as gzip -d does.
// Memory is bounded: zstd windows and xz dictionaries above
// MaxDecoderWindow are refused.
//
// # Table encoding (version 1; version 2 adds a seekable copy's table)
//
// Integers marked uvarint are unsigned LEB128 varints (encoding/binary).
//
//	byte 0      version, 1
//	byte 1      kind: 1 gzip, 2 zstd, 3 bzip2, 4 xz
//	uvarint     decompressed size S
//	uvarint     compressed size C (0 only for an empty file)
//	uvarint     interval requested, in decompressed bytes
//	uvarint     N, number of checkpoints (0 if and only if C is 0)
//	N times:
//	  byte      type: 0 start of a stream (member, frame), 1 block inside a
//	            stream, 2 verbatim bytes to the end (gzip trailing garbage)
//	  uvarint   decompressed offset minus the previous checkpoint's (the
//	            first checkpoint's offset is from 0 and must be 0)
//	  uvarint   compressed byte offset minus the previous checkpoint's (the
//	            first must be 0); offsets never exceed S and C
//	  type 1 only, by kind:
//	    gzip:   byte      bits of the compressed byte already consumed, 0-7
//	            uvarint   L, length of the window, at most 33792
//	            L bytes   the window (the up to 32 KiB of decompressed bytes
//	                      before the checkpoint) as a raw deflate stream
//	    bzip2:  byte      bit (0 = most significant) of the compressed byte
//	                      where the block's 48-bit magic starts, 0-7
//	            byte      the stream's block size digit, 1-9
//	            uvarint   bits from the block magic to the stream's
//	                      end-of-stream magic; 0 if the stream has none
//	            4 bytes   big-endian CRC of a stream holding this block and
//	                      the stream's later ones (the fold of their CRCs)
//	    xz:     byte      the stream's check type, 0-15
//	    (zstd has no type 1)
//
// Type 2 appears only in gzip tables. Version 2 (byte 0 is 2) follows the
// checkpoints with the seekable copy's xxhash64 (8 bytes, little-endian),
// a uvarint length and the copy's own table (version 1, kind zstd, the same
// S, only type 0 checkpoints). No byte may follow the last checkpoint (or
// the copy's table). DecodeTable checks every field and bound and returns an
// error, never panics.
//
// # Choosing the interval
//
// DefaultInterval is 1 MiB. BenchmarkRandomLine measured, on 64 MiB of
// log text compressed by gzip -6 (a fresh Reader reading one 200-byte line;
// a shared 2-core VM, so times are ranges over runs):
//
//	interval   table size          random line   line just before a checkpoint
//	<=256 KiB  2.5% of the content  ~1 ms         ~1.1 ms
//	1 MiB      0.62%                2-7 ms        4-10 ms
//	4 MiB      0.16%                10-18 ms      20-27 ms
//
// GNU gzip ends a deflate block every ~280 KiB of log output, so smaller
// intervals change nothing. Nearly all of a gzip table is windows (about
// 6 KiB each after flate level 6); at 1 MiB the table is ~4% of the .gz
// file, against ~15% for every block. Other kinds' tables are tiny (no
// windows), and their read cost is set by where the format allows restarts:
// a single-frame zstd file is decoded from its start (~600 MB/s: a random
// line of a 1 GiB file costs ~0.9 s on average and ~1.8 s at the end on an
// idle machine; 2-9 s were measured on a loaded one), bzip2 from the block
// before (~100 ms for 900 kB blocks), xz from the block before
// (ulikunitz/xz decodes 20-35 MB/s: xz -T0's 24 MiB blocks cost up to
// ~1 s; a default single-block xz file of 1 GiB, up to ~30-50 s).
package compressed
