// SPDX-License-Identifier: GPL-2.0
/*
 * xdp-lb: a Katran-style XDP load balancer, run by BPF_PROG_TEST_RUN over
 * one built packet, timed in BPF.
 *
 * Per packet (process_packet): parse Ethernet, IPv4 or IPv6 and the ports;
 * look the VIP up; look the flow up in this CPU's connection table (an LRU
 * hash in an array of maps), else pick a real from the VIP's consistent-hash
 * ring (jhash of source and ports) and remember it in the table; count
 * per-VIP and per-real statistics; encapsulate in IPIP, IPv4-in-IPv6 or
 * IP6IP6 towards the real and return XDP_TX.  Unknown VIPs, non-IP and
 * non-TCP/UDP pass; fragments and IPv4 options are dropped.  These are the
 * kernel bench's maps, sizes, lookups, hash and headers.
 *
 * One test run times a batch of process_packet() calls; between two calls
 * the packet is put back as it came (the encapsulation stripped), with a
 * new source address when the scenario spreads flows (flow_mask), and the
 * source poisoned or restored for a cold connection table (cold_lru).  The
 * run ends with one more, untimed call whose verdict and packet the test
 * run returns, for user space to check.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#include "bpf_timing.bpf.h"
#include "xdp_lb.h"

#define ETH_P_IP	0x0800
#define ETH_P_IPV6	0x86DD


/* ---- jhash, as the kernel's include/linux/jhash.h ---- */

#define JHASH_INITVAL 0xdeadbeef

static __always_inline __u32 rol32(__u32 word, unsigned int shift)
{
	return (word << shift) | (word >> ((-shift) & 31));
}

#define jhash_mix(a, b, c) do {						\
	a -= c; a ^= rol32(c, 4);  c += b;				\
	b -= a; b ^= rol32(a, 6);  a += c;				\
	c -= b; c ^= rol32(b, 8);  b += a;				\
	a -= c; a ^= rol32(c, 16); c += b;				\
	b -= a; b ^= rol32(a, 19); a += c;				\
	c -= b; c ^= rol32(b, 4);  b += a;				\
} while (0)

#define jhash_final(a, b, c) do {					\
	c ^= b; c -= rol32(b, 14);					\
	a ^= c; a -= rol32(c, 11);					\
	b ^= a; b -= rol32(a, 25);					\
	c ^= b; c -= rol32(b, 16);					\
	a ^= c; a -= rol32(c, 4);					\
	b ^= a; b -= rol32(a, 14);					\
	c ^= b; c -= rol32(b, 24);					\
} while (0)

static __always_inline __u32 jhash_2words(__u32 a, __u32 b, __u32 initval)
{
	__u32 c = initval + JHASH_INITVAL + (2 << 2);

	a += c;
	b += c;
	jhash_final(a, b, c);
	return c;
}

/* jhash2() of four words: one mix of three, the fourth in the final. */
static __always_inline __u32 jhash2_4words(const __u32 *k, __u32 initval)
{
	__u32 a, b, c;

	a = b = c = JHASH_INITVAL + (4 << 2) + initval;
	a += k[0];
	b += k[1];
	c += k[2];
	jhash_mix(a, b, c);
	a += k[3];
	jhash_final(a, b, c);
	return c;
}

/* ---- maps ---- */

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, XDP_LB_VIP_MAP_SIZE);
	__type(key, struct xdp_lb_vip);
	__type(value, struct xdp_lb_vip_meta);
} xlb_vip_map SEC(".maps");

/* Each CPU's connection table; user space creates one per possible CPU.
 * Sizes rather than types: the BTF of a struct only used through pointers
 * is a forward declaration, which libbpf cannot size. */
struct xdp_lb_lru_map {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(key_size, sizeof(struct xdp_lb_flow));
	__uint(value_size, sizeof(struct xdp_lb_lru_entry));
	__uint(max_entries, XDP_LB_LRU_SIZE);
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__type(key, __u32);
	__type(value, __u32);
	__uint(max_entries, XDP_LB_MAX_CPUS);
	__array(values, struct xdp_lb_lru_map);
} xlb_lru_mapping SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, XDP_LB_CH_RINGS_SIZE);
	__type(key, __u32);
	__type(value, __u32);
} xlb_ch_rings SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, XDP_LB_MAX_REALS);
	__type(key, __u32);
	__type(value, struct xdp_lb_real);
} xlb_reals SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, XDP_LB_STATS_SIZE);
	__type(key, __u32);
	__type(value, struct xdp_lb_stat);
} xlb_stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, XDP_LB_MAX_REALS);
	__type(key, __u32);
	__type(value, struct xdp_lb_stat);
} xlb_reals_stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xdp_lb_ctl);
} xlb_ctl_array SEC(".maps");

/* The one VIP whose table misses are counted per real. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xdp_lb_vip);
} xlb_vip_miss_stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, XDP_LB_MAX_REALS);
	__type(key, __u32);
	__type(value, __u32);
} xlb_lru_miss_stats SEC(".maps");

/* Set by user space between runs, read on every run. */
volatile __u32 flow_mask;	/* nonzero: a random source per packet, masked */
volatile __u32 cold_lru;	/* nonzero: each run's first packet is a new flow */
__u32 batch_gen;		/* runs so far, for cold_lru */

/* ---- per packet ---- */

static __always_inline void ipv4_csum(struct iphdr *iph)
{
	__u16 *word = (__u16 *)iph;
	__u32 sum = 0;
	int i;

#pragma unroll
	for (i = 0; i < (int)(sizeof(*iph) / 2); i++)
		sum += word[i];
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	iph->check = ~sum;
}

/*
 * Make room for an outer header of `outer` bytes in front of the packet and
 * write the new Ethernet header: from us (the old destination) to dst_mac.
 * The old Ethernet header is read after the head moved, where it now
 * overlaps the new one.  Returns where the outer header goes, or NULL.
 */
static __always_inline void *push_outer(struct xdp_md *xdp, int outer, __u16 eth_proto,
					const __u8 *dst_mac)
{
	struct ethhdr *eth, *old_eth;
	void *data, *data_end, *hdr;

	if (bpf_xdp_adjust_head(xdp, -outer))
		return NULL;
	data = (void *)(long)xdp->data;
	data_end = (void *)(long)xdp->data_end;
	eth = data;
	hdr = data + sizeof(struct ethhdr);
	old_eth = data + outer;
	if ((void *)(eth + 1) > data_end || (void *)(old_eth + 1) > data_end ||
	    hdr + outer > data_end)
		return NULL;
	__builtin_memcpy(eth->h_source, old_eth->h_dest, sizeof(eth->h_source));
	__builtin_memcpy(eth->h_dest, dst_mac, sizeof(eth->h_dest));
	eth->h_proto = bpf_htons(eth_proto);
	return hdr;
}

/* IPIP towards daddr. */
static __always_inline int encap_v4(struct xdp_md *xdp, __be32 saddr, __be32 daddr,
				    __u16 payload_len, const __u8 *dst_mac)
{
	struct iphdr *iph = push_outer(xdp, sizeof(*iph), ETH_P_IP, dst_mac);

	if (!iph)
		return -1;
	__builtin_memset(iph, 0, sizeof(*iph));
	iph->version = 4;
	iph->ihl = sizeof(*iph) >> 2;
	iph->protocol = IPPROTO_IPIP;
	iph->tot_len = bpf_htons(payload_len + sizeof(*iph));
	iph->ttl = 64;
	iph->saddr = saddr;
	iph->daddr = daddr;
	ipv4_csum(iph);
	return 0;
}

/* An outer IPv6 header towards daddr; nexthdr says what it carries. */
static __always_inline int encap_v6(struct xdp_md *xdp, const __be32 saddr[4],
				    const __be32 daddr[4], __u8 nexthdr, __u16 payload_len,
				    const __u8 *dst_mac)
{
	struct ipv6hdr *ip6h = push_outer(xdp, sizeof(*ip6h), ETH_P_IPV6, dst_mac);

	if (!ip6h)
		return -1;
	__builtin_memset(ip6h, 0, sizeof(*ip6h));
	ip6h->version = 6;
	ip6h->nexthdr = nexthdr;
	ip6h->payload_len = bpf_htons(payload_len);
	ip6h->hop_limit = 64;
	__builtin_memcpy(&ip6h->saddr, saddr, sizeof(ip6h->saddr));
	__builtin_memcpy(&ip6h->daddr, daddr, sizeof(ip6h->daddr));
	return 0;
}

static __always_inline void add_stat(void *map, __u32 key, __u16 bytes)
{
	struct xdp_lb_stat *st = bpf_map_lookup_elem(map, &key);

	if (st) {
		st->v1 += 1;
		st->v2 += bytes;
	}
}

static __always_inline void count_verdict(int action)
{
	__u32 key = action == XDP_TX ? XDP_LB_STATS_XDP_TX :
		    action == XDP_PASS ? XDP_LB_STATS_XDP_PASS : XDP_LB_STATS_XDP_DROP;
	struct xdp_lb_stat *st = bpf_map_lookup_elem(&xlb_stats, &key);

	if (st)
		st->v1 += 1;
}

/* New connections in the current one-second window past the limit? */
static __always_inline bool under_flood(void)
{
	__u32 key = XDP_LB_STATS_NEW_CONN;
	struct xdp_lb_stat *conn = bpf_map_lookup_elem(&xlb_stats, &key);
	__u64 now;

	if (!conn)
		return true;
	now = bpf_ktime_get_ns();
	if (now - conn->v2 > XDP_LB_ONE_SEC_NS) {
		conn->v1 = 1;
		conn->v2 = now;
		return false;
	}
	conn->v1 += 1;
	return conn->v1 > XDP_LB_MAX_CONN_RATE;
}

/* The real this flow was sent to before, if the table still has it. */
static __always_inline struct xdp_lb_real *table_lookup(void *table, struct xdp_lb_flow *flow,
							__u32 *pos)
{
	struct xdp_lb_lru_entry *entry = bpf_map_lookup_elem(table, flow);
	__u32 key;

	if (!entry)
		return NULL;
	/* UDP has no FIN or RST: its entries expire instead. */
	if (flow->proto == IPPROTO_UDP) {
		__u64 now = bpf_ktime_get_ns();

		if (now - entry->atime > XDP_LB_UDP_TIMEOUT_NS)
			return NULL;
		entry->atime = now;
	}
	key = entry->pos;
	*pos = key;
	return bpf_map_lookup_elem(&xlb_reals, &key);
}

/* Pick the real from the VIP's consistent-hash ring and remember it. */
static __always_inline bool pick_real(struct xdp_lb_real **real, struct xdp_lb_flow *flow,
				      struct xdp_lb_vip_meta *vip, bool is_v6, void *table,
				      bool is_rst, __u32 *pos)
{
	bool flood = under_flood();
	__u32 hash, slot, real_pos, *ring;

	if (is_v6)
		hash = jhash_2words(jhash2_4words((__u32 *)flow->srcv6, XDP_LB_MAX_VIPS),
				    flow->ports, XDP_LB_CH_RING_SIZE);
	else
		hash = jhash_2words(flow->src, flow->ports, XDP_LB_CH_RING_SIZE);

	slot = XDP_LB_CH_RING_SIZE * vip->vip_num + hash % XDP_LB_CH_RING_SIZE;
	ring = bpf_map_lookup_elem(&xlb_ch_rings, &slot);
	if (!ring)
		return false;
	real_pos = *ring;
	*real = bpf_map_lookup_elem(&xlb_reals, &real_pos);
	if (!*real)
		return false;

	if (!(vip->flags & XDP_LB_F_LRU_BYPASS) && !flood && !is_rst) {
		struct xdp_lb_lru_entry entry = { .pos = real_pos };

		if (flow->proto == IPPROTO_UDP)
			entry.atime = bpf_ktime_get_ns();
		bpf_map_update_elem(table, flow, &entry, BPF_ANY);
	}
	*pos = real_pos;
	return true;
}

/* Count a table miss against its real, if this is the VIP being watched. */
static __always_inline void count_vip_miss(struct xdp_lb_vip *vip, bool is_v6, __u32 real_pos)
{
	struct xdp_lb_vip *watched;
	__u32 key = 0, *cnt;

	watched = bpf_map_lookup_elem(&xlb_vip_miss_stats, &key);
	if (!watched)
		return;
	if (is_v6) {
		if (watched->vipv6[0] != vip->vipv6[0] || watched->vipv6[1] != vip->vipv6[1] ||
		    watched->vipv6[2] != vip->vipv6[2] || watched->vipv6[3] != vip->vipv6[3])
			return;
	} else if (watched->vip != vip->vip) {
		return;
	}
	if (watched->port != vip->port || watched->proto != vip->proto)
		return;
	cnt = bpf_map_lookup_elem(&xlb_lru_miss_stats, &real_pos);
	if (cnt)
		*cnt += 1;
}

/* Not inlined, as the kernel bench's: each packet costs a BPF call too. */
static __noinline int process_packet(struct xdp_md *xdp)
{
	void *data = (void *)(long)xdp->data;
	void *data_end = (void *)(long)xdp->data_end;
	struct ethhdr *eth = data;
	struct xdp_lb_real *dst = NULL;
	struct xdp_lb_vip vip = {};
	struct xdp_lb_flow flow = {};
	struct xdp_lb_vip_meta *vip_meta;
	struct xdp_lb_stat *lru_stat;
	struct xdp_lb_ctl *ctl;
	struct udphdr *ports;
	__be32 tnl_src[4];
	void *table, *l4;
	__u32 real_pos = 0, cpu, key;
	__u16 payload_len;
	__u8 proto;
	int action = XDP_DROP;
	bool is_v6, is_syn = false, is_rst = false;

	if ((void *)(eth + 1) > data_end)
		goto out;
	if (eth->h_proto == bpf_htons(ETH_P_IPV6)) {
		is_v6 = true;
	} else if (eth->h_proto == bpf_htons(ETH_P_IP)) {
		is_v6 = false;
	} else {
		action = XDP_PASS;
		goto out;
	}

	if (is_v6) {
		struct ipv6hdr *ip6h = (void *)(eth + 1);

		if ((void *)(ip6h + 1) > data_end)
			goto out;
		if (ip6h->nexthdr == XDP_LB_IPPROTO_FRAGMENT)
			goto out;
		payload_len = sizeof(struct ipv6hdr) + bpf_ntohs(ip6h->payload_len);
		proto = ip6h->nexthdr;
		__builtin_memcpy(flow.srcv6, &ip6h->saddr, sizeof(flow.srcv6));
		__builtin_memcpy(flow.dstv6, &ip6h->daddr, sizeof(flow.dstv6));
		__builtin_memcpy(vip.vipv6, &ip6h->daddr, sizeof(vip.vipv6));
		l4 = ip6h + 1;
	} else {
		struct iphdr *iph = (void *)(eth + 1);

		if ((void *)(iph + 1) > data_end)
			goto out;
		if (iph->ihl != 5)		/* options */
			goto out;
		if (iph->frag_off & bpf_htons(XDP_LB_FRAG_MASK))
			goto out;
		payload_len = bpf_ntohs(iph->tot_len);
		proto = iph->protocol;
		flow.src = iph->saddr;
		flow.dst = iph->daddr;
		vip.vip = iph->daddr;
		l4 = iph + 1;
	}

	if (proto != IPPROTO_TCP && proto != IPPROTO_UDP) {
		action = XDP_PASS;
		goto out;
	}
	/* TCP and UDP both start with the two ports. */
	ports = l4;
	if ((void *)(ports + 1) > data_end)
		goto out;
	flow.port16[0] = ports->source;
	flow.port16[1] = ports->dest;
	if (proto == IPPROTO_TCP) {
		struct tcphdr *th = l4;

		if ((void *)(th + 1) > data_end)
			goto out;
		is_syn = th->syn;
		is_rst = th->rst;
	}
	flow.proto = proto;
	vip.port = flow.port16[1];
	vip.proto = proto;

	vip_meta = bpf_map_lookup_elem(&xlb_vip_map, &vip);
	if (!vip_meta) {
		action = XDP_PASS;
		goto out;
	}

	key = XDP_LB_STATS_LRU;
	lru_stat = bpf_map_lookup_elem(&xlb_stats, &key);
	if (!lru_stat)
		goto out;
	lru_stat->v1 += 1;

	cpu = bpf_get_smp_processor_id();
	table = bpf_map_lookup_elem(&xlb_lru_mapping, &cpu);
	if (!table)
		goto out;

	/* A SYN starts a new connection: no entry to find. */
	if (!(vip_meta->flags & XDP_LB_F_LRU_BYPASS) && !is_syn)
		dst = table_lookup(table, &flow, &real_pos);
	if (!dst) {
		if (flow.proto == IPPROTO_TCP) {
			struct xdp_lb_stat *miss;

			key = XDP_LB_STATS_LRU_MISS;
			miss = bpf_map_lookup_elem(&xlb_stats, &key);
			if (miss)
				miss->v1 += 1;
		}
		if (!pick_real(&dst, &flow, vip_meta, is_v6, table, is_rst, &real_pos))
			goto out;
		count_vip_miss(&vip, is_v6, real_pos);
		lru_stat->v2 += 1;
	}

	key = 0;
	ctl = bpf_map_lookup_elem(&xlb_ctl_array, &key);
	if (!ctl)
		goto out;
	add_stat(&xlb_stats, vip_meta->vip_num, payload_len);
	add_stat(&xlb_reals_stats, real_pos, payload_len);

	if (is_v6) {
		xdp_lb_tunnel_src_v6(flow.port16[0], flow.srcv6[0], tnl_src);
		if (encap_v6(xdp, tnl_src, dst->dstv6, IPPROTO_IPV6, payload_len, ctl->mac))
			goto out;
	} else if (dst->flags & XDP_LB_F_IPV6) {
		xdp_lb_tunnel_src_v6(flow.port16[0], flow.src, tnl_src);
		if (encap_v6(xdp, tnl_src, dst->dstv6, IPPROTO_IPIP, payload_len, ctl->mac))
			goto out;
	} else {
		if (encap_v4(xdp, xdp_lb_tunnel_src_v4(flow.port16[0], flow.src), dst->dst,
			     payload_len, ctl->mac))
			goto out;
	}
	action = XDP_TX;
out:
	count_verdict(action);
	return action;
}

/* ---- between two packets of a batch ---- */

/* Pull the outer header off again and put the client's Ethernet header back. */
static __always_inline int strip_encap(struct xdp_md *xdp, const struct ethhdr *orig_eth)
{
	void *data = (void *)(long)xdp->data;
	void *data_end = (void *)(long)xdp->data_end;
	struct ethhdr *eth = data;
	int outer;

	if ((void *)(eth + 1) > data_end)
		return -1;
	outer = eth->h_proto == bpf_htons(ETH_P_IPV6) ? (int)sizeof(struct ipv6hdr) :
							 (int)sizeof(struct iphdr);
	if (bpf_xdp_adjust_head(xdp, outer))
		return -1;
	data = (void *)(long)xdp->data;
	data_end = (void *)(long)xdp->data_end;
	eth = data;
	if ((void *)(eth + 1) > data_end)
		return -1;
	__builtin_memcpy(eth, orig_eth, sizeof(*eth));
	return 0;
}

/* xorshift32 step; the new source is its value under flow_mask. */
static __always_inline void new_source(struct xdp_md *xdp, int saddr_off, __u32 *state)
{
	void *data = (void *)(long)xdp->data;
	void *data_end = (void *)(long)xdp->data_end;
	__u32 *saddr = data + saddr_off;

	*state ^= *state << 13;
	*state ^= *state >> 17;
	*state ^= *state << 5;
	if ((void *)(saddr + 1) <= data_end)
		*saddr = *state & flow_mask;
}

/* Flip the source with this run's mask: poison it, or restore it. */
static __always_inline void flip_source(struct xdp_md *xdp, int saddr_off, __u32 mask)
{
	void *data = (void *)(long)xdp->data;
	void *data_end = (void *)(long)xdp->data_end;
	__u32 *saddr = data + saddr_off;

	if ((void *)(saddr + 1) <= data_end)
		*saddr ^= mask;
}

SEC("xdp")
int xdp_lb(struct xdp_md *xdp)
{
	void *data = (void *)(long)xdp->data;
	void *data_end = (void *)(long)xdp->data_end;
	struct ethhdr *eth = data;
	struct ethhdr orig_eth;
	__u32 rand_state = 0, poison = 0;
	int saddr_off;

	if ((void *)(eth + 1) > data_end)
		return XDP_DROP;
	__builtin_memcpy(&orig_eth, eth, sizeof(orig_eth));
	saddr_off = sizeof(struct ethhdr) +
		    (orig_eth.h_proto == bpf_htons(ETH_P_IPV6) ?
		     offsetof(struct ipv6hdr, saddr) : offsetof(struct iphdr, saddr));

	if (flow_mask)
		rand_state = bpf_get_prandom_u32() | 1;
	/* A mask of its own for every run (and CPU): its first packet is a
	 * flow no run has seen. */
	if (cold_lru) {
		batch_gen++;
		poison = (batch_gen + bpf_get_smp_processor_id()) * XDP_LB_KNUTH_MULT;
		flip_source(xdp, saddr_off, poison);
	}

	/* __bt_result: the verdict of the packet just processed. */
	return BPF_TIMING_LOOP(process_packet(xdp), ({
		if (__bt_result == XDP_TX) {
			if (strip_encap(xdp, &orig_eth))
				return XDP_DROP;
			if (rand_state)
				new_source(xdp, saddr_off, &rand_state);
		}
		if (cold_lru)
			flip_source(xdp, saddr_off, poison);
	}));
}

char LICENSE[] SEC("license") = "GPL";
