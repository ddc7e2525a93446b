// SPDX-License-Identifier: MIT
/*
 * sk-storage-get: the cost of bpf_sk_storage_get() on a socket that already
 * has its storage (bpf/sk_storage.bpf.c), the kernel bench's
 * bench_sk_storage.c in its two versions, chosen by `caller`:
 *
 *   iter        (the later version, the default) nr_socks listening TCP
 *               sockets on 127.x.y.z; the producer reads a bpf_iter/tcp
 *               link's iterator over and over, each read pass calling
 *               the program once per TCP socket of the network namespace:
 *               one get each, on a different (cold) socket each time;
 *   getsockopt  (the first version) a cgroup/getsockopt program attached
 *               to this process's cgroup v2; the producer calls
 *               getsockopt() on nr_socks unbound TCP sockets in turn, each
 *               call making 100 gets of that socket's storage.
 *
 * hits = gets that found the storage; the kernel bench reports them as
 * "ops" (M ops/s, ns/op).  One producer, no consumer, as the kernel bench.
 *
 * Differences from the kernel bench, all deliberate:
 * - its first version used one socket; here getsockopt goes over nr_socks
 *   (nr_socks=1 is that version);
 * - the getsockopt program answers only the benchmark's own level (0xdead)
 *   and leaves other calls in the cgroup alone: the kernel bench attaches
 *   it to the root cgroup, where it would answer every process's
 *   getsockopt() with success;
 * - it attaches to /sys/fs/cgroup/unified or /sys/fs/cgroup whatever they
 *   are: here to this process's own cgroup on a cgroup v2 mount, mounting
 *   one for the run (and unmounting it after) where there is none;
 * - it binds listening sockets at fixed 127.x ports and exits when one is
 *   taken: here a taken address and port is skipped for the next one;
 * - the storage map is BPF_F_NO_PREALLOC, which kernels require of
 *   socket storage maps (its map_flags 0 is for a patched kernel);
 * - the gets of setup's pass (which create the storage) are not counted:
 *   the first sample holds only gets of existing storage;
 * - RLIMIT_NOFILE is raised only when nr_socks do not fit, and put back
 *   after the run.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bench.h"
#include "sk_storage.skel.h"

/* What bpf/sk_storage.bpf.c answers (its SK_STORAGE_LEVEL). */
#define SK_LEVEL 0xdead
#define SK_OPTNAME 0xbeef
/* The kernel bench's spread of listening sockets: 60000 ports from 1024
 * on each loopback address in turn. */
#define SK_PORTS 60000
#define SK_FIRST_PORT 1024
/* Descriptors kept free beside the sockets, as the kernel bench's. */
#define SK_SPARE_FDS 1024

enum sk_caller { SK_ITER, SK_GETSOCKOPT };

static const char *const sk_caller_choices[] = { "iter", "getsockopt", NULL };
static const char *const sk_caller_help[] = {
	"a bpf_iter/tcp pass over every TCP socket, one get each (the kernel bench's "
	"later version)",
	"a cgroup/getsockopt program, 100 gets per getsockopt() on each socket in turn "
	"(its first version)",
	NULL,
};

static const struct bench_param_def sk_params[] = {
	{ "nr_socks", "--nr-socks", BENCH_PARAM_INT, 100000, 1, INT_MAX, NULL,
	  "sockets to get the storage of (listening TCP sockets for iter)" },
	{ "caller", NULL, BENCH_PARAM_CHOICE, SK_ITER, 0, 1, sk_caller_choices,
	  "what calls bpf_sk_storage_get(): iter or getsockopt", NULL, sk_caller_help },
	{ 0 },
};

struct sk_state {
	struct sk_storage_bpf *skel;
	struct bpf_link *link;
	int caller;		/* enum sk_caller */
	int *fds;
	int nr_fds;
	int next;		/* getsockopt: the socket the producer calls next */
	int cgroup_fd;
	char mounted[64];	/* a cgroup2 mount this run made, or "" */
	bool rlimit_raised;
	struct rlimit rlimit_before;
};

/* fs.nr_open: the most descriptors the kernel lets any process have. */
static unsigned long long nr_open(void)
{
	unsigned long long n = 1048576;		/* the kernel's default */
	FILE *f = fopen("/proc/sys/fs/nr_open", "re");

	if (f) {
		if (fscanf(f, "%llu", &n) != 1)
			n = 1048576;
		fclose(f);
	}
	return n;
}

/* Every socket is a descriptor: refuse, before anything is made, more than
 * the kernel lets a process open (the kernel bench's range reaches INT_MAX,
 * past fs.nr_open on any kernel). */
static int sk_validate(struct bench_ctx *ctx)
{
	long long nr_socks = bench_param(ctx, "nr_socks");
	unsigned long long ceiling = nr_open();
	unsigned long long fit = ceiling > SK_SPARE_FDS ? ceiling - SK_SPARE_FDS : 0;

	if ((unsigned long long)nr_socks <= fit)
		return 0;
	return bench_fail(ctx, BENCH_ERR_VALUE, EINVAL,
			  "nr_socks=%lld: more sockets than the kernel lets a process open "
			  "(fs.nr_open %llu descriptors, %d of them kept free): allowed 1..%llu "
			  "here", nr_socks, ceiling, SK_SPARE_FDS, fit);
}

/* Room for nr_socks more descriptors, raising the soft (and, where needed
 * and allowed, the hard) limit; the old one is put back by teardown. */
static int raise_nofile(struct bench_ctx *ctx, struct sk_state *st, long long nr_socks)
{
	struct rlimit r;
	rlim_t want = (rlim_t)nr_socks + SK_SPARE_FDS;

	if (getrlimit(RLIMIT_NOFILE, &r))
		return bench_fail(ctx, BENCH_ERR_OS, errno, "%s: getrlimit(RLIMIT_NOFILE): %s",
				  ctx->bench->name, strerror(errno));
	if (r.rlim_cur == RLIM_INFINITY || r.rlim_cur >= want)
		return 0;
	st->rlimit_before = r;
	r.rlim_cur = want;
	if (r.rlim_max != RLIM_INFINITY && r.rlim_max < want)
		r.rlim_max = want;
	if (setrlimit(RLIMIT_NOFILE, &r)) {
		int err = errno;
		/* Refused to root, it is the machine's policy (a container's), as
		 * bench_fail_bpf() takes a refused load; else a want of privilege. */
		enum bench_err_kind kind = err != EPERM ? BENCH_ERR_OS :
			geteuid() == 0 ? BENCH_ERR_UNSUPPORTED : BENCH_ERR_PERMISSION;
		rlim_t hard = st->rlimit_before.rlim_max;

		return bench_fail(ctx, kind, err, "%s: nr_socks=%lld needs RLIMIT_NOFILE of %llu "
				  "(now %llu, hard %llu; setrlimit: %s): at most %llu sockets fit",
				  ctx->bench->name, nr_socks, (unsigned long long)want,
				  (unsigned long long)st->rlimit_before.rlim_cur,
				  (unsigned long long)hard, strerror(err),
				  hard > SK_SPARE_FDS ? (unsigned long long)(hard - SK_SPARE_FDS) : 0ULL);
	}
	st->rlimit_raised = true;
	return 0;
}

/* One listening socket on the first free address and port from *cursor. */
static int listen_socket(struct bench_ctx *ctx, long long *cursor, long long last)
{
	int fd = -1, err = 0;

	for (; *cursor <= last; (*cursor)++) {
		struct sockaddr_in addr = {
			.sin_family = AF_INET,
			.sin_port = htons(SK_FIRST_PORT + *cursor % SK_PORTS),
			.sin_addr.s_addr = htonl(INADDR_LOOPBACK + (uint32_t)(*cursor / SK_PORTS)),
		};

		fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0) {
			err = errno;
			break;
		}
		if (!bind(fd, (struct sockaddr *)&addr, sizeof(addr)) && !listen(fd, 1)) {
			(*cursor)++;
			return fd;
		}
		err = errno;
		close(fd);
		fd = -1;
		if (err != EADDRINUSE)
			break;
	}
	return bench_fail(ctx, BENCH_ERR_OS, err ? err : EADDRINUSE,
			  "%s: a listening TCP socket on 127.0.0.0/8: %s", ctx->bench->name,
			  strerror(err ? err : EADDRINUSE));
}

static int make_sockets(struct bench_ctx *ctx, struct sk_state *st, int caller, int nr_socks)
{
	/* every taken address and port is tried once at most */
	long long cursor = 0, last = (long long)nr_socks + 65536;
	int fd;

	st->fds = calloc((size_t)nr_socks, sizeof(*st->fds));
	if (!st->fds)
		return bench_fail(ctx, BENCH_ERR_OS, ENOMEM, "%s: %d socket descriptors",
				  ctx->bench->name, nr_socks);
	while (st->nr_fds < nr_socks) {
		if (caller == SK_ITER) {
			fd = listen_socket(ctx, &cursor, last);
		} else {
			fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
			if (fd < 0)
				fd = bench_fail(ctx, BENCH_ERR_OS, errno, "%s: socket %d of %d: %s",
						ctx->bench->name, st->nr_fds + 1, nr_socks,
						strerror(errno));
		}
		if (fd < 0)
			return fd;
		st->fds[st->nr_fds++] = fd;
	}
	return 0;
}

/* The cgroup v2 directory this process is in, opened; mounts cgroup2 for
 * the run where nothing has it mounted. */
static int open_own_cgroup(struct bench_ctx *ctx, struct sk_state *st)
{
	char line[4096], mnt[1024] = "", own[4096] = "", path[5200];
	FILE *f;
	int fd;

	f = fopen("/proc/self/cgroup", "re");
	if (f) {
		while (fgets(line, sizeof(line), f))
			if (!strncmp(line, "0::", 3)) {
				line[strcspn(line, "\n")] = 0;
				snprintf(own, sizeof(own), "%s", line + 3);
			}
		fclose(f);
	}
	if (!own[0])
		return bench_fail(ctx, BENCH_ERR_UNSUPPORTED, ENOENT,
				  "%s: caller=getsockopt needs cgroup v2: this process has no "
				  "cgroup v2 path in /proc/self/cgroup", ctx->bench->name);
	f = fopen("/proc/self/mountinfo", "re");
	if (f) {
		while (!mnt[0] && fgets(line, sizeof(line), f)) {
			char *sep = strstr(line, " - "), root[1024], point[1024], type[64];

			if (sep && sscanf(line, "%*s %*s %*s %1023s %1023s", root, point) == 2 &&
			    sscanf(sep + 3, "%63s", type) == 1 && !strcmp(type, "cgroup2") &&
			    !strcmp(root, "/"))
				snprintf(mnt, sizeof(mnt), "%s", point);
		}
		fclose(f);
	}
	if (!mnt[0]) {
		snprintf(st->mounted, sizeof(st->mounted), "/tmp/benchbpf-cgroup2-XXXXXX");
		if (!mkdtemp(st->mounted)) {
			st->mounted[0] = 0;
			return bench_fail(ctx, BENCH_ERR_OS, errno, "%s: a directory to mount "
					  "cgroup2 on: %s", ctx->bench->name, strerror(errno));
		}
		if (mount("cgroup2", st->mounted, "cgroup2", 0, NULL)) {
			int err = errno;

			rmdir(st->mounted);
			st->mounted[0] = 0;
			return bench_fail(ctx, err == ENODEV ? BENCH_ERR_UNSUPPORTED : BENCH_ERR_OS,
					  err, "%s: caller=getsockopt needs cgroup v2, which is "
					  "not mounted and could not be: mount -t cgroup2: %s",
					  ctx->bench->name, strerror(err));
		}
		snprintf(mnt, sizeof(mnt), "%s", st->mounted);
	}
	snprintf(path, sizeof(path), "%s%s", mnt, strcmp(own, "/") ? own : "");
	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return bench_fail(ctx, BENCH_ERR_OS, errno, "%s: opening cgroup %s: %s",
				  ctx->bench->name, path, strerror(errno));
	st->cgroup_fd = fd;
	bench_note(ctx, "cgroup", "%s%s", path, st->mounted[0] ? " (mounted for the run)" : "");
	return 0;
}

/* One bpf_iter/tcp pass: every TCP socket of the namespace, once. */
static int iter_pass(struct bench_ctx *ctx, struct sk_state *st)
{
	char buf[64];
	ssize_t n;
	int fd, err = 0;

	fd = bpf_iter_create(bpf_link__fd(st->link));
	if (fd < 0)
		return bench_fail(ctx, BENCH_ERR_BENCH, errno, "%s: bpf_iter_create: %s",
				  ctx->bench->name, strerror(errno));
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		;
	if (n < 0)
		err = bench_fail(ctx, BENCH_ERR_BENCH, errno, "%s: reading the tcp iterator: %s",
				 ctx->bench->name, strerror(errno));
	close(fd);
	return err;
}

static int getsockopt_call(struct bench_ctx *ctx, int fd)
{
	int val = 0;
	socklen_t len = sizeof(val);

	if (getsockopt(fd, SK_LEVEL, SK_OPTNAME, &val, &len))
		return bench_fail(ctx, BENCH_ERR_BENCH, errno, "%s: getsockopt() that the "
				  "cgroup program should answer: %s", ctx->bench->name,
				  strerror(errno));
	return 0;
}

static int sk_setup(struct bench_ctx *ctx)
{
	int caller = (int)bench_param(ctx, "caller");
	int nr_socks = (int)bench_param(ctx, "nr_socks");
	struct bpf_program *prog, *other;
	struct sk_state *st;
	const char *what;
	int err, i;

	st = calloc(1, sizeof(*st));
	if (!st)
		return -ENOMEM;
	st->cgroup_fd = -1;
	st->caller = caller;
	ctx->priv = st;
	st->skel = sk_storage_bpf__open();
	if (!st->skel)
		return bench_fail(ctx, BENCH_ERR_BENCH, errno, "%s: opening the BPF object: %s",
				  ctx->bench->name, strerror(errno));
	prog = caller == SK_ITER ? st->skel->progs.iter_sk_storage_get :
				   st->skel->progs.getsockopt_sk_storage_get;
	other = caller == SK_ITER ? st->skel->progs.getsockopt_sk_storage_get :
				    st->skel->progs.iter_sk_storage_get;
	what = caller == SK_ITER ? "bpf_iter/tcp programs calling bpf_sk_storage_get() on "
				   "socket storage maps" :
				   "cgroup/getsockopt programs calling bpf_sk_storage_get() on "
				   "socket storage maps";
	/* load only the chosen version: a kernel may lack the other's part */
	bpf_program__set_autoload(other, false);
	err = sk_storage_bpf__load(st->skel);
	if (err)
		return bench_fail_bpf(ctx, err, what, "loading %s", bpf_program__name(prog));
	/* After the load: without privilege, what is missing is CAP_BPF, not
	 * descriptors. */
	err = raise_nofile(ctx, st, nr_socks);
	if (err)
		return err;
	err = make_sockets(ctx, st, caller, nr_socks);
	if (err)
		return err;
	if (caller == SK_ITER) {
		st->link = bpf_program__attach_iter(prog, NULL);
	} else {
		err = open_own_cgroup(ctx, st);
		if (err)
			return err;
		st->link = bpf_program__attach_cgroup(prog, st->cgroup_fd);
	}
	if (!st->link)
		return bench_fail_bpf(ctx, errno, what, "attaching %s", bpf_program__name(prog));
	bench_set_trigger(ctx, &prog, 1);

	/* Create every socket's storage, so that the run gets existing ones,
	 * and count what one pass visits: the iterator sees every TCP socket
	 * of the namespace, not only ours. */
	if (caller == SK_ITER) {
		err = iter_pass(ctx, st);
	} else {
		for (i = 0; !err && i < st->nr_fds; i++)
			err = getsockopt_call(ctx, st->fds[i]);
	}
	if (err)
		return err;
	if (caller == SK_ITER)
		bench_note(ctx, "sockets_per_pass", "%ld",
			   __atomic_load_n(&st->skel->bss->hits, __ATOMIC_RELAXED));
	__atomic_store_n(&st->skel->bss->hits, 0, __ATOMIC_RELAXED);
	return 0;
}

static int sk_producer(struct bench_ctx *ctx, int idx)
{
	struct sk_state *st = ctx->priv;
	int err = 0;

	(void)idx;
	while (!err && !bench_stopping(ctx)) {
		if (st->caller == SK_ITER) {
			err = iter_pass(ctx, st);
		} else {
			err = getsockopt_call(ctx, st->fds[st->next]);
			st->next = (st->next + 1) % st->nr_fds;
		}
	}
	return err;
}

static void sk_measure(struct bench_ctx *ctx, struct bench_sample *s)
{
	struct sk_state *st = ctx->priv;

	s->hits = __atomic_exchange_n(&st->skel->bss->hits, 0, __ATOMIC_RELAXED);
}

static void sk_teardown(struct bench_ctx *ctx)
{
	struct sk_state *st = ctx->priv;
	int i;

	if (!st)
		return;
	bpf_link__destroy(st->link);
	for (i = 0; i < st->nr_fds; i++)
		close(st->fds[i]);
	free(st->fds);
	sk_storage_bpf__destroy(st->skel);
	if (st->cgroup_fd >= 0)
		close(st->cgroup_fd);
	if (st->mounted[0]) {
		umount2(st->mounted, MNT_DETACH);
		rmdir(st->mounted);
	}
	if (st->rlimit_raised)
		setrlimit(RLIMIT_NOFILE, &st->rlimit_before);
	free(st);
	ctx->priv = NULL;
}

const struct bench bench_sk_storage_get = {
	.name = "sk-storage-get",
	.family = "sk_storage",
	.report = "ops",
	.help = "bpf_sk_storage_get() of existing socket storage over nr_socks sockets, "
		"from a bpf_iter/tcp pass or a cgroup/getsockopt program (M ops/s, ns/op)",
	.params = sk_params,
	.max_consumers = 0,
	.max_producers = 1,
	.validate = sk_validate,
	.setup = sk_setup,
	.producer = sk_producer,
	.measure = sk_measure,
	.teardown = sk_teardown,
};

BENCH_REGISTER(bench_sk_storage_get);
