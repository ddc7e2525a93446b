// SPDX-License-Identifier: GPL-2.0
/*
 * sockmap: what an sk_skb (receive side) or sk_msg (send side) program on a
 * SOCKMAP costs per byte, passing data through or redirecting it to another
 * socket, as the kernel bench's bench_sockmap_prog.c.  Every program adds
 * the bytes it saw to skmap_bytes; user space swaps it to zero per sample.
 * The C side attaches only the programs a mode needs (bpf_prog_attach to a
 * map, not links).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "sockmap.h"

char LICENSE[] SEC("license") = "GPL";

/* Set between open and load: the redirect's direction (0: egress of the
 * target socket, BPF_F_INGRESS: its receive queue) and the stream parser's
 * message length (--rx-strp). */
const volatile int verdict_dir = 0;	/* an int, as the kernel bench's */
const volatile int strp_size = 0;

long skmap_bytes = 0;
/* Redirects the kernel answered SK_DROP to (the kernel bench counts them
 * and prints nothing; here they are the extra counter verdict_drops). */
int skmap_drops = 0;

struct {
	__uint(type, BPF_MAP_TYPE_SOCKMAP);
	__uint(max_entries, SOCKMAP_ENTRIES);
	__type(key, int);
	__type(value, int);
} skmap_rx SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_SOCKMAP);
	__uint(max_entries, SOCKMAP_ENTRIES);
	__type(key, int);
	__type(value, int);
} skmap_tx SEC(".maps");

SEC("sk_skb/stream_parser")
int skmap_parser(struct __sk_buff *skb)
{
	return strp_size;
}

SEC("sk_skb/stream_verdict")
int skmap_verdict(struct __sk_buff *skb)
{
	int ret = bpf_sk_redirect_map(skb, &skmap_rx, SOCKMAP_TO, verdict_dir);

	if (ret == SK_DROP)
		skmap_drops++;	/* plain, as the kernel bench's */
	__sync_fetch_and_add(&skmap_bytes, skb->len);
	return ret;
}

SEC("sk_skb/stream_verdict")
int skmap_skb_pass(struct __sk_buff *skb)
{
	__sync_fetch_and_add(&skmap_bytes, skb->len);
	return SK_PASS;
}

SEC("sk_msg")
int skmap_msg_verd(struct sk_msg_md *msg)
{
	__sync_fetch_and_add(&skmap_bytes, msg->size);
	return bpf_msg_redirect_map(msg, &skmap_tx, SOCKMAP_TO, verdict_dir);
}

SEC("sk_msg")
int skmap_msg_pass(struct sk_msg_md *msg)
{
	__sync_fetch_and_add(&skmap_bytes, msg->size);
	return SK_PASS;
}
