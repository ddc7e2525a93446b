// SPDX-License-Identifier: MIT
/*
 * xdp-lb: a Katran-style XDP load balancer (bpf/xdp_lb.bpf.c) run through
 * BPF_PROG_TEST_RUN over one built packet per scenario, timed in BPF.
 *
 * Each scenario is the kernel bench's: a packet (TCP or UDP over IPv4 or
 * IPv6, a SYN, an RST, a fragment, IP options, ICMP, ARP), the maps that
 * go with it (the VIP, the consistent-hash rings all pointing at one real,
 * the per-CPU connection tables, warm or cold), and what must come out:
 * the verdict, the packet (encapsulated towards the real, or unchanged)
 * and the counters the program keeps.
 *
 * Setup loads the program, fills the maps, calibrates the batch and then
 * validates the scenario with one test run: verdict, output packet and
 * statistics counters.  A scenario that fails validation fails the run,
 * naming the scenario and what differed, before anything is timed.
 * Producers then test-run the packet in a loop; every run's verdict is
 * checked too.
 *
 * Differences from the kernel bench, deliberate:
 * - the consistent-hash rings (1M slots) are filled by batched updates,
 *   not one syscall per slot: same contents, a second less setup;
 * - the unused stand-alone 100000-entry LRU map the kernel bench's object
 *   also creates is not created (the per-CPU tables are);
 * - every timed run's verdict is checked (the kernel bench ignores it);
 * - the maps are named xlb_* (the kernel bench's names without it), so
 *   that what a run left loaded can be told from other programs' maps;
 * - validate_fault breaks one check on purpose, to test the validation.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/tcp.h>
#include <linux/udp.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bench.h"
#include "bpf_timing_user.h"
#include "xdp_lb.h"
#include "xdp_lb.skel.h"

#define IP4(a, b, c, d) (((__u32)(a) << 24) | ((__u32)(b) << 16) | ((__u32)(c) << 8) | (__u32)(d))

/* The one real every ring slot names, and the IPv6 one for IPv6 tunnels. */
#define REAL_V4		1
#define REAL_V6		2
#define TUNNEL_DST_V4	IP4(192, 168, 1, 2)
static const __u32 tunnel_dst_v6[4] = { 0xfd000000, 0, 0, 2 };

static const __u8 lb_mac[ETH_ALEN] = { 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff };
static const __u8 client_mac[ETH_ALEN] = { 0x11, 0x22, 0x33, 0x44, 0x55, 0x66 };
static const __u8 router_mac[ETH_ALEN] = { 0xde, 0xad, 0xbe, 0xef, 0x00, 0x01 };
static const char payload[16] = "bench___payload!";

#define PKT_MAX		256
#define OUT_MAX		(PKT_MAX + (int)sizeof(struct ipv6hdr))
#define IPV4_MF		0x2000

/* How many packets of a validation run miss the connection table. */
enum miss_rule {
	MISS_NONE,	/* all hits */
	MISS_ALL,	/* every packet */
	MISS_FIRST,	/* the run's first (new) flow only */
};

/* name, description: the kernel bench's, in its order. */
#define XDP_LB_SCENARIOS(X)							\
	X(TCP_V4_LRU_HIT, "tcp-v4-lru-hit", "IPv4 TCP, LRU hit, IPIP encap")	\
	X(TCP_V4_CH, "tcp-v4-ch", "IPv4 TCP, CH (LRU bypass), IPIP encap")	\
	X(TCP_V6_LRU_HIT, "tcp-v6-lru-hit", "IPv6 TCP, LRU hit, IP6IP6 encap")	\
	X(TCP_V6_CH, "tcp-v6-ch", "IPv6 TCP, CH (LRU bypass), IP6IP6 encap")	\
	X(UDP_V4_LRU_HIT, "udp-v4-lru-hit", "IPv4 UDP, LRU hit, IPIP encap")	\
	X(UDP_V6_LRU_HIT, "udp-v6-lru-hit", "IPv6 UDP, LRU hit, IP6IP6 encap")	\
	X(TCP_V4V6_LRU_HIT, "tcp-v4v6-lru-hit", "IPv4 TCP, LRU hit, IPv4-in-IPv6 encap") \
	X(TCP_V4_LRU_DIVERSE, "tcp-v4-lru-diverse", "IPv4 TCP, diverse flows, warm LRU") \
	X(TCP_V4_CH_DIVERSE, "tcp-v4-ch-diverse", "IPv4 TCP, diverse flows, CH (LRU bypass)") \
	X(TCP_V6_LRU_DIVERSE, "tcp-v6-lru-diverse", "IPv6 TCP, diverse flows, warm LRU") \
	X(TCP_V6_CH_DIVERSE, "tcp-v6-ch-diverse", "IPv6 TCP, diverse flows, CH (LRU bypass)") \
	X(UDP_V4_LRU_DIVERSE, "udp-v4-lru-diverse", "IPv4 UDP, diverse flows, warm LRU") \
	X(TCP_V4_LRU_MISS, "tcp-v4-lru-miss", "IPv4 TCP, LRU miss (16M flow space), CH lookup") \
	X(UDP_V4_LRU_MISS, "udp-v4-lru-miss", "IPv4 UDP, LRU miss (16M flow space), CH lookup") \
	X(TCP_V4_LRU_WARMUP, "tcp-v4-lru-warmup", "IPv4 TCP, 4K flows, ~50% LRU miss") \
	X(TCP_V4_SYN, "tcp-v4-syn", "IPv4 TCP SYN, skip LRU, CH + LRU insert") \
	X(TCP_V4_RST_MISS, "tcp-v4-rst-miss", "IPv4 TCP RST, CH lookup, no LRU insert") \
	X(PASS_V4_NO_VIP, "pass-v4-no-vip", "IPv4 TCP, unknown VIP, XDP_PASS")	\
	X(PASS_V6_NO_VIP, "pass-v6-no-vip", "IPv6 TCP, unknown VIP, XDP_PASS")	\
	X(PASS_V4_ICMP, "pass-v4-icmp", "IPv4 ICMP, non-TCP/UDP protocol, XDP_PASS") \
	X(PASS_NON_IP, "pass-non-ip", "Non-IP (ARP), earliest XDP_PASS exit")	\
	X(DROP_V4_FRAG, "drop-v4-frag", "IPv4 fragmented, XDP_DROP")		\
	X(DROP_V4_OPTIONS, "drop-v4-options", "IPv4 with IP options (ihl>5), XDP_DROP") \
	X(DROP_V6_FRAG, "drop-v6-frag", "IPv6 fragment extension header, XDP_DROP")

#define AS_ENUM(id, name, desc) SC_##id,
#define AS_NAME(id, name, desc) name,
#define AS_DESC(id, name, desc) desc,
enum scenario_id { XDP_LB_SCENARIOS(AS_ENUM) NR_SCENARIOS };
static const char *const scenario_names[] = { XDP_LB_SCENARIOS(AS_NAME) NULL };
static const char *const scenario_descs[] = { XDP_LB_SCENARIOS(AS_DESC) NULL };

/* Addresses in host order; the packet and the maps get network order. */
struct scenario {
	int verdict;			/* XDP_TX, XDP_PASS, XDP_DROP */
	bool v6;			/* the client's packet is IPv6 */
	bool v6_tunnel;			/* the real takes IPv6 tunnels */
	__u16 eth_proto;		/* 0: IPv4 or IPv6 as v6 says */
	__u8 proto;
	__u32 vip, src;
	__u32 vip6[4], src6[4];
	__u16 dport, sport;
	__u32 vip_flags, vip_num;
	bool warm;			/* the flow is in every CPU's table */
	bool cold;			/* each run's first packet is a new flow */
	bool frag, ip_options, syn, rst;
	__u32 flow_mask;		/* nonzero: random sources, masked */
	__u32 fixed_batch;		/* nonzero: batch size, not calibrated */
	enum miss_rule miss;
};

#define ENCAP_V4 .verdict = XDP_TX
#define ENCAP_V6 .verdict = XDP_TX, .v6 = true, .v6_tunnel = true
#define V6(a) { (a), 0, 0, 1 }
#define V6_2(a) { (a), 0, 0, 2 }
#define V6_3(a) { (a), 0, 0, 3 }

static const struct scenario scenarios[NR_SCENARIOS] = {
	/* one flow */
	[SC_TCP_V4_LRU_HIT] = { ENCAP_V4, .proto = IPPROTO_TCP,
		.vip = IP4(10, 10, 1, 1), .dport = 80, .src = IP4(10, 10, 2, 1), .sport = 12345,
		.warm = true, .miss = MISS_NONE },
	[SC_TCP_V4_CH] = { ENCAP_V4, .proto = IPPROTO_TCP,
		.vip = IP4(10, 10, 1, 2), .dport = 80, .src = IP4(10, 10, 2, 2), .sport = 54321,
		.vip_flags = XDP_LB_F_LRU_BYPASS, .vip_num = 1, .miss = MISS_ALL },
	[SC_TCP_V6_LRU_HIT] = { ENCAP_V6, .proto = IPPROTO_TCP,
		.vip6 = V6(0xfd000100), .dport = 80, .src6 = V6(0xfd000200), .sport = 12345,
		.vip_num = 10, .warm = true, .miss = MISS_NONE },
	[SC_TCP_V6_CH] = { ENCAP_V6, .proto = IPPROTO_TCP,
		.vip6 = V6_2(0xfd000100), .dport = 80, .src6 = V6_2(0xfd000200), .sport = 54321,
		.vip_flags = XDP_LB_F_LRU_BYPASS, .vip_num = 12, .miss = MISS_ALL },
	[SC_UDP_V4_LRU_HIT] = { ENCAP_V4, .proto = IPPROTO_UDP,
		.vip = IP4(10, 10, 1, 1), .dport = 443, .src = IP4(10, 10, 3, 1), .sport = 11111,
		.vip_num = 2, .warm = true, .miss = MISS_NONE },
	[SC_UDP_V6_LRU_HIT] = { ENCAP_V6, .proto = IPPROTO_UDP,
		.vip6 = V6(0xfd000100), .dport = 443, .src6 = V6_3(0xfd000200), .sport = 22222,
		.vip_num = 14, .warm = true, .miss = MISS_NONE },
	[SC_TCP_V4V6_LRU_HIT] = { .verdict = XDP_TX, .v6_tunnel = true, .proto = IPPROTO_TCP,
		.vip = IP4(10, 10, 1, 4), .dport = 80, .src = IP4(10, 10, 2, 4), .sport = 12347,
		.vip_num = 13, .warm = true, .miss = MISS_NONE },

	/* 4096 sources */
	[SC_TCP_V4_LRU_DIVERSE] = { ENCAP_V4, .proto = IPPROTO_TCP,
		.vip = IP4(10, 10, 1, 1), .dport = 80, .src = IP4(10, 10, 2, 1), .sport = 12345,
		.warm = true, .flow_mask = 0xFFF, .miss = MISS_NONE },
	[SC_TCP_V4_CH_DIVERSE] = { ENCAP_V4, .proto = IPPROTO_TCP,
		.vip = IP4(10, 10, 1, 2), .dport = 80, .src = IP4(10, 10, 2, 2), .sport = 54321,
		.vip_flags = XDP_LB_F_LRU_BYPASS, .vip_num = 1, .flow_mask = 0xFFF,
		.miss = MISS_ALL },
	[SC_TCP_V6_LRU_DIVERSE] = { ENCAP_V6, .proto = IPPROTO_TCP,
		.vip6 = V6(0xfd000100), .dport = 80, .src6 = V6(0xfd000200), .sport = 12345,
		.vip_num = 10, .warm = true, .flow_mask = 0xFFF, .miss = MISS_NONE },
	[SC_TCP_V6_CH_DIVERSE] = { ENCAP_V6, .proto = IPPROTO_TCP,
		.vip6 = V6_2(0xfd000100), .dport = 80, .src6 = V6_2(0xfd000200), .sport = 54321,
		.vip_flags = XDP_LB_F_LRU_BYPASS, .vip_num = 12, .flow_mask = 0xFFF,
		.miss = MISS_ALL },
	[SC_UDP_V4_LRU_DIVERSE] = { ENCAP_V4, .proto = IPPROTO_UDP,
		.vip = IP4(10, 10, 1, 1), .dport = 443, .src = IP4(10, 10, 3, 1), .sport = 11111,
		.vip_num = 2, .warm = true, .flow_mask = 0xFFF, .miss = MISS_NONE },

	/* connection table under stress */
	[SC_TCP_V4_LRU_MISS] = { ENCAP_V4, .proto = IPPROTO_TCP,
		.vip = IP4(10, 10, 1, 1), .dport = 80, .src = IP4(10, 10, 2, 1), .sport = 12345,
		.flow_mask = 0xFFFFFF, .cold = true, .miss = MISS_FIRST },
	[SC_UDP_V4_LRU_MISS] = { ENCAP_V4, .proto = IPPROTO_UDP,
		.vip = IP4(10, 10, 1, 1), .dport = 443, .src = IP4(10, 10, 3, 1), .sport = 11111,
		.vip_num = 2, .flow_mask = 0xFFFFFF, .cold = true, .miss = MISS_FIRST },
	[SC_TCP_V4_LRU_WARMUP] = { ENCAP_V4, .proto = IPPROTO_TCP,
		.vip = IP4(10, 10, 1, 1), .dport = 80, .src = IP4(10, 10, 2, 1), .sport = 12345,
		.flow_mask = 0xFFF, .cold = true, .fixed_batch = 6500, .miss = MISS_FIRST },

	/* TCP flags */
	[SC_TCP_V4_SYN] = { ENCAP_V4, .proto = IPPROTO_TCP,
		.vip = IP4(10, 10, 1, 1), .dport = 80, .src = IP4(10, 10, 8, 2), .sport = 60001,
		.syn = true, .miss = MISS_ALL },
	[SC_TCP_V4_RST_MISS] = { ENCAP_V4, .proto = IPPROTO_TCP,
		.vip = IP4(10, 10, 1, 1), .dport = 80, .src = IP4(10, 10, 8, 1), .sport = 60000,
		.flow_mask = 0xFFFFFF, .cold = true, .rst = true, .miss = MISS_ALL },

	/* early exits */
	[SC_PASS_V4_NO_VIP] = { .verdict = XDP_PASS, .proto = IPPROTO_TCP,
		.vip = IP4(10, 10, 9, 9), .dport = 80, .src = IP4(10, 10, 4, 1), .sport = 33333 },
	[SC_PASS_V6_NO_VIP] = { .verdict = XDP_PASS, .v6 = true, .proto = IPPROTO_TCP,
		.vip6 = V6(0xfd009900), .dport = 80, .src6 = V6(0xfd000400), .sport = 33333 },
	[SC_PASS_V4_ICMP] = { .verdict = XDP_PASS, .proto = IPPROTO_ICMP,
		.vip = IP4(10, 10, 1, 1), .src = IP4(10, 10, 6, 1) },
	[SC_PASS_NON_IP] = { .verdict = XDP_PASS, .eth_proto = ETH_P_ARP },
	[SC_DROP_V4_FRAG] = { .verdict = XDP_DROP, .proto = IPPROTO_TCP,
		.vip = IP4(10, 10, 1, 1), .dport = 80, .src = IP4(10, 10, 5, 1), .sport = 44444,
		.frag = true },
	[SC_DROP_V4_OPTIONS] = { .verdict = XDP_DROP, .proto = IPPROTO_TCP,
		.vip = IP4(10, 10, 1, 1), .dport = 80, .src = IP4(10, 10, 7, 1), .sport = 55555,
		.ip_options = true },
	[SC_DROP_V6_FRAG] = { .verdict = XDP_DROP, .v6 = true, .proto = IPPROTO_TCP,
		.vip6 = V6(0xfd000100), .dport = 80, .src6 = V6(0xfd000500), .sport = 44444,
		.frag = true },
};

/* Breaks one validation check on purpose, so that tests can see it fail. */
enum validate_fault {
	FAULT_NONE,
	FAULT_PACKET,		/* the router's MAC differs from the one expected */
	FAULT_VERDICT,		/* the VIP is left out (encapsulating scenarios) */
	FAULT_COUNTERS,		/* the counters are not reset before validating */
};

static const char *const fault_names[] = {
	[FAULT_NONE] = "none",
	[FAULT_PACKET] = "packet",
	[FAULT_VERDICT] = "verdict",
	[FAULT_COUNTERS] = "counters",
	NULL,
};

static const struct bench_param_def xdp_lb_params[] = {
	{ "scenario", "--scenario", BENCH_PARAM_CHOICE, -1, 0, NR_SCENARIOS - 1, scenario_names,
	  "scenario to benchmark (--list-scenarios lists them)", .choice_help = scenario_descs,
	  .required = true },
	{ "validate_fault", NULL, BENCH_PARAM_CHOICE, FAULT_NONE, 0, FAULT_COUNTERS, fault_names,
	  "break one validation check on purpose, to test that it fails the run: the output "
	  "packet, the verdict (scenarios that encapsulate) or the counters" },
	{ 0 },
};

static const char *const xdp_lb_extra[] = { BENCH_BPF_TIMING_EXTRA, NULL };

struct xdp_lb_state {
	struct xdp_lb_bpf *skel;
	const struct scenario *sc;
	int prog_fd;
	int nr_cpus;			/* possible CPUs: per-CPU maps and tables */
	int lru_fds[XDP_LB_MAX_CPUS];
	int nr_lru;
	__u8 pkt[PKT_MAX];
	__u32 pkt_len;
	__u8 want[OUT_MAX];		/* what the validation run must return */
	__u32 want_len;
	struct bench_bpf_timing timing;
	atomic_ullong bad_verdicts;	/* timed runs that returned another verdict */
	atomic_int last_verdict;
};

static const char *verdict_name(int v)
{
	switch (v) {
	case XDP_DROP: return "XDP_DROP";
	case XDP_PASS: return "XDP_PASS";
	case XDP_TX: return "XDP_TX";
	default: return "an unexpected verdict";
	}
}

static void to_be32x4(__be32 *dst, const __u32 *src)
{
	for (int i = 0; i < 4; i++)
		dst[i] = htonl(src[i]);
}

static __u16 ip_checksum(const void *hdr, int len)
{
	const __u16 *w = hdr;
	__u32 sum = 0;

	for (int i = 0; i < len / 2; i++)
		sum += w[i];
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (__u16)~sum;
}

/* The TCP or UDP header; returns its length. */
static __u32 put_l4(const struct scenario *sc, __u8 *p)
{
	if (sc->proto == IPPROTO_TCP) {
		struct tcphdr th = {
			.source = htons(sc->sport), .dest = htons(sc->dport),
			.doff = 5, .syn = sc->syn, .rst = sc->rst, .window = htons(8192),
		};

		memcpy(p, &th, sizeof(th));
		return sizeof(th);
	}
	if (sc->proto == IPPROTO_UDP) {
		struct udphdr uh = {
			.source = htons(sc->sport), .dest = htons(sc->dport),
			.len = htons(sizeof(uh) + sizeof(payload)),
		};

		memcpy(p, &uh, sizeof(uh));
		return sizeof(uh);
	}
	return 0;
}

/* The client's packet, as the kernel bench builds it. */
static void build_packet(struct xdp_lb_state *st)
{
	const struct scenario *sc = st->sc;
	__u16 proto = sc->eth_proto ? sc->eth_proto : sc->v6 ? ETH_P_IPV6 : ETH_P_IP;
	struct ethhdr eth = { .h_proto = htons(proto) };
	__u8 *p = st->pkt;
	__u32 off = sizeof(eth), l3 = off;

	memcpy(eth.h_dest, lb_mac, ETH_ALEN);
	memcpy(eth.h_source, client_mac, ETH_ALEN);
	memcpy(p, &eth, sizeof(eth));

	if (proto == ETH_P_IPV6) {
		struct ipv6hdr ip6h = { .version = 6, .hop_limit = 64,
					.nexthdr = sc->frag ? XDP_LB_IPPROTO_FRAGMENT : sc->proto };

		to_be32x4((__be32 *)&ip6h.saddr, sc->src6);
		to_be32x4((__be32 *)&ip6h.daddr, sc->vip6);
		off += sizeof(ip6h);
		if (sc->frag) {		/* an 8-byte fragment header, first fragment */
			memset(p + off, 0, 8);
			p[off] = sc->proto;
			off += 8;
		}
		off += put_l4(sc, p + off);
		memcpy(p + off, payload, sizeof(payload));
		off += sizeof(payload);
		ip6h.payload_len = htons(off - l3 - sizeof(ip6h));
		memcpy(p + l3, &ip6h, sizeof(ip6h));
	} else if (proto == ETH_P_IP) {
		struct iphdr iph = {
			.version = 4, .ihl = sc->ip_options ? 6 : 5, .ttl = 64,
			.protocol = sc->proto, .saddr = htonl(sc->src), .daddr = htonl(sc->vip),
			.frag_off = sc->frag ? htons(IPV4_MF) : 0,
		};

		off += sizeof(iph);
		if (sc->ip_options) {	/* one word of NOP options */
			memset(p + off, 1, 4);
			off += 4;
		}
		off += put_l4(sc, p + off);
		memcpy(p + off, payload, sizeof(payload));
		off += sizeof(payload);
		iph.tot_len = htons(off - l3);
		iph.check = ip_checksum(&iph, sizeof(iph));
		memcpy(p + l3, &iph, sizeof(iph));
	} else {
		memcpy(p + off, payload, sizeof(payload));
		off += sizeof(payload);
	}
	st->pkt_len = off;
}

/* What the program must send: the packet unchanged for XDP_PASS, else the
 * client's packet in a tunnel to the real, towards the router. */
static void build_expected(struct xdp_lb_state *st)
{
	const struct scenario *sc = st->sc;
	__u32 inner = st->pkt_len - sizeof(struct ethhdr), off = sizeof(struct ethhdr);
	__u16 sport = htons(sc->sport);
	struct ethhdr eth = { .h_proto = htons(sc->v6_tunnel ? ETH_P_IPV6 : ETH_P_IP) };
	__u8 *p = st->want;

	st->want_len = 0;
	if (sc->verdict == XDP_DROP)
		return;
	if (sc->verdict == XDP_PASS) {
		memcpy(p, st->pkt, st->pkt_len);
		st->want_len = st->pkt_len;
		return;
	}
	memcpy(eth.h_dest, router_mac, ETH_ALEN);
	memcpy(eth.h_source, lb_mac, ETH_ALEN);
	memcpy(p, &eth, sizeof(eth));
	if (sc->v6_tunnel) {
		struct ipv6hdr ip6h = { .version = 6, .hop_limit = 64,
					.nexthdr = sc->v6 ? IPPROTO_IPV6 : IPPROTO_IPIP,
					.payload_len = htons(inner) };

		xdp_lb_tunnel_src_v6(sport, htonl(sc->v6 ? sc->src6[0] : sc->src),
				     (__be32 *)&ip6h.saddr);
		to_be32x4((__be32 *)&ip6h.daddr, tunnel_dst_v6);
		memcpy(p + off, &ip6h, sizeof(ip6h));
		off += sizeof(ip6h);
	} else {
		struct iphdr iph = {
			.version = 4, .ihl = sizeof(iph) >> 2, .protocol = IPPROTO_IPIP,
			.tot_len = htons(inner + sizeof(iph)), .ttl = 64,
			.saddr = xdp_lb_tunnel_src_v4(sport, htonl(sc->src)),
			.daddr = htonl(TUNNEL_DST_V4),
		};

		iph.check = ip_checksum(&iph, sizeof(iph));
		memcpy(p + off, &iph, sizeof(iph));
		off += sizeof(iph);
	}
	memcpy(p + off, st->pkt + sizeof(struct ethhdr), inner);
	st->want_len = off + inner;
}

static void vip_key(const struct scenario *sc, struct xdp_lb_vip *key)
{
	memset(key, 0, sizeof(*key));
	if (sc->v6)
		to_be32x4(key->vipv6, sc->vip6);
	else
		key->vip = htonl(sc->vip);
	key->port = htons(sc->dport);
	key->proto = sc->proto;
}

static void flow_key(const struct scenario *sc, struct xdp_lb_flow *key)
{
	memset(key, 0, sizeof(*key));
	if (sc->v6) {
		to_be32x4(key->srcv6, sc->src6);
		to_be32x4(key->dstv6, sc->vip6);
	} else {
		key->src = htonl(sc->src);
		key->dst = htonl(sc->vip);
	}
	key->proto = sc->proto;
	key->port16[0] = htons(sc->sport);
	key->port16[1] = htons(sc->dport);
}

#define RING_CHUNK XDP_LB_CH_RING_SIZE

/* Every slot of every ring names REAL_V4: one batched update per ring. */
static int fill_rings(int fd)
{
	__u32 *keys = malloc(RING_CHUNK * sizeof(*keys));
	__u32 *vals = malloc(RING_CHUNK * sizeof(*vals));
	int err = 0;

	if (!keys || !vals) {
		err = -ENOMEM;
		goto cleanup;
	}
	for (__u32 i = 0; i < RING_CHUNK; i++)
		vals[i] = REAL_V4;
	for (__u32 base = 0; base < XDP_LB_CH_RINGS_SIZE && !err; base += RING_CHUNK) {
		__u32 count = RING_CHUNK;

		for (__u32 i = 0; i < RING_CHUNK; i++)
			keys[i] = base + i;
		if (bpf_map_update_batch(fd, keys, vals, &count, NULL))
			err = -errno;
	}
cleanup:
	free(keys);
	free(vals);
	return err;
}

static __u64 monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* One connection table per possible CPU, in the outer array; a warm
 * scenario's flow goes into each, so that any CPU finds it. */
static int make_tables(struct bench_ctx *ctx, struct xdp_lb_state *st)
{
	const struct scenario *sc = st->sc;
	int outer = bpf_map__fd(st->skel->maps.xlb_lru_mapping);
	struct xdp_lb_lru_entry entry = { .pos = sc->v6_tunnel ? REAL_V6 : REAL_V4 };
	struct xdp_lb_flow flow;

	for (int i = 0; i < st->nr_cpus; i++) {
		__u32 cpu = i;
		int fd = bpf_map_create(BPF_MAP_TYPE_LRU_HASH, "xlb_lru", sizeof(struct xdp_lb_flow),
					sizeof(struct xdp_lb_lru_entry), XDP_LB_LRU_SIZE, NULL);

		if (fd < 0)
			return bench_fail(ctx, BENCH_ERR_OS, errno,
					  "%s: creating CPU %d's connection table: %s",
					  ctx->bench->name, i, strerror(errno));
		st->lru_fds[st->nr_lru++] = fd;
		if (bpf_map_update_elem(outer, &cpu, &fd, BPF_ANY))
			return bench_fail(ctx, BENCH_ERR_OS, errno,
					  "%s: putting CPU %d's connection table in xlb_lru_mapping: %s",
					  ctx->bench->name, i, strerror(errno));
	}
	if (!sc->warm)
		return 0;
	flow_key(sc, &flow);
	if (sc->proto == IPPROTO_UDP)
		entry.atime = monotonic_ns();
	for (int i = 0; i < st->nr_lru; i++)
		if (bpf_map_update_elem(st->lru_fds[i], &flow, &entry, BPF_ANY))
			return bench_fail(ctx, BENCH_ERR_OS, errno,
					  "%s: adding the flow to CPU %d's connection table: %s",
					  ctx->bench->name, i, strerror(errno));
	return 0;
}

static int fill_maps(struct bench_ctx *ctx, struct xdp_lb_state *st)
{
	const struct scenario *sc = st->sc;
	struct xdp_lb_bpf *skel = st->skel;
	enum validate_fault fault = bench_param(ctx, "validate_fault");
	struct xdp_lb_real real_v4 = { .dst = htonl(TUNNEL_DST_V4) };
	struct xdp_lb_real real_v6 = { .flags = XDP_LB_F_IPV6 };
	struct xdp_lb_ctl ctl = { 0 };
	struct xdp_lb_vip vip;
	__u32 key;
	int err;

	if (sc->verdict == XDP_TX && fault != FAULT_VERDICT) {
		struct xdp_lb_vip_meta meta = { .flags = sc->vip_flags, .vip_num = sc->vip_num };

		vip_key(sc, &vip);
		if (bpf_map_update_elem(bpf_map__fd(skel->maps.xlb_vip_map), &vip, &meta, BPF_ANY))
			goto fail;
	}
	err = fill_rings(bpf_map__fd(skel->maps.xlb_ch_rings));
	if (err) {
		errno = -err;
		goto fail;
	}
	memcpy(ctl.mac, router_mac, ETH_ALEN);
	if (fault == FAULT_PACKET)
		ctl.mac[ETH_ALEN - 1] ^= 0xff;
	key = 0;
	if (bpf_map_update_elem(bpf_map__fd(skel->maps.xlb_ctl_array), &key, &ctl, BPF_ANY))
		goto fail;
	to_be32x4(real_v4.dstv6, tunnel_dst_v6);
	to_be32x4(real_v6.dstv6, tunnel_dst_v6);
	key = REAL_V4;
	if (bpf_map_update_elem(bpf_map__fd(skel->maps.xlb_reals), &key, &real_v4, BPF_ANY))
		goto fail;
	key = REAL_V6;
	if (bpf_map_update_elem(bpf_map__fd(skel->maps.xlb_reals), &key, &real_v6, BPF_ANY))
		goto fail;
	err = make_tables(ctx, st);
	if (err)
		return err;
	if (sc->verdict == XDP_TX) {
		vip_key(sc, &vip);
		key = 0;
		if (bpf_map_update_elem(bpf_map__fd(skel->maps.xlb_vip_miss_stats), &key, &vip, BPF_ANY))
			goto fail;
	}
	return 0;
fail:
	return bench_fail(ctx, BENCH_ERR_OS, errno, "%s: filling the load balancer's maps: %s",
			  ctx->bench->name, strerror(errno));
}

/* One test run of the scenario's packet; the verdict in *verdict. */
static int run_once(struct xdp_lb_state *st, void *out, __u32 *out_len, int *verdict)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = st->pkt, .data_size_in = st->pkt_len,
		    .data_out = out, .data_size_out = out ? OUT_MAX : 0, .repeat = 1);

	if (bpf_prog_test_run_opts(st->prog_fd, &opts))
		return -errno;
	*verdict = (int)opts.retval;
	if (out_len)
		*out_len = opts.data_size_out;
	return 0;
}

/* Counter key's v1 and v2 summed over CPUs. */
static int read_stat(struct xdp_lb_state *st, __u32 key, __u64 *v1, __u64 *v2)
{
	struct xdp_lb_stat vals[XDP_LB_MAX_CPUS];

	*v1 = *v2 = 0;
	if (bpf_map_lookup_elem(bpf_map__fd(st->skel->maps.xlb_stats), &key, vals))
		return -errno;
	for (int i = 0; i < st->nr_cpus; i++) {
		*v1 += vals[i].v1;
		*v2 += vals[i].v2;
	}
	return 0;
}

static int reset_stats(struct xdp_lb_state *st)
{
	struct xdp_lb_stat zero[XDP_LB_MAX_CPUS] = { 0 };

	for (__u32 key = 0; key < XDP_LB_STATS_SIZE; key++)
		if (bpf_map_update_elem(bpf_map__fd(st->skel->maps.xlb_stats), &key, zero, BPF_ANY))
			return -errno;
	return 0;
}

/* Append to a validation failure message. */
static void say(char *msg, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void say(char *msg, size_t size, const char *fmt, ...)
{
	size_t len = strlen(msg);
	va_list ap;

	if (len >= size - 1)
		return;
	va_start(ap, fmt);
	vsnprintf(msg + len, size - len, fmt, ap);
	va_end(ap);
}

static void say_packet_diff(char *msg, size_t size, const __u8 *got, __u32 got_len,
			    const __u8 *want, __u32 want_len)
{
	__u32 n = got_len > want_len ? got_len : want_len, shown = 0;

	say(msg, size, "; output packet differs: %u bytes, expected %u", got_len, want_len);
	for (__u32 i = 0; i < n && shown < 8; i++) {
		int g = i < got_len ? got[i] : -1, w = i < want_len ? want[i] : -1;

		if (g == w)
			continue;
		say(msg, size, "%s offset 0x%03x: got %s%02x, expected %s%02x", shown ? "," : ":",
		    i, g < 0 ? "none/" : "0x", g < 0 ? 0 : g, w < 0 ? "none/" : "0x", w < 0 ? 0 : w);
		shown++;
	}
}

static int check_counters(struct xdp_lb_state *st, char *msg, size_t size)
{
	const struct scenario *sc = st->sc;
	__u64 n = (__u64)st->timing.batch_iters + 1;	/* the timed packets and the last one */
	__u64 verdicts, packets, misses, tcp_misses, unused, want_misses;
	__u32 key = sc->verdict == XDP_TX ? XDP_LB_STATS_XDP_TX :
		    sc->verdict == XDP_PASS ? XDP_LB_STATS_XDP_PASS : XDP_LB_STATS_XDP_DROP;
	int err;

	err = read_stat(st, key, &verdicts, &unused);
	if (!err)
		err = read_stat(st, XDP_LB_STATS_LRU, &packets, &misses);
	if (!err)
		err = read_stat(st, XDP_LB_STATS_LRU_MISS, &tcp_misses, &unused);
	if (err)
		return err;
	if (verdicts != n)
		say(msg, size, "; %s counted %llu packets, expected %llu", verdict_name(sc->verdict),
		    (unsigned long long)verdicts, (unsigned long long)n);
	if (sc->verdict != XDP_TX)
		return 0;
	if (packets != n)
		say(msg, size, "; VIP packets counted %llu, expected %llu",
		    (unsigned long long)packets, (unsigned long long)n);
	want_misses = sc->miss == MISS_ALL ? n : sc->miss == MISS_FIRST ? 1 : 0;
	if (misses != want_misses)
		say(msg, size, "; connection table misses %llu, expected %llu",
		    (unsigned long long)misses, (unsigned long long)want_misses);
	if (sc->proto == IPPROTO_TCP && misses && tcp_misses != misses)
		say(msg, size, "; TCP connection table misses %llu, expected %llu",
		    (unsigned long long)tcp_misses, (unsigned long long)misses);
	return 0;
}

/* One run of batch_iters + 1 packets: its verdict, its last packet and the
 * counters it moved must be the scenario's. */
static int validate_scenario(struct bench_ctx *ctx, struct xdp_lb_state *st)
{
	const struct scenario *sc = st->sc;
	const char *name = scenario_names[sc - scenarios];
	__u8 out[OUT_MAX];
	__u32 out_len = 0;
	char msg[BENCH_MSG_LEN] = "";
	int verdict, err;

	err = run_once(st, out, &out_len, &verdict);
	if (err)
		return bench_fail(ctx, BENCH_ERR_OS, -err, "%s: scenario %s: test run: %s",
				  ctx->bench->name, name, strerror(-err));
	if (verdict != sc->verdict) {
		say(msg, sizeof(msg), "; verdict %s (%d), expected %s", verdict_name(verdict),
		    verdict, verdict_name(sc->verdict));
	} else {
		/* A cold scenario's last packet has a source of the run's own. */
		if (sc->verdict != XDP_DROP && !sc->cold &&
		    (out_len != st->want_len || memcmp(out, st->want, st->want_len)))
			say_packet_diff(msg, sizeof(msg), out, out_len, st->want, st->want_len);
		err = check_counters(st, msg, sizeof(msg));
		if (err)
			return bench_fail(ctx, BENCH_ERR_OS, -err, "%s: scenario %s: reading stats: %s",
					  ctx->bench->name, name, strerror(-err));
	}
	if (!msg[0])
		return 0;
	/* A fault asked for says so, as the selftest's, so that it is not
	 * taken for a real one. */
	return bench_fail(ctx, BENCH_ERR_BENCH, EPROTO,
			  "%s: scenario %s failed validation (one run of %u packets)%s%s",
			  ctx->bench->name, name, st->timing.batch_iters + 1, msg,
			  bench_param(ctx, "validate_fault") != FAULT_NONE ?
			  " (validate_fault: broken on purpose)" : "");
}

/* The timing core's run: one test run, its verdict not looked at. */
static int run_timed(void *arg)
{
	int verdict;

	return run_once(arg, NULL, NULL, &verdict);
}

static int xdp_lb_validate(struct bench_ctx *ctx)
{
	int scenario = (int)bench_param(ctx, "scenario");
	int cpus = libbpf_num_possible_cpus();

	/* scenario is required: bench_validate() saw it given. */
	if (bench_param(ctx, "validate_fault") == FAULT_VERDICT &&
	    scenarios[scenario].verdict != XDP_TX)
		return bench_fail(ctx, BENCH_ERR_VALUE, EINVAL,
				  "validate_fault='verdict' with scenario='%s': it leaves the VIP "
				  "out, which changes only the verdict of a scenario that "
				  "encapsulates (XDP_TX); this one's is %s", scenario_names[scenario],
				  verdict_name(scenarios[scenario].verdict));
	if (cpus < 0)
		return bench_fail(ctx, BENCH_ERR_OS, -cpus, "%s: counting possible CPUs: %s",
				  ctx->bench->name, strerror(-cpus));
	if (cpus > XDP_LB_MAX_CPUS)
		return bench_fail(ctx, BENCH_ERR_UNSUPPORTED, E2BIG,
				  "%s: this machine has %d possible CPUs; the load balancer keeps "
				  "a connection table per CPU for at most %d", ctx->bench->name,
				  cpus, XDP_LB_MAX_CPUS);
	return 0;
}

static int xdp_lb_setup(struct bench_ctx *ctx)
{
	struct xdp_lb_state *st;
	const struct scenario *sc;
	int err, verdict;

	st = calloc(1, sizeof(*st));
	if (!st)
		return -ENOMEM;
	ctx->priv = st;
	sc = st->sc = &scenarios[bench_param(ctx, "scenario")];
	st->nr_cpus = libbpf_num_possible_cpus();
	err = bench_bpf_timing_require(ctx);
	if (err)
		return err;

	st->skel = xdp_lb_bpf__open();
	if (!st->skel)
		return bench_fail(ctx, BENCH_ERR_BENCH, errno, "%s: opening the BPF object: %s",
				  ctx->bench->name, strerror(errno));
	err = xdp_lb_bpf__load(st->skel);
	if (err)
		return bench_fail_bpf(ctx, err, "XDP programs with may_goto loops",
				      "BPF_PROG_LOAD of xdp_lb: %s", strerror(-err));
	st->prog_fd = bpf_program__fd(st->skel->progs.xdp_lb);

	build_packet(st);
	build_expected(st);
	err = fill_maps(ctx, st);
	if (err)
		return err;

	BENCH_BPF_TIMING_INIT(&st->timing, st->skel);
	if (sc->fixed_batch) {
		bench_bpf_timing_fixed(&st->timing, sc->fixed_batch);
	} else {
		err = bench_bpf_timing_calibrate(ctx, &st->timing, run_timed, st);
		if (err)
			return err;
	}
	/* A cold table: one run leaves the scenario's own flow in it, so that
	 * the validation run's one miss is its poisoned first packet. */
	if (sc->cold) {
		st->skel->bss->cold_lru = 1;
		err = run_once(st, NULL, NULL, &verdict);
		if (err)
			return bench_fail(ctx, BENCH_ERR_OS, -err, "%s: test run: %s",
					  ctx->bench->name, strerror(-err));
	}
	if (bench_param(ctx, "validate_fault") != FAULT_COUNTERS) {
		err = reset_stats(st);
		if (err)
			return bench_fail(ctx, BENCH_ERR_OS, -err, "%s: resetting stats: %s",
					  ctx->bench->name, strerror(-err));
	}
	err = validate_scenario(ctx, st);
	if (err)
		return err;
	/* Only now: validation checks the one flow the packet carries. */
	st->skel->bss->flow_mask = sc->flow_mask;
	snprintf(ctx->trigger, sizeof(ctx->trigger), "BPF_PROG_TEST_RUN xdp_lb x%u",
		 st->timing.batch_iters + 1);
	bench_note(ctx, "scenario", "%s", scenario_names[sc - scenarios]);
	bench_bpf_timing_start(ctx, &st->timing);
	return 0;
}

static int xdp_lb_producer(struct bench_ctx *ctx, int idx)
{
	struct xdp_lb_state *st = ctx->priv;
	int verdict, err;

	(void)idx;
	while (!bench_stopping(ctx)) {
		err = run_once(st, NULL, NULL, &verdict);
		if (err)
			return bench_fail(ctx, BENCH_ERR_OS, -err, "%s: test run: %s",
					  ctx->bench->name, strerror(-err));
		if (verdict != st->sc->verdict) {
			atomic_fetch_add(&st->bad_verdicts, 1);
			atomic_store(&st->last_verdict, verdict);
		}
	}
	return 0;
}

static void xdp_lb_measure(struct bench_ctx *ctx, struct bench_sample *s)
{
	struct xdp_lb_state *st = ctx->priv;
	unsigned long long bad = atomic_exchange(&st->bad_verdicts, 0);

	if (bad) {
		bench_fail(ctx, BENCH_ERR_BENCH, EPROTO,
			   "%s: scenario %s: %llu timed runs returned %s, expected %s",
			   ctx->bench->name, scenario_names[st->sc - scenarios], bad,
			   verdict_name(atomic_load(&st->last_verdict)), verdict_name(st->sc->verdict));
		return;
	}
	bench_bpf_timing_measure(ctx, &st->timing, s, 0);
}

static int xdp_lb_collect(struct bench_ctx *ctx)
{
	struct xdp_lb_state *st = ctx->priv;

	return bench_bpf_timing_collect(ctx, &st->timing);
}

static void xdp_lb_teardown(struct bench_ctx *ctx)
{
	struct xdp_lb_state *st = ctx->priv;

	if (!st)
		return;
	xdp_lb_bpf__destroy(st->skel);
	for (int i = 0; i < st->nr_lru; i++)
		close(st->lru_fds[i]);
	bench_bpf_timing_free(&st->timing);
	free(st);
	ctx->priv = NULL;
}

const struct bench bench_xdp_lb = {
	.name = "xdp-lb",
	.needs = { "prog_test_run_xdp", "may_goto" },
	.family = "xdp_lb",
	.report = "bpf_timing",
	.help = "a Katran-style XDP load balancer over one built packet per scenario, "
		"validated, then timed in BPF (ns/op)",
	.params = xdp_lb_params,
	.extra = xdp_lb_extra,
	.max_consumers = 0,
	.validate = xdp_lb_validate,
	.setup = xdp_lb_setup,
	.producer = xdp_lb_producer,
	.measure = xdp_lb_measure,
	.collect = xdp_lb_collect,
	.teardown = xdp_lb_teardown,
};

BENCH_REGISTER(bench_xdp_lb);
