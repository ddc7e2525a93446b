// SPDX-License-Identifier: GPL-2.0
/*
 * rename-*: programs on the task-rename path (__set_task_comm and its
 * task_rename tracepoint).  Each does the least possible work, so the
 * figure is the cost of the attach kind itself.  None loads by default:
 * user space enables the one its benchmark needs.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

SEC("?kprobe/__set_task_comm")
int BPF_KPROBE(rename_kprobe, struct task_struct *tsk, const char *buf, bool exec)
{
	return !tsk;
}

SEC("?kretprobe/__set_task_comm")
int BPF_KRETPROBE(rename_kretprobe, int ret)
{
	return ret;
}

SEC("?raw_tp/task_rename")
int rename_rawtp(struct bpf_raw_tracepoint_args *ctx)
{
	return !ctx->args[0];
}

SEC("?fentry/__set_task_comm")
int BPF_PROG(rename_fentry, struct task_struct *tsk, const char *buf, bool exec)
{
	return 0;
}

SEC("?fexit/__set_task_comm")
int BPF_PROG(rename_fexit, struct task_struct *tsk, const char *buf, bool exec)
{
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
