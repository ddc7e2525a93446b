// SPDX-License-Identifier: MIT
/*
 * libbpf glue shared by every family: message capture, tracefs, rlimits,
 * what a refused load or attach means.  Calls only util.c of the core.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <linux/capability.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "bench.h"

#define BENCH_LOG_MAX (1u << 20)

/*
 * libbpf's print hook is process-wide, so the run being captured is too.
 * Runs are serialised by the binding's run lock, which makes this the one
 * piece of shared state.
 */
static struct bench_ctx *capturing;

/* Before 5.11 BPF memory counted against RLIMIT_MEMLOCK, not the cgroup. */
static bool kernel_charges_memlock(void)
{
	struct utsname u;
	int major = 0, minor = 0;

	if (uname(&u) || sscanf(u.release, "%d.%d", &major, &minor) != 2)
		return false;
	return major < 5 || (major == 5 && minor < 11);
}

int bench_fail_bpf(struct bench_ctx *ctx, int err, const char *what,
		   const char *fmt, ...)
{
	enum bench_err_kind kind;
	char detail[BENCH_MSG_LEN / 2];
	va_list ap;

	if (err < 0)
		err = -err;
	va_start(ap, fmt);
	vsnprintf(detail, sizeof(detail), fmt, ap);
	va_end(ap);

	switch (err) {
	case EPERM:
		/* A privileged process refused is a kernel policy (lockdown);
		 * an unprivileged one just lacks the capabilities. */
		kind = bench_bpf_privileged() ? BENCH_ERR_UNSUPPORTED : BENCH_ERR_PERMISSION;
		break;
	case ENOENT:
	case EOPNOTSUPP:
	case ENOSYS:
	case 524: /* ENOTSUPP, kernel-internal "not supported" */
		kind = BENCH_ERR_UNSUPPORTED;
		break;
	default:
		kind = BENCH_ERR_BENCH;
	}
	if (kind == BENCH_ERR_PERMISSION)
		return bench_fail(ctx, kind, err,
				  "%s: %s: %s: loading BPF programs needs root, or CAP_BPF "
				  "and CAP_PERFMON (%s)",
				  ctx->bench->name, detail, strerror(err), what);
	if (kind == BENCH_ERR_UNSUPPORTED && err == EPERM && kernel_charges_memlock()) {
		struct rlimit r;

		/* Kernels before 5.11 charge BPF memory to RLIMIT_MEMLOCK and
		 * answer EPERM when it is exhausted; the core raises it at
		 * import, which may not have been allowed. */
		if (getrlimit(RLIMIT_MEMLOCK, &r) == 0 && r.rlim_cur != RLIM_INFINITY)
			return bench_fail(ctx, kind, err,
					  "%s: %s unavailable on this kernel: it answered %s (%s); "
					  "if this kernel is older than 5.11, RLIMIT_MEMLOCK (%llu bytes) "
					  "may be the cause: ulimit -l unlimited",
					  ctx->bench->name, what, strerror(err), detail,
					  (unsigned long long)r.rlim_cur);
	}
	if (kind == BENCH_ERR_UNSUPPORTED)
		return bench_fail(ctx, kind, err,
				  "%s: %s unavailable on this kernel: it answered %s (%s)",
				  ctx->bench->name, what, strerror(err), detail);
	return bench_fail(ctx, kind, err, "%s: %s: %s (%s)", ctx->bench->name,
			  detail, strerror(err), what);
}

void bench_log_append(struct bench_log *log, const char *fmt, va_list ap)
{
	va_list aq;
	int need;

	if (log->truncated)
		return;
	va_copy(aq, ap);
	need = vsnprintf(NULL, 0, fmt, aq);
	va_end(aq);
	if (need <= 0)
		return;
	if (log->len + need + 1 > BENCH_LOG_MAX) {
		log->truncated = true;
		return;
	}
	if (log->len + need + 1 > log->cap) {
		size_t cap = log->cap ? log->cap : 4096;
		char *buf;

		while (cap < log->len + need + 1)
			cap *= 2;
		buf = realloc(log->buf, cap);
		if (!buf) {
			log->truncated = true;
			return;
		}
		log->buf = buf;
		log->cap = cap;
	}
	vsnprintf(log->buf + log->len, need + 1, fmt, ap);
	log->len += need;
}

static int capture_print(enum libbpf_print_level level, const char *fmt,
			 va_list ap)
{
	struct bench_ctx *ctx = capturing;
	va_list aq;

	if (!ctx)
		return 0;
	if (level == LIBBPF_DEBUG && !ctx->env.verbose)
		return 0;
	if (ctx->env.verbose) {
		va_copy(aq, ap);
		vfprintf(stderr, fmt, aq);
		va_end(aq);
	}
	bench_log_append(&ctx->log, fmt, ap);
	return 0;
}

void bench_log_begin(struct bench_ctx *ctx)
{
	capturing = ctx;
	libbpf_set_print(capture_print);
}

void bench_log_end(struct bench_ctx *ctx)
{
	if (capturing == ctx)
		capturing = NULL;
}

int bench_ensure_tracefs(struct bench_ctx *ctx)
{
	static const char *const roots[] = {
		"/sys/kernel/tracing/events",
		"/sys/kernel/debug/tracing/events",
	};
	struct stat st;
	bool denied = false;
	size_t i;

	for (i = 0; i < sizeof(roots) / sizeof(roots[0]); i++) {
		if (stat(roots[i], &st) == 0 && S_ISDIR(st.st_mode))
			return 0;
		denied |= errno == EACCES;
	}
	/* Mounted but closed to this user: mounting again cannot help. */
	if (denied)
		return bench_fail(ctx, BENCH_ERR_PERMISSION, EACCES,
				  "%s: tracefs (/sys/kernel/tracing) is not accessible to this user: "
				  "attaching to tracepoints needs root, or CAP_BPF and CAP_PERFMON",
				  ctx->bench->name);
	/* libbpf reads tracepoint ids from tracefs: mount it where it looks */
	if (mount("nodev", "/sys/kernel/tracing", "tracefs", 0, NULL) == 0) {
		/* The machine was changed on the user's behalf: say so. */
		ctx->tracefs_mounted = true;
		return 0;
	}
	return bench_fail(ctx, errno == EPERM ? BENCH_ERR_PERMISSION : BENCH_ERR_UNSUPPORTED,
			  errno,
			  "%s: tracefs is not mounted and mounting it at /sys/kernel/tracing failed (%s); "
			  "mount it: mount -t tracefs nodev /sys/kernel/tracing",
			  ctx->bench->name, strerror(errno));
}

int bench_kernel_has_func(const char *name)
{
	struct btf *btf;
	int id;

	/* A kfunc the verifier can resolve is a FUNC of vmlinux BTF (or of a
	 * module's, which benchbpf's drivers do not use). */
	btf = btf__load_vmlinux_btf();
	if (!btf)
		return -errno;
	id = btf__find_by_name_kind(btf, name, BTF_KIND_FUNC);
	btf__free(btf);
	return id > 0 ? 1 : 0;
}

int bench_check_btf(struct bench_ctx *ctx)
{
	static const char path[] = "/sys/kernel/btf/vmlinux";
	enum bench_err_kind kind;
	int err;

	/* Every object is built against vmlinux.h and relocated with CO-RE:
	 * without the kernel's BTF, libbpf would fail later and vaguely. */
	if (access(path, R_OK) == 0)
		return 0;
	err = errno;
	switch (err) {
	case ENOENT:
	case ENOTDIR:
		kind = BENCH_ERR_UNSUPPORTED;
		break;
	case EACCES:
		kind = BENCH_ERR_PERMISSION;
		break;
	default:
		kind = BENCH_ERR_OS;
	}
	return bench_fail(ctx, kind, err,
			  "%s: kernel BTF (%s) unavailable: %s; benchbpf needs a kernel "
			  "built with CONFIG_DEBUG_INFO_BTF=y",
			  ctx->bench->name, path, strerror(err));
}

int bench_check_fds(struct bench_ctx *ctx, int need)
{
	struct rlimit r;
	struct dirent *d;
	DIR *dir = NULL;
	long open_fds = 0;
	int ret = 0;

	if (getrlimit(RLIMIT_NOFILE, &r) || r.rlim_cur == RLIM_INFINITY)
		goto cleanup;
	dir = opendir("/proc/self/fd");
	if (!dir) {
		if (errno == EMFILE || errno == ENFILE)
			ret = bench_fail(ctx, BENCH_ERR_OS, errno,
					 "%s: no file descriptor left to start with",
					 ctx->bench->name);
		goto cleanup;	/* no /proc: let the run find out */
	}
	while ((d = readdir(dir)))
		if (d->d_name[0] != '.')
			open_fds++;
	open_fds--;	/* the directory's own */
	/*
	 * libbpf probes kernel features the first time it loads an object and
	 * caches the answers for the life of the process: a probe that fails
	 * for want of a descriptor would make every later run in this process
	 * fail too.  So refuse before loading anything, while it is clean.
	 */
	if ((long long)r.rlim_cur - open_fds < need)
		ret = bench_fail(ctx, BENCH_ERR_OS, EMFILE,
				 "%s: %ld of %llu file descriptors in use, it needs about %d free",
				 ctx->bench->name, open_fds, (unsigned long long)r.rlim_cur,
				 need);
cleanup:
	if (dir)
		closedir(dir);
	return ret;
}

bool bench_bpf_privileged(void)
{
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];

	/* Effective capabilities, not the uid: root in a container with
	 * its capabilities dropped cannot load programs either. */
	if (syscall(SYS_capget, &hdr, data))
		return geteuid() == 0;
#define HAS_CAP(c) (data[(c) / 32].effective & (1u << ((c) % 32)))
	return HAS_CAP(CAP_SYS_ADMIN) || (HAS_CAP(CAP_BPF) && HAS_CAP(CAP_PERFMON));
#undef HAS_CAP
}

int bench_bump_memlock(void)
{
	struct rlimit r = { RLIM_INFINITY, RLIM_INFINITY };

	/* Kernels >= 5.11 charge BPF memory to cgroups and ignore this. */
	if (setrlimit(RLIMIT_MEMLOCK, &r) == 0)
		return 0;
	/* Without CAP_SYS_RESOURCE the hard limit stays: go up to it. */
	if (getrlimit(RLIMIT_MEMLOCK, &r) || r.rlim_cur == r.rlim_max)
		return -EPERM;
	r.rlim_cur = r.rlim_max;
	return setrlimit(RLIMIT_MEMLOCK, &r) ? -errno : 0;
}

/*
 * The BPF objects this process holds through descriptors, by kind and id,
 * read from /proc/self/fd and fdinfo.  A run compares the set after setup
 * with the one before it to learn what it loaded, whatever family it is.
 */
static int fdinfo_id(int fd, const char *key)
{
	char path[64], line[128];
	size_t klen = strlen(key);
	int id = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, key, klen) == 0 && line[klen] == ':') {
			id = atoi(line + klen + 1);
			break;
		}
	fclose(f);
	return id;
}

void bench_bpf_ids_snapshot(struct bench_bpf_ids *ids)
{
	static const struct { const char *target, *key; enum bench_bpf_kind kind; } kinds[] = {
		{ "anon_inode:bpf-prog", "prog_id", BENCH_BPF_PROG },
		{ "anon_inode:bpf-map", "map_id", BENCH_BPF_MAP },
		{ "anon_inode:bpf_link", "link_id", BENCH_BPF_LINK },
	};
	struct dirent *de;
	char path[64], target[64];
	DIR *dir;

	ids->nr = 0;
	dir = opendir("/proc/self/fd");
	if (!dir)
		return;
	while ((de = readdir(dir)) && ids->nr < BENCH_MAX_IDS) {
		ssize_t n;
		size_t k;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/fd/%s", de->d_name);
		n = readlink(path, target, sizeof(target) - 1);
		if (n <= 0)
			continue;
		target[n] = '\0';
		for (k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
			int id;

			if (strcmp(target, kinds[k].target))
				continue;
			id = fdinfo_id(atoi(de->d_name), kinds[k].key);
			if (id > 0) {
				ids->obj[ids->nr].kind = kinds[k].kind;
				ids->obj[ids->nr].id = (uint32_t)id;
				ids->nr++;
			}
		}
	}
	closedir(dir);
}

void bench_bpf_ids_subtract(struct bench_bpf_ids *ids, const struct bench_bpf_ids *before)
{
	int i, j, kept = 0;

	for (i = 0; i < ids->nr; i++) {
		bool old = false;

		for (j = 0; j < before->nr && !old; j++)
			old = before->obj[j].kind == ids->obj[i].kind &&
			      before->obj[j].id == ids->obj[i].id;
		if (!old)
			ids->obj[kept++] = ids->obj[i];
	}
	ids->nr = kept;
}

/*
 * Closing the last descriptor does not free every object at once: links of
 * some kinds (raw_tp, uprobe-multi) and the programs and maps behind them go
 * after an RCU grace period.  Waiting here means that when a run returns,
 * nothing it loaded is still listed in the kernel.
 */
void bench_bpf_ids_wait_released(const struct bench_bpf_ids *ids, uint64_t timeout_ns)
{
	uint64_t deadline = bench_now_ns() + timeout_ns;
	int i, fd;

	for (i = 0; i < ids->nr; i++) {
		for (;;) {
			switch (ids->obj[i].kind) {
			case BENCH_BPF_PROG: fd = bpf_prog_get_fd_by_id(ids->obj[i].id); break;
			case BENCH_BPF_MAP: fd = bpf_map_get_fd_by_id(ids->obj[i].id); break;
			default: fd = bpf_link_get_fd_by_id(ids->obj[i].id); break;
			}
			if (fd < 0)
				break;		/* gone (or no longer ours to see) */
			close(fd);
			if (bench_now_ns() > deadline)
				return;
			usleep(2000);
		}
	}
}

const char *bench_attach_point(const struct bpf_program *prog)
{
	const char *sec = bpf_program__section_name(prog);

	return sec[0] == '?' ? sec + 1 : sec;	/* '?': not autoloaded, not the name */
}

void bench_set_trigger(struct bench_ctx *ctx, struct bpf_program *const *progs, int n)
{
	size_t off = 0;
	int i;

	ctx->trigger[0] = '\0';
	for (i = 0; i < n && progs[i] && off < sizeof(ctx->trigger); i++) {
		const char *sec = bench_attach_point(progs[i]);

		off += snprintf(ctx->trigger + off, sizeof(ctx->trigger) - off, "%s%s",
				i ? " + " : "", sec);
	}
}

const char *bench_errno_name(int err)
{
	const char *s;

	if (err < 0)
		err = -err;
	if (err == 524)
		return "ENOTSUPP";
	s = strerrorname_np(err);
	return s ? s : "unknown errno";
}

/*
 * Our process id as BPF sees it: `whoami` (a raw_tp program returning
 * bpf_get_current_pid_tgid() >> 32) run through BPF_PROG_TEST_RUN, which
 * runs it in this thread.  Where the test run fails, /proc's answer, which
 * is 0 (count every process, as the kernel bench does) in a nested pid
 * namespace.
 */
uint32_t bench_bpf_tgid(struct bpf_program *whoami)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts);

	if (bpf_prog_test_run_opts(bpf_program__fd(whoami), &opts) || !opts.retval)
		return bench_own_tgid();
	return opts.retval;
}

/*
 * Our process id in the initial pid namespace, from /proc's NSpid line, or
 * 0 when this process runs in a nested pid namespace and cannot tell (then
 * a filter on it must count every process, as the kernel bench does).
 */
uint32_t bench_own_tgid(void)
{
	char line[256];
	uint32_t pid = 0;
	int fields = 0;
	FILE *f = fopen("/proc/self/status", "re");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		char *p = line + 6, *end;

		if (strncmp(line, "NSpid:", 6))
			continue;
		for (;;) {
			unsigned long v = strtoul(p, &end, 10);

			if (end == p)
				break;
			pid = v;
			fields++;
			p = end;
		}
		break;
	}
	fclose(f);
	return fields == 1 ? pid : 0;
}

/*
 * prog_stats: the kernel's run-time statistics (run_cnt, run_time_ns) of
 * each program a run loaded.  They are on while any BPF_ENABLE_STATS fd is
 * open or the kernel.bpf_stats_enabled sysctl is set; a run only ever adds
 * its own fd, so whatever the machine had before is what it has after.
 */
int bench_prog_stats_enable(struct bench_ctx *ctx)
{
	struct bench_prog_stats *ps = &ctx->prog_stats;
	int fd, err;

	fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
	if (fd >= 0) {
		ps->stats_fd = fd;
		return 0;
	}
	err = -fd;
	if (err == EPERM && !bench_bpf_privileged())
		return bench_fail(ctx, BENCH_ERR_PERMISSION, err,
				  "%s: prog_stats=True: enabling the kernel's BPF run-time "
				  "statistics needs CAP_SYS_ADMIN: %s", ctx->bench->name,
				  strerror(err));
	if (err == EMFILE || err == ENFILE)
		return bench_fail(ctx, BENCH_ERR_OS, err,
				  "%s: prog_stats=True: no descriptor left for BPF_ENABLE_STATS",
				  ctx->bench->name);
	return bench_fail(ctx, BENCH_ERR_UNSUPPORTED, err,
			  "%s: prog_stats=True: BPF run-time statistics (BPF_ENABLE_STATS, "
			  "Linux 5.8) unavailable on this kernel: it answered %s",
			  ctx->bench->name, strerror(err));
}

/* The program's full name from its BTF (the kernel keeps only 15
 * characters in info.name); *name is left as it is when there is none. */
static void prog_btf_name(int fd, char *name, size_t len)
{
	struct bpf_prog_info info = {};
	struct bpf_func_info func = {};
	__u32 info_len = sizeof(info);
	const struct btf_type *t;
	struct btf *btf = NULL;
	const char *s;

	info.nr_func_info = 1;
	info.func_info_rec_size = sizeof(func);
	info.func_info = (__u64)(uintptr_t)&func;
	if (bpf_obj_get_info_by_fd(fd, &info, &info_len) || !info.btf_id ||
	    !info.nr_func_info)
		goto cleanup;
	btf = btf__load_from_kernel_by_id(info.btf_id);
	if (!btf)
		goto cleanup;
	t = btf__type_by_id(btf, func.type_id);
	s = t ? btf__name_by_offset(btf, t->name_off) : NULL;
	if (s && s[0])
		snprintf(name, len, "%s", s);
cleanup:
	btf__free(btf);
}

int bench_prog_stats_open(struct bench_ctx *ctx)
{
	struct bench_prog_stats *ps = &ctx->prog_stats;
	struct bench_bpf_ids *loaded;
	int i, ret = 0;

	loaded = malloc(sizeof(*loaded));
	if (!loaded)
		return bench_fail(ctx, BENCH_ERR_OS, ENOMEM, "out of memory");
	bench_bpf_ids_snapshot(loaded);
	bench_bpf_ids_subtract(loaded, &ctx->held_before);
	for (i = 0; i < loaded->nr; i++) {
		struct bench_prog_stat *p = &ps->prog[ps->nr];
		struct bpf_prog_info info = {};
		__u32 info_len = sizeof(info);
		const char *type;
		int fd, j;
		bool seen = false;

		if (loaded->obj[i].kind != BENCH_BPF_PROG)
			continue;
		for (j = 0; j < ps->nr && !seen; j++)
			seen = ps->prog[j].id == loaded->obj[i].id;
		if (seen)
			continue;
		if (ps->nr == BENCH_MAX_PROGS) {
			ret = bench_fail(ctx, BENCH_ERR_BENCH, E2BIG,
					 "%s: prog_stats=True: the run loaded more than %d programs",
					 ctx->bench->name, BENCH_MAX_PROGS);
			break;
		}
		/* A descriptor of our own: the counters stay readable whatever
		 * the family does with its objects until bench_finish. */
		fd = bpf_prog_get_fd_by_id(loaded->obj[i].id);
		if (fd < 0) {
			ret = bench_fail(ctx, BENCH_ERR_OS, errno,
					 "%s: prog_stats=True: cannot open program id %u: %s",
					 ctx->bench->name, loaded->obj[i].id, strerror(errno));
			break;
		}
		ps->fds[ps->nr++] = fd;
		if (bpf_obj_get_info_by_fd(fd, &info, &info_len)) {
			ret = bench_fail(ctx, BENCH_ERR_OS, errno,
					 "%s: prog_stats=True: reading program id %u failed: %s",
					 ctx->bench->name, loaded->obj[i].id, strerror(errno));
			break;
		}
		p->id = info.id;
		snprintf(p->name, sizeof(p->name), "%s", info.name);
		prog_btf_name(fd, p->name, sizeof(p->name));
		type = libbpf_bpf_prog_type_str(info.type);
		snprintf(p->type, sizeof(p->type), "%s", type ? type : "unknown");
		/* Counted from load: the window's start when there is no warm-up. */
		p->run_cnt = 0;
		p->run_time_ns = 0;
	}
	free(loaded);
	return ret;
}

int bench_prog_stats_read(struct bench_prog_stats *ps, bool window_end)
{
	int i;

	for (i = 0; i < ps->nr; i++) {
		struct bench_prog_stat *p = &ps->prog[i];
		struct bpf_prog_info info = {};
		__u32 info_len = sizeof(info);

		/* Our own descriptor: fails only for want of memory. */
		if (bpf_obj_get_info_by_fd(ps->fds[i], &info, &info_len))
			return -errno;
		if (window_end) {
			p->run_cnt = info.run_cnt - p->run_cnt;
			p->run_time_ns = info.run_time_ns - p->run_time_ns;
		} else {
			p->run_cnt = info.run_cnt;
			p->run_time_ns = info.run_time_ns;
		}
	}
	if (window_end)
		ps->complete = ps->started;
	else
		ps->started = true;
	return 0;
}

void bench_prog_stats_close(struct bench_prog_stats *ps)
{
	int i;

	/* prog[] stays: the binding reads it once the run is over. */
	for (i = 0; i < ps->nr; i++) {
		if (ps->fds[i] >= 0)
			close(ps->fds[i]);
		ps->fds[i] = -1;
	}
	if (ps->stats_fd >= 0)
		close(ps->stats_fd);
	ps->stats_fd = -1;
}
