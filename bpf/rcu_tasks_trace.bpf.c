// SPDX-License-Identifier: GPL-2.0
/*
 * local-storage-tasks-trace: task local storage created and deleted on every
 * getpgid() of this process and of the sleeping tasks it forked, and the
 * RCU Tasks Trace grace periods that follow.
 *
 * Grace periods are timed one of two ways, whichever the kernel loads:
 * - fentry on rcu_tasks_trace_pregp_step / rcu_tasks_trace_postgp, as the
 *   kernel bench does: the time between the two calls.
 * - tp_btf/sched_switch of the rcu_tasks_trace kthread: at each switch the
 *   program reads the grace-period sequence number of the kthread's
 *   struct rcu_tasks (rcu_seq: bits 0-1 the state, the rest the count).
 *   Only that kthread starts and ends its grace periods (rcu_seq_start()
 *   right before the kernel bench's pregp_step, rcu_seq_end() right after
 *   its postgp), and it does so while running, so a start (an end) lies
 *   within the run of the kthread, from its switch in to its switch out,
 *   in which the number changed.  Latency is estimated from the middles of
 *   those two runs, with half their lengths as the bracket.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "producer.bpf.h"
#include "rcu_tasks_trace.h"

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, int);
} task_storage SEC(".maps");

long hits = 0;
struct tasks_trace_gp gp = {};
/* Set if the kthread's struct rcu_tasks could not be read, or postgp came
 * without pregp: the latency is then not trusted. */
long unexpected = 0;

/* The kthread (pid as BPF sees it), set before load. */
const volatile __u32 kthread_pid = 0;

/* Creates and deletes storage for this process and its children only. */
static __always_inline int get_local(void)
{
	struct task_struct *task = bpf_get_current_task_btf();
	int *s;

	if (!producer_is_ours() && task->real_parent->tgid != filter_tgid)
		return 0;
	s = bpf_task_storage_get(&task_storage, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!s)
		return 0;
	*s = 3;
	bpf_task_storage_delete(&task_storage, task);
	__sync_add_and_fetch(&hits, 1);
	return 0;
}

GETPGID_PROGRAMS(tasks_trace_get_local, get_local())

/* ---- fentry timing, as the kernel bench ---- */
__u64 gp_start_ns = 0;
bool postgp_seen = false;

SEC("?fentry/rcu_tasks_trace_pregp_step")
int BPF_PROG(tasks_trace_pregp)
{
	gp_start_ns = bpf_ktime_get_ns();
	return 0;
}

SEC("?fentry/rcu_tasks_trace_postgp")
int BPF_PROG(tasks_trace_postgp)
{
	__u64 now = bpf_ktime_get_ns();

	__sync_add_and_fetch(&gp.completed, 1);
	if (!gp_start_ns) {
		if (postgp_seen)
			__sync_add_and_fetch(&unexpected, 1);
		postgp_seen = true;
		return 0;
	}
	__sync_add_and_fetch(&gp.ns, now - gp_start_ns);
	__sync_add_and_fetch(&gp.timed, 1);
	gp_start_ns = 0;
	postgp_seen = true;
	return 0;
}

/* ---- sched_switch timing ---- */
__u64 last_in_ns = 0;		/* the kthread's last switch in */
__u64 last_seq = 0;
bool seq_known = false;
bool start_known = false;	/* the grace period in progress started in [start_lo, start_hi] */
__u64 start_lo = 0, start_hi = 0;

static __always_inline bool read_gp_seq(struct task_struct *t, __u64 *seq)
{
	struct kthread *kt = t->worker_private;
	struct rcu_tasks *rtp;

	rtp = BPF_CORE_READ(kt, data);
	if (!rtp || BPF_CORE_READ(rtp, kthread_ptr) != t)
		return false;
	*seq = BPF_CORE_READ(rtp, tasks_gp_seq);
	return true;
}

static __always_inline void record(__u64 lo, __u64 hi)
{
	if (hi < lo)
		hi = lo;
	__sync_add_and_fetch(&gp.ns, (lo + hi) / 2);
	__sync_add_and_fetch(&gp.bracket_ns, (hi - lo) / 2);
	__sync_add_and_fetch(&gp.timed, 1);
}

SEC("?tp_btf/sched_switch")
int BPF_PROG(tasks_trace_switch, bool preempt, struct task_struct *prev,
	     struct task_struct *next)
{
	__u64 now, seq, started, ended, prev_started, prev_ended;

	if (next->pid == kthread_pid) {
		last_in_ns = bpf_ktime_get_ns();
		return 0;
	}
	if (prev->pid != kthread_pid)
		return 0;
	now = bpf_ktime_get_ns();
	if (!read_gp_seq(prev, &seq)) {
		unexpected = 1;
		return 0;
	}
	if (!seq_known || !last_in_ns) {
		last_seq = seq;
		seq_known = true;
		return 0;
	}
	/* rcu_seq: started = (seq + 3) / 4, ended = seq / 4. */
	started = (seq + 3) >> 2;
	ended = seq >> 2;
	prev_started = (last_seq + 3) >> 2;
	prev_ended = last_seq >> 2;
	last_seq = seq;
	if (ended > prev_ended) {
		__sync_add_and_fetch(&gp.completed, ended - prev_ended);
		/* The first to end was in progress before this run: timed if
		 * its start was seen. */
		if (prev_started > prev_ended) {
			if (start_known)
				record(last_in_ns > start_hi ? last_in_ns - start_hi : 0,
				       now - start_lo);
			prev_ended++;
		}
		/* Any other started and ended within this run. */
		for (int i = 0; i < 4 && prev_ended < ended; i++, prev_ended++)
			record(0, now - last_in_ns);
		start_known = false;
	}
	if (started > ended && started > prev_started) {
		start_known = true;
		start_lo = last_in_ns;
		start_hi = now;
	}
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
