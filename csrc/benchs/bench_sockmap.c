// SPDX-License-Identifier: MIT
/*
 * sockmap: sk_skb and sk_msg programs on SOCKMAPs over two loopback TCP
 * connections, c1 <-> p1 and c2 <-> p2 (the kernel bench's bench_sockmap.c).
 * One producer sendfile()s a 128 KiB file (0..9 repeated) without blocking
 * into one socket; consumer 0 reads c2 and checks every byte; consumer 1
 * proxies p1 to p2 in rx-normal and has nothing to do otherwise.
 *
 *   rx-verdict-egress   send(c1) -> p1: stream verdict redirects to p2's
 *                       egress -> recv(c2)          (the default)
 *   rx-verdict-ingress  send(c1) -> p1: redirect to c2's receive queue
 *   rx-pass             send(p2) -> c2: stream verdict passes it -> recv(c2)
 *   tx-verdict-egress   send(p1): sk_msg redirects to p2's egress -> recv(c2)
 *   tx-verdict-ingress  send(p2): sk_msg redirects to c2's receive queue
 *   tx-pass             send(p2): sk_msg passes it -> recv(c2)
 *   rx-normal, tx-normal  send(p2) -> recv(c2), no BPF attached
 *
 * rx_strp > 0 adds a stream parser cutting the rx stream into messages of
 * that many bytes (rx-pass and rx-verdict-* only).
 *
 * Counters per sample: hits = bytes the programs saw (BPF), drops = bytes
 * sent, false_hits = bytes received and checked, extra send_calls and
 * read_calls (sendfile() and read() calls), verdict_drops (redirects the
 * kernel refused).  The kernel bench reports those as Send/BPF/Rcv MB/s and
 * calls/s.
 *
 * Differences from the kernel bench, all deliberate:
 * - its setup refuses rx-normal and tx-normal ("unknown sockmap bench
 *   mode"): here they run, with the sockets and threads its comments and
 *   producer describe and nothing attached;
 * - it needs -c 2 -p 1 -a: here two consumers and one producer are the
 *   defaults and the threads are always pinned as -a pins them;
 * - a stream parser waiting for a message longer than the receiving socket
 *   can queue never delivers one, and the kernel bench prints zeros: here
 *   the run fails;
 * - bad data fails the run, naming the offset, where it exit()s.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/sendfile.h>
#include <sys/socket.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bench.h"
#include "sockmap.h"
#include "sockmap.skel.h"

enum skm_mode {
	SKM_RX_NORMAL,
	SKM_RX_PASS,
	SKM_RX_VERDICT_EGRESS,
	SKM_RX_VERDICT_INGRESS,
	SKM_TX_NORMAL,
	SKM_TX_PASS,
	SKM_TX_VERDICT_INGRESS,
	SKM_TX_VERDICT_EGRESS,
};

static const char *const mode_choices[] = {
	[SKM_RX_NORMAL] = "rx-normal",
	[SKM_RX_PASS] = "rx-pass",
	[SKM_RX_VERDICT_EGRESS] = "rx-verdict-egress",
	[SKM_RX_VERDICT_INGRESS] = "rx-verdict-ingress",
	[SKM_TX_NORMAL] = "tx-normal",
	[SKM_TX_PASS] = "tx-pass",
	[SKM_TX_VERDICT_INGRESS] = "tx-verdict-ingress",
	[SKM_TX_VERDICT_EGRESS] = "tx-verdict-egress",
	NULL,
};

enum { SKM_C1, SKM_P1, SKM_C2, SKM_P2, SKM_LISTEN, SKM_NR_FDS };

/* One attachment of a program to a map, undone in teardown. */
struct skm_attach {
	int prog_fd;
	int map_fd;
	enum bpf_attach_type type;
	bool done;
};

struct skm_state {
	struct sockmap_bpf *skel;
	enum skm_mode mode;
	int fds[SKM_NR_FDS];
	int file_fd;			/* the file sendfile() sends */
	struct skm_attach attach[2];	/* parser and verdict, or sk_msg */
	int map_fd;			/* the SOCKMAP holding our sockets */
	int nr_map_keys;
	long prod_send;			/* bytes sent */
	long send_calls;
	long user_read;			/* bytes received and checked */
	long read_calls;
	long bpf_bytes_total;		/* over the whole run (sampler only) */
};

static struct skm_state *state(struct bench_ctx *ctx)
{
	return ctx->priv;
}

static bool rx_bpf(enum skm_mode m)
{
	return m == SKM_RX_PASS || m == SKM_RX_VERDICT_EGRESS || m == SKM_RX_VERDICT_INGRESS;
}

static bool tx_bpf(enum skm_mode m)
{
	return m == SKM_TX_PASS || m == SKM_TX_VERDICT_INGRESS || m == SKM_TX_VERDICT_EGRESS;
}

static int sockmap_validate(struct bench_ctx *ctx)
{
	enum skm_mode mode = (enum skm_mode)bench_param(ctx, "mode");
	int64_t strp = bench_param(ctx, "rx_strp");

	if (ctx->env.consumer_cnt != 2)
		return bench_fail(ctx, BENCH_ERR_VALUE, EINVAL,
				  "consumers=%d: sockmap takes exactly 2 consumers, one reading c2 "
				  "and one proxying p1 to p2 (the kernel bench's -c 2 -p 1 -a)",
				  ctx->env.consumer_cnt);
	if (strp && !rx_bpf(mode))
		return bench_fail(ctx, BENCH_ERR_VALUE, EINVAL,
				  "rx_strp=%lld: the stream parser sits on the receive side, only in "
				  "modes rx-pass, rx-verdict-egress and rx-verdict-ingress "
				  "(mode=%s)", (long long)strp, mode_choices[mode]);
	return 0;
}

/* ---- sockets ---- */

static int fail_errno(struct bench_ctx *ctx, const char *what)
{
	int err = errno;

	return bench_fail(ctx, BENCH_ERR_OS, err, "sockmap: %s: %s", what, strerror(err));
}

/* c connects to the listening socket, p is the accepted end. */
static int create_pair(struct bench_ctx *ctx, int *c, int *p)
{
	struct skm_state *st = state(ctx);
	struct sockaddr_in addr;
	socklen_t len = sizeof(addr);

	if (getsockname(st->fds[SKM_LISTEN], (struct sockaddr *)&addr, &len))
		return fail_errno(ctx, "getsockname of the listening socket");
	*c = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (*c < 0)
		return fail_errno(ctx, "socket");
	if (connect(*c, (struct sockaddr *)&addr, len))
		return fail_errno(ctx, "connect to 127.0.0.1");
	*p = accept4(st->fds[SKM_LISTEN], NULL, NULL, SOCK_CLOEXEC);
	if (*p < 0)
		return fail_errno(ctx, "accept");
	return 0;
}

static int create_sockets(struct bench_ctx *ctx)
{
	struct skm_state *st = state(ctx);
	struct sockaddr_in addr = {
		.sin_family = AF_INET,
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK),
	};
	int one = 1, err;

	st->fds[SKM_LISTEN] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (st->fds[SKM_LISTEN] < 0)
		return fail_errno(ctx, "socket");
	if (setsockopt(st->fds[SKM_LISTEN], SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)))
		return fail_errno(ctx, "SO_REUSEPORT");
	if (bind(st->fds[SKM_LISTEN], (struct sockaddr *)&addr, sizeof(addr)))
		return fail_errno(ctx, "bind to 127.0.0.1");
	if (listen(st->fds[SKM_LISTEN], SOMAXCONN))
		return fail_errno(ctx, "listen");
	err = create_pair(ctx, &st->fds[SKM_C1], &st->fds[SKM_P1]);
	if (!err)
		err = create_pair(ctx, &st->fds[SKM_C2], &st->fds[SKM_P2]);
	return err;
}

/* The file the producer sends: SOCKMAP_FILE_SIZE bytes of 0..9 repeated,
 * unlinked (as tmpfile()). */
static int create_file(struct bench_ctx *ctx)
{
	struct skm_state *st = state(ctx);
	char *buf;
	ssize_t n;
	int i;

	st->file_fd = open("/tmp", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	/* A /tmp without unnamed files (a guest's overlay of the host's): the
	 * same pages in memory, which sendfile() reads as well. */
	if (st->file_fd < 0 && (errno == EOPNOTSUPP || errno == EISDIR))
		st->file_fd = memfd_create("benchbpf-sockmap", MFD_CLOEXEC);
	if (st->file_fd < 0)
		return fail_errno(ctx, "creating the file to send in /tmp");
	buf = malloc(SOCKMAP_FILE_SIZE);
	if (!buf)
		return -ENOMEM;
	for (i = 0; i < SOCKMAP_FILE_SIZE; i++)
		buf[i] = (char)(i % SOCKMAP_PATTERN_LEN);
	n = pwrite(st->file_fd, buf, SOCKMAP_FILE_SIZE, 0);
	free(buf);
	if (n != SOCKMAP_FILE_SIZE)
		return n < 0 ? fail_errno(ctx, "writing the file to send") :
			bench_fail(ctx, BENCH_ERR_OS, EIO, "sockmap: short write of the file to send");
	return 0;
}

/* ---- BPF ---- */

static int attach_prog(struct bench_ctx *ctx, struct skm_attach *a, struct bpf_program *prog,
		       int map_fd, enum bpf_attach_type type)
{
	int err;

	a->prog_fd = bpf_program__fd(prog);
	a->map_fd = map_fd;
	a->type = type;
	err = bpf_prog_attach(a->prog_fd, map_fd, type, 0);
	if (err)
		return bench_fail_bpf(ctx, -errno, "sockmap programs",
				      "attaching %s to its SOCKMAP: %s",
				      bpf_program__name(prog), bench_errno_name(errno));
	a->done = true;
	return 0;
}

static int map_add(struct bench_ctx *ctx, int key, int fd_index)
{
	struct skm_state *st = state(ctx);
	static const char *const names[] = { "c1", "p1", "c2", "p2" };

	if (bpf_map_update_elem(st->map_fd, &key, &st->fds[fd_index], BPF_NOEXIST))
		return bench_fail_bpf(ctx, -errno, "sockmap programs",
				      "putting socket %s in SOCKMAP slot %d: %s",
				      names[fd_index], key, bench_errno_name(errno));
	st->nr_map_keys = key + 1;
	return 0;
}

static int setup_rx(struct bench_ctx *ctx)
{
	struct skm_state *st = state(ctx);
	struct sockmap_bpf *skel = st->skel;
	int err;

	st->map_fd = bpf_map__fd(skel->maps.skmap_rx);
	if (bench_param(ctx, "rx_strp")) {
		err = attach_prog(ctx, &st->attach[0], skel->progs.skmap_parser, st->map_fd,
				  BPF_SK_SKB_STREAM_PARSER);
		if (err)
			return err;
	}
	err = attach_prog(ctx, &st->attach[1], st->mode == SKM_RX_PASS ?
			  skel->progs.skmap_skb_pass : skel->progs.skmap_verdict,
			  st->map_fd, BPF_SK_SKB_STREAM_VERDICT);
	if (err)
		return err;
	if (st->mode == SKM_RX_PASS)
		return map_add(ctx, SOCKMAP_FROM, SKM_C2);
	err = map_add(ctx, SOCKMAP_FROM, SKM_P1);
	if (!err)
		err = map_add(ctx, SOCKMAP_TO, st->mode == SKM_RX_VERDICT_INGRESS ? SKM_C2 : SKM_P2);
	return err;
}

static int setup_tx(struct bench_ctx *ctx)
{
	struct skm_state *st = state(ctx);
	struct sockmap_bpf *skel = st->skel;
	bool egress = st->mode == SKM_TX_VERDICT_EGRESS;
	int err;

	st->map_fd = bpf_map__fd(skel->maps.skmap_tx);
	err = attach_prog(ctx, &st->attach[1], st->mode == SKM_TX_PASS ?
			  skel->progs.skmap_msg_pass : skel->progs.skmap_msg_verd,
			  st->map_fd, BPF_SK_MSG_VERDICT);
	if (!err)
		err = map_add(ctx, SOCKMAP_FROM, egress ? SKM_P1 : SKM_P2);
	if (!err)
		err = map_add(ctx, SOCKMAP_TO, egress ? SKM_P2 : SKM_C2);
	return err;
}

static int sockmap_setup(struct bench_ctx *ctx)
{
	struct skm_state *st;
	int err, i;

	st = calloc(1, sizeof(*st));
	if (!st)
		return -ENOMEM;
	ctx->priv = st;
	for (i = 0; i < SKM_NR_FDS; i++)
		st->fds[i] = -1;
	st->file_fd = -1;
	st->map_fd = -1;
	st->mode = (enum skm_mode)bench_param(ctx, "mode");

	err = create_sockets(ctx);
	if (!err)
		err = create_file(ctx);
	if (err)
		return err;

	st->skel = sockmap_bpf__open();
	if (!st->skel) {
		err = -errno;
		return bench_fail(ctx, BENCH_ERR_BENCH, -err, "sockmap: opening the BPF object: %s",
				  strerror(-err));
	}
	/* Both directions redirect into the receive queue except the two
	 * egress verdicts, as the kernel bench sets verdict_dir. */
	st->skel->rodata->verdict_dir = st->mode == SKM_RX_VERDICT_INGRESS ||
		st->mode == SKM_TX_PASS || st->mode == SKM_TX_VERDICT_INGRESS ? BPF_F_INGRESS : 0;
	st->skel->rodata->strp_size = (int)bench_param(ctx, "rx_strp");
	err = sockmap_bpf__load(st->skel);
	if (err)
		return bench_fail_bpf(ctx, err, "sockmap programs (sk_skb, sk_msg)",
				      "BPF_PROG_LOAD of the sockmap programs: %s",
				      bench_errno_name(err));
	if (rx_bpf(st->mode))
		err = setup_rx(ctx);
	else if (tx_bpf(st->mode))
		err = setup_tx(ctx);
	if (err)
		return err;
	snprintf(ctx->trigger, sizeof(ctx->trigger), "%s: %s%s", mode_choices[st->mode],
		 rx_bpf(st->mode) ? "sk_skb stream verdict" :
		 tx_bpf(st->mode) ? "sk_msg verdict" : "no BPF",
		 bench_param(ctx, "rx_strp") ? " + stream parser" : "");
	return 0;
}

static void sockmap_stop(struct bench_ctx *ctx)
{
	struct skm_state *st = state(ctx);
	int i;

	/* Wake the consumers blocked in read(): a shut down socket reads 0. */
	for (i = 0; st && i < SKM_LISTEN; i++)
		if (st->fds[i] >= 0)
			shutdown(st->fds[i], SHUT_RDWR);
}

static void sockmap_teardown(struct bench_ctx *ctx)
{
	struct skm_state *st = ctx->priv;
	int i;

	if (!st)
		return;
	for (i = 0; i < 2; i++)
		if (st->attach[i].done)
			bpf_prog_detach2(st->attach[i].prog_fd, st->attach[i].map_fd,
					 st->attach[i].type);
	for (i = 0; i < st->nr_map_keys; i++)
		bpf_map_delete_elem(st->map_fd, &i);
	for (i = 0; i < SKM_NR_FDS; i++)
		if (st->fds[i] >= 0)
			close(st->fds[i]);
	if (st->file_fd >= 0)
		close(st->file_fd);
	sockmap_bpf__destroy(st->skel);
	free(st);
	ctx->priv = NULL;
}

/* ---- threads ---- */

/* The sending end, made non-blocking as the kernel bench's producer does. */
static int target_fd(struct skm_state *st)
{
	if (st->mode == SKM_RX_VERDICT_EGRESS || st->mode == SKM_RX_VERDICT_INGRESS)
		return st->fds[SKM_C1];
	if (st->mode == SKM_TX_VERDICT_EGRESS)
		return st->fds[SKM_P1];
	return st->fds[SKM_P2];
}

/* A strparser that gave up on a message (longer than the socket can hold)
 * sets an error on the socket it parses and never delivers again. */
static int check_parser(struct bench_ctx *ctx)
{
	struct skm_state *st = state(ctx);
	int fd = st->fds[st->mode == SKM_RX_PASS ? SKM_C2 : SKM_P1], soerr = 0;
	socklen_t len = sizeof(soerr);

	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &len) || !soerr)
		return 0;
	return bench_fail(ctx, BENCH_ERR_BENCH, soerr,
			  "sockmap: the stream parser stopped with %s (%s): rx_strp=%lld bytes "
			  "is more than the receiving socket can buffer",
			  bench_errno_name(soerr), strerror(soerr),
			  (long long)bench_param(ctx, "rx_strp"));
}

static int sockmap_producer(struct bench_ctx *ctx, int idx)
{
	struct skm_state *st = state(ctx);
	int64_t run_time = bench_param(ctx, "producer_duration");
	int target = target_fd(st), flags;
	size_t need = SOCKMAP_FILE_SIZE;
	struct timespec t0, t1;
	ssize_t sent;

	(void)idx;
	flags = fcntl(target, F_GETFL, 0);
	if (flags < 0 || fcntl(target, F_SETFL, flags | O_NONBLOCK))
		return -errno;
	if (lseek(st->file_fd, 0, SEEK_SET) < 0)
		return -errno;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (!bench_stopping(ctx)) {
		if (run_time) {
			/* whole seconds, as the kernel bench compares tv_sec */
			clock_gettime(CLOCK_MONOTONIC, &t1);
			if (t1.tv_sec - t0.tv_sec > run_time)
				break;
		}
		__atomic_fetch_add(&st->send_calls, 1, __ATOMIC_RELAXED);
		sent = sendfile(target, st->file_fd, NULL, need);
		if (sent < 0) {
			if (errno == EAGAIN || errno == ENOMEM || errno == ENOBUFS)
				continue;
			if (bench_stopping(ctx))	/* shut down under us */
				break;
			return bench_fail(ctx, BENCH_ERR_BENCH, errno,
					  "sockmap: sendfile() on the %s socket: %s",
					  mode_choices[st->mode], strerror(errno));
		}
		__atomic_fetch_add(&st->prod_send, sent, __ATOMIC_RELAXED);
		if ((size_t)sent < need) {
			need -= sent;
			continue;
		}
		need = SOCKMAP_FILE_SIZE;
		if (lseek(st->file_fd, 0, SEEK_SET) < 0)
			return -errno;
	}
	return 0;
}

/* Sleep up to sec seconds, waking early when the run stops. */
static void delay(struct bench_ctx *ctx, int64_t sec)
{
	uint64_t end = bench_now_ns() + (uint64_t)sec * 1000000000ull;
	struct timespec step = { .tv_nsec = 10 * 1000 * 1000 };

	while (!bench_stopping(ctx) && bench_now_ns() < end)
		nanosleep(&step, NULL);
}

/* Consumer 0: read c2 and check every byte against the file's pattern,
 * as the kernel bench's verify_data(). */
static int read_c2(struct bench_ctx *ctx, char *buf)
{
	struct skm_state *st = state(ctx);
	int64_t delay_sec = bench_param(ctx, "delay_consumer");
	long pos = 0, i;
	ssize_t rcv;

	if (delay_sec < 0)	/* the kernel bench's consumer then never reads */
		return 0;
	if (delay_sec > 0)
		delay(ctx, delay_sec);
	while (!bench_stopping(ctx)) {
		__atomic_fetch_add(&st->read_calls, 1, __ATOMIC_RELAXED);
		rcv = read(st->fds[SKM_C2], buf, SOCKMAP_FILE_SIZE);
		if (rcv < 0 && errno != EAGAIN) {
			if (bench_stopping(ctx))
				break;
			return bench_fail(ctx, BENCH_ERR_BENCH, errno, "sockmap: read(c2): %s",
					  strerror(errno));
		}
		for (i = 0; i < rcv; i++) {
			if (buf[i] != (char)(pos % SOCKMAP_PATTERN_LEN))
				return bench_fail(ctx, BENCH_ERR_BENCH, EBADMSG,
						  "sockmap: c2 received byte %d at file offset %ld, "
						  "expected %ld", buf[i], pos, pos % SOCKMAP_PATTERN_LEN);
			if (++pos >= SOCKMAP_FILE_SIZE)
				pos = 0;
		}
		if (rcv > 0)
			__atomic_fetch_add(&st->user_read, rcv, __ATOMIC_RELAXED);
	}
	return 0;
}

/* Consumer 1, rx-normal only: the proxy, p1 to p2. */
static int proxy_p1(struct bench_ctx *ctx, char *buf)
{
	struct skm_state *st = state(ctx);
	ssize_t rcv;

	while (!bench_stopping(ctx)) {
		rcv = read(st->fds[SKM_P1], buf, SOCKMAP_FILE_SIZE);
		if (rcv <= 0)
			break;	/* shut down at the end (nothing else writes c1) */
		if (send(st->fds[SKM_P2], buf, rcv, MSG_NOSIGNAL) < 0 && !bench_stopping(ctx))
			return bench_fail(ctx, BENCH_ERR_BENCH, errno, "sockmap: send(p2): %s",
					  strerror(errno));
	}
	return 0;
}

static int sockmap_consumer(struct bench_ctx *ctx, int idx)
{
	struct skm_state *st = state(ctx);
	char *buf;
	int err;

	if (idx == 1 && st->mode != SKM_RX_NORMAL)
		return 0;	/* unused, as in the kernel bench */
	buf = malloc(SOCKMAP_FILE_SIZE);
	if (!buf)
		return -ENOMEM;
	err = idx == 0 ? read_c2(ctx, buf) : proxy_p1(ctx, buf);
	free(buf);
	return err;
}

static void sockmap_measure(struct bench_ctx *ctx, struct bench_sample *s)
{
	struct skm_state *st = state(ctx);

	s->drops = __atomic_exchange_n(&st->prod_send, 0, __ATOMIC_RELAXED);
	s->hits = __atomic_exchange_n(&st->skel->bss->skmap_bytes, 0, __ATOMIC_RELAXED);
	st->bpf_bytes_total += s->hits;
	s->false_hits = __atomic_exchange_n(&st->user_read, 0, __ATOMIC_RELAXED);
	s->extra[0] = __atomic_exchange_n(&st->send_calls, 0, __ATOMIC_RELAXED);
	s->extra[1] = __atomic_exchange_n(&st->read_calls, 0, __ATOMIC_RELAXED);
	s->extra[2] = (unsigned int)__atomic_exchange_n(&st->skel->bss->skmap_drops, 0,
						      __ATOMIC_RELAXED);
	if (bench_param(ctx, "rx_strp"))
		check_parser(ctx);
}

/*
 * A stream parser waiting for a message longer than the receiving socket
 * can queue never completes one: the verdict never runs and the producer
 * spins on EAGAIN.  The kernel bench prints zeros then; a run whose parser
 * delivered nothing at all fails instead.
 */
static int sockmap_collect(struct bench_ctx *ctx)
{
	struct skm_state *st = state(ctx);
	int fd = st->fds[st->mode == SKM_RX_PASS ? SKM_C2 : SKM_P1], rcvbuf = 0;
	socklen_t len = sizeof(rcvbuf);
	int64_t strp = bench_param(ctx, "rx_strp");

	if (!strp || st->bpf_bytes_total)
		return 0;
	getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, &len);
	return bench_fail(ctx, BENCH_ERR_BENCH, EMSGSIZE,
			  "sockmap: the stream parser delivered no message of rx_strp=%lld bytes "
			  "in the whole run: the receiving socket (SO_RCVBUF %d, net.ipv4.tcp_rmem) "
			  "cannot queue one; use a smaller rx_strp",
			  (long long)strp, rcvbuf);
}

static const struct bench_param_def sockmap_params[] = {
	{ "mode", NULL, BENCH_PARAM_CHOICE, SKM_RX_VERDICT_EGRESS, 0, SKM_TX_VERDICT_EGRESS,
	  mode_choices,
	  "what carries the data from the producer's socket to c2; on the command line "
	  "one flag per mode, as the kernel bench: --rx-normal, --rx-pass, "
	  "--rx-verdict-egress, --rx-verdict-ingress, --tx-normal, --tx-pass, "
	  "--tx-verdict-ingress, --tx-verdict-egress", .choice_flags = true },
	/* A message must fit in the receiving socket's queue: with Linux's
	 * default 128 KiB receive buffer (tcp_rmem) 120000 bytes ran and
	 * 131000 never completed one here, and far larger ones are refused
	 * (EMSGSIZE).  The kernel bench takes any int; 64 KiB keeps to what
	 * runs. */
	{ "rx_strp", "--rx-strp", BENCH_PARAM_INT, 0, 0, SOCKMAP_MAX_STRP, NULL,
	  "attach a stream parser cutting the received stream into messages of this "
	  "many bytes (0: none; rx modes with BPF only; at most 64 KiB, a message "
	  "must fit in the receiving socket's queue)" },
	{ "delay_consumer", "--delay-consumer", BENCH_PARAM_INT, 0, INT32_MIN, INT32_MAX, NULL,
	  "seconds consumer 0 waits before its first read (negative: it never reads)" },
	{ "producer_duration", "--producer-duration", BENCH_PARAM_INT, 0, 0, INT32_MAX, NULL,
	  "the producer stops sending once this many whole seconds have passed "
	  "(0: it sends to the end)" },
	{ 0 },
};

static const char *const sockmap_extra[] = { "send_calls", "read_calls", "verdict_drops", NULL };

const struct bench bench_sockmap = {
	.name = "sockmap",
	.family = "sockmap",
	.report = "sockmap",
	.help = "a producer sendfile()s a file through two loopback TCP connections while "
		"sk_skb or sk_msg programs on a SOCKMAP pass or redirect it: send, BPF and "
		"receive MB/s",
	.params = sockmap_params,
	.extra = sockmap_extra,
	.default_consumers = 2,
	.max_consumers = 2,
	.max_producers = 1,
	.always_pinned = true,
	/* Loopback TCP and a SOCKMAP: the machine's network stack. */
	.sees_other_processes = true,
	.validate = sockmap_validate,
	.setup = sockmap_setup,
	.producer = sockmap_producer,
	.consumer = sockmap_consumer,
	.stop = sockmap_stop,
	.measure = sockmap_measure,
	.collect = sockmap_collect,
	.teardown = sockmap_teardown,
};

BENCH_REGISTER(bench_sockmap);
