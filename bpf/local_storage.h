/* SPDX-License-Identifier: MIT */
/* Local storage: constants shared by bpf/local_storage.bpf.c and
 * csrc/bench_local_storage.c. */
#ifndef BENCHBPF_LOCAL_STORAGE_H
#define BENCHBPF_LOCAL_STORAGE_H

/* Slots of the arrays of maps: the most maps a run can get from. */
#define LS_MAX_NR_MAPS		1000
/* Keys of the control hash map: PID_MAX_LIMIT on 64-bit kernels, one key
 * per possible pid, as a hash map standing in for task storage needs. */
#define LS_HASHMAP_SZ		4194304
/* Gets per getpgid() event: one bpf_loop() of this many iterations. */
#define LS_LOOPS_PER_EVENT	10000
/* In the interleaved variant, map index i is followed by a get of the
 * important map (index 0) when i % LS_INTERLEAVE_EVERY == 0: 4 extra
 * gets in every 10. */
#define LS_INTERLEAVE_EVERY	3
/* Bytes of one created storage (local-storage-create). */
#define LS_CREATE_STORAGE_SZ	64

#endif /* BENCHBPF_LOCAL_STORAGE_H */
