/* SPDX-License-Identifier: MIT */
/*
 * xdp-lb: the load balancer's map layouts, limits and encapsulation
 * addresses, shared by bpf/xdp_lb.bpf.c and csrc/bench_xdp_lb.c (which
 * fills the maps and builds the packet the program must send).
 *
 * The layouts, sizes and constants are the kernel bench's (Katran's
 * shapes): the per-packet work must be the same lookups in maps of the
 * same sizes.
 */
#ifndef BENCHBPF_XDP_LB_H
#define BENCHBPF_XDP_LB_H

/* vip_meta.flags and real_definition.flags */
#define XDP_LB_F_IPV6		(1 << 0)	/* the real takes IPv6 tunnels */
#define XDP_LB_F_LRU_BYPASS	(1 << 1)	/* the VIP skips the connection table */

#define XDP_LB_MAX_VIPS		16
#define XDP_LB_CH_RING_SIZE	65537		/* consistent-hash slots per VIP */
#define XDP_LB_CH_RINGS_SIZE	(XDP_LB_MAX_VIPS * XDP_LB_CH_RING_SIZE)
#define XDP_LB_MAX_REALS	512
#define XDP_LB_VIP_MAP_SIZE	64
#define XDP_LB_LRU_SIZE		100000		/* entries of each CPU's connection table */
/* Outer array of per-CPU connection tables: one slot per possible CPU. */
#define XDP_LB_MAX_CPUS		256
#define XDP_LB_ONE_SEC_NS	1000000000ull
/* New connections a second past which a VIP counts as flooded: never here. */
#define XDP_LB_MAX_CONN_RATE	100000000
#define XDP_LB_UDP_TIMEOUT_NS	30000000000ull	/* a UDP flow's entry expires */
#define XDP_LB_FRAG_MASK	0x3FFF		/* IPv4 MF flag and fragment offset */
#define XDP_LB_IPPROTO_FRAGMENT	44		/* IPv6 fragment extension header */
#define XDP_LB_KNUTH_MULT	2654435761u
/* Tunnel sources: 172.16/12 (in network order) and 0100::/64. */
#define XDP_LB_IPIP_V4_PREFIX	4268
#define XDP_LB_IPIP_V6_PREFIX1	1
#define XDP_LB_IPIP_V6_PREFIX2	0
#define XDP_LB_IPIP_V6_PREFIX3	0

/* stats: keys 0 .. MAX_VIPS-1 count each VIP's packets (v1) and bytes (v2). */
#define XDP_LB_STATS_LRU	(XDP_LB_MAX_VIPS + 0)	/* v1 VIP packets, v2 table misses */
#define XDP_LB_STATS_XDP_TX	(XDP_LB_MAX_VIPS + 1)
#define XDP_LB_STATS_XDP_PASS	(XDP_LB_MAX_VIPS + 2)
#define XDP_LB_STATS_XDP_DROP	(XDP_LB_MAX_VIPS + 3)
#define XDP_LB_STATS_NEW_CONN	(XDP_LB_MAX_VIPS + 4)	/* v1 count, v2 window start */
#define XDP_LB_STATS_LRU_MISS	(XDP_LB_MAX_VIPS + 5)	/* v1 TCP table misses */
#define XDP_LB_STATS_SIZE	(XDP_LB_MAX_VIPS + 6)

#ifdef __BPF__
#define xdp_lb_htons(x)		bpf_htons(x)
#define XDP_LB_INLINE		static __always_inline
#else
#define xdp_lb_htons(x)		htons(x)
#define XDP_LB_INLINE		static inline
#endif

/*
 * The outer source address of a tunnel: the client's address and port
 * folded into the prefix, so that the receiving side's RSS spreads flows.
 * port and src are in network order, as read from the packet.
 */
XDP_LB_INLINE __be32 xdp_lb_tunnel_src_v4(__u16 port, __be32 src)
{
	__u32 mixed = ((__u32)xdp_lb_htons(port) << 16) ^ src;

	return (mixed & 0xFFFF0000) | XDP_LB_IPIP_V4_PREFIX;
}

XDP_LB_INLINE void xdp_lb_tunnel_src_v6(__u16 port, __be32 src, __be32 *out)
{
	out[0] = XDP_LB_IPIP_V6_PREFIX1;
	out[1] = XDP_LB_IPIP_V6_PREFIX2;
	out[2] = XDP_LB_IPIP_V6_PREFIX3;
	out[3] = src ^ port;
}

/* Connection table key: the 5-tuple, addresses and ports in network order. */
struct xdp_lb_flow {
	union {
		__be32 src;
		__be32 srcv6[4];
	};
	union {
		__be32 dst;
		__be32 dstv6[4];
	};
	union {
		__u32 ports;
		__u16 port16[2];	/* source, destination */
	};
	__u8 proto;
	__u8 pad[3];
};

/* vip_map key */
struct xdp_lb_vip {
	union {
		__be32 vip;
		__be32 vipv6[4];
	};
	__u16 port;
	__u8 proto;
	__u8 pad;
};

struct xdp_lb_vip_meta {
	__u32 flags;		/* XDP_LB_F_* */
	__u32 vip_num;		/* the VIP's ring in ch_rings, its stats key */
};

/* Connection table value: which real, and (UDP) when last seen. */
struct xdp_lb_lru_entry {
	__u32 pos;
	__u64 atime;
};

struct xdp_lb_real {
	__be32 dst;
	__be32 dstv6[4];
	__u8 flags;		/* XDP_LB_F_IPV6 */
};

struct xdp_lb_stat {
	__u64 v1;
	__u64 v2;
};

struct xdp_lb_ctl {
	__u8 mac[6];		/* the next hop's (router's) address */
	__u8 pad[2];
};

#endif /* BENCHBPF_XDP_LB_H */
