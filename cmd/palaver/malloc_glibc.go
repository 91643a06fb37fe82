//go:build linux && cgo

package main

/*
#include <stdlib.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

// palaver_keep_freed_memory: see init below (glibc's allocator only).
static void palaver_keep_freed_memory(void) {
#ifdef __GLIBC__
	mallopt(M_TRIM_THRESHOLD, 256 << 20);
	mallopt(M_MMAP_THRESHOLD, 32 << 20);
#endif
}
*/
import "C"

// SQLite allocates its page caches and statement memory with the C
// library's malloc, on threads of its own arenas. Every commit empties the
// page caches of the other pooled connections; glibc then gave the freed
// pages back to the system (madvise), and the next read faulted them in
// again. In a profile of the bench's turns that was an eighth of the
// process's CPU, most of it the TLB shootdowns the madvise sends to every
// core (docs/PERFORMANCE.md, "Freed memory kept"). Keeping up to 256 MiB
// freed at the top of an arena, and serving blocks up to 32 MiB (a file's
// bytes bound to a statement) from the arenas instead of fresh mappings,
// stops that; the memory is reused, not grown without bound.
func init() { C.palaver_keep_freed_memory() }
