// SPDX-License-Identifier: MIT
/*
 * Kernel feature probes: ask the kernel, don't guess.  Each probe opens the
 * features object, enables exactly one program (and creates only the maps
 * that program uses), loads it and, for attach kinds, attaches and detaches
 * it.  The entry records what was tried and what the kernel answered.
 * Everything is destroyed before the next probe starts.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bench.h"
#include "features.skel.h"
#include "trigger.h"
#include "uprobe_multi.h"

#define TEST_RUN_ARG 41

enum probe_kind {
	PROBE_ATTACH,		/* load, bpf_program__attach, detach */
	PROBE_LOAD,		/* load only: helpers, map types */
	PROBE_KPROBE_MULTI,	/* load, BPF_LINK_CREATE with one symbol */
	PROBE_UPROBE,		/* load, attach to probe_target() */
	PROBE_UPROBE_NOP5,	/* as PROBE_UPROBE, on a function opening with a 5-byte nop */
	PROBE_UPROBE_NOP10,	/* ... with a 10-byte nop */
	PROBE_URETPROBE,
	PROBE_UPROBE_MULTI,	/* load as uprobe_multi, raw BPF_LINK_CREATE */
	PROBE_TEST_RUN,		/* load, BPF_PROG_TEST_RUN */
	PROBE_TEST_RUN_XDP,	/* load, BPF_PROG_TEST_RUN over a packet */
	PROBE_ENABLE_STATS,	/* BPF_ENABLE_STATS, no program */
	PROBE_KFUNC,		/* the kfunc in kernel BTF, then load a caller */
	PROBE_LSM,		/* load, attach, create a socket: did it run? */
};

struct probe_def {
	const char *name;	/* feature name */
	enum probe_kind kind;
	const char *prog;	/* program in features.bpf.c */
	const char *map;	/* map created with it (besides .rodata) */
	const char *what;	/* "a kprobe program on __set_task_comm" */
	int hint_err;		/* refusal the hint explains */
	const char *hint;
};

static const struct probe_def probes[] = {
	{ "tracepoint", PROBE_ATTACH, "feat_tracepoint", NULL,
	  "a tracepoint program on syscalls/sys_enter_getpgid", ENOENT,
	  "tracefs is not mounted or the tracepoint is missing (CONFIG_FTRACE_SYSCALLS off?)" },
	{ "raw_tp", PROBE_ATTACH, "feat_raw_tp", NULL,
	  "a raw_tp program on task_rename", 0, NULL },
	{ "tp_btf", PROBE_ATTACH, "feat_tp_btf", NULL,
	  "a tp_btf program on task_rename", 0, NULL },
	{ "kprobe", PROBE_ATTACH, "feat_kprobe", NULL,
	  "a kprobe program on __set_task_comm", ENOENT,
	  "this kernel has no kprobes (CONFIG_KPROBES off?) or cannot probe __set_task_comm" },
	{ "kretprobe", PROBE_ATTACH, "feat_kretprobe", NULL,
	  "a kretprobe program on __set_task_comm", ENOENT,
	  "this kernel has no kretprobes (CONFIG_KPROBES off?) or cannot probe __set_task_comm" },
	{ "kprobe_multi", PROBE_KPROBE_MULTI, "feat_kprobe_multi", NULL,
	  "a kprobe.multi program on __set_task_comm", EOPNOTSUPP,
	  "this kernel has no multi-kprobe links (CONFIG_FPROBE off?)" },
	{ "fentry", PROBE_ATTACH, "feat_fentry", NULL,
	  "an fentry program on __set_task_comm", EPERM,
	  "this kernel forbids BPF trampolines (lockdown?)" },
	{ "fexit", PROBE_ATTACH, "feat_fexit", NULL,
	  "an fexit program on __set_task_comm", EPERM,
	  "this kernel forbids BPF trampolines (lockdown?)" },
	{ "fmod_ret", PROBE_ATTACH, "feat_fmod_ret", NULL,
	  "an fmod_ret program on bpf_modify_return_test", EPERM,
	  "this kernel forbids BPF trampolines (lockdown?)" },
	{ "uprobe", PROBE_UPROBE, "feat_uprobe", NULL,
	  "a uprobe program on a function of this process", ENOENT,
	  "this kernel has no uprobes (CONFIG_UPROBE_EVENTS off?)" },
	{ "uprobe_nop5", PROBE_UPROBE_NOP5, "feat_uprobe", NULL,
	  "a uprobe program on a 5-byte nop of this process", 524,
	  "this kernel's uprobes cannot decode that instruction" },
	{ "uprobe_nop10", PROBE_UPROBE_NOP10, "feat_uprobe", NULL,
	  "a uprobe program on a 10-byte nop (cs nopw) of this process", 524,
	  "this kernel's uprobe decoder refuses the cs segment prefix that nop opens with" },
	{ "uretprobe", PROBE_URETPROBE, "feat_uretprobe", NULL,
	  "a uretprobe program on a function of this process", ENOENT,
	  "this kernel has no uprobes (CONFIG_UPROBE_EVENTS off?)" },
	{ "uprobe_multi", PROBE_UPROBE_MULTI, "feat_uprobe_multi", NULL,
	  "a uprobe_multi program on a function of this process", EINVAL,
	  "this kernel predates multi-uprobe links (Linux 6.6)" },
	{ "prog_test_run_raw_tp", PROBE_TEST_RUN, "feat_test_run", NULL,
	  "a raw_tp program through BPF_PROG_TEST_RUN", EINVAL,
	  "this kernel cannot test-run raw_tp programs (Linux 5.10)" },
	{ "trigger_kfunc", PROBE_KFUNC, "feat_trigger_kfunc", NULL,
	  "the kfunc " TRIG_DRIVER_KFUNC " (called from a raw_tp program)", ENOENT,
	  "this kernel predates it (Linux 6.10); trig-tp, trig-rawtp and trig-fmodret "
	  "drive their hooks through it" },
	{ "bpf_lsm", PROBE_LSM, "feat_bpf_lsm", NULL,
	  "a BPF LSM program on socket_post_create", EOPNOTSUPP,
	  "the BPF LSM is not active (\"bpf\" is not in the kernel's lsm= list)" },
	{ "prog_test_run_xdp", PROBE_TEST_RUN_XDP, "feat_test_run_xdp", NULL,
	  "an XDP program through BPF_PROG_TEST_RUN", EINVAL,
	  "this kernel cannot test-run XDP programs" },
	{ "ringbuf", PROBE_LOAD, "feat_ringbuf", "feat_ringbuf_map",
	  "a ringbuf map and a program writing to it", EINVAL,
	  "this kernel predates BPF ring buffers (Linux 5.8)" },
	{ "perf_event_array", PROBE_LOAD, "feat_perf_event_array", "feat_perf_map",
	  "a perf_event_array map and a program writing to it", 0, NULL },
	{ "bloom_filter", PROBE_LOAD, "feat_bloom_filter", "feat_bloom_map",
	  "a bloom_filter map and a program reading it", EINVAL,
	  "this kernel predates bloom filter maps (Linux 5.16)" },
	{ "task_storage", PROBE_LOAD, "feat_task_storage", "feat_task_storage_map",
	  "a task_storage map and a program using it", EINVAL,
	  "this kernel has no task storage for raw_tp programs (CONFIG_BPF_LSM off or too old?)" },
	{ "hash", PROBE_LOAD, "feat_hash", "feat_hash_map",
	  "a hash map and a program reading it", 0, NULL },
	{ "bpf_loop", PROBE_LOAD, "feat_bpf_loop", NULL,
	  "a program calling bpf_loop", EINVAL,
	  "this kernel predates the bpf_loop helper (Linux 5.17)" },
	{ "bpf_strncmp", PROBE_LOAD, "feat_bpf_strncmp", NULL,
	  "a program calling bpf_strncmp", EINVAL,
	  "this kernel predates the bpf_strncmp helper (Linux 5.17)" },
	{ "lpm_trie", PROBE_LOAD, "feat_lpm_trie", "feat_lpm_map",
	  "an lpm_trie map and a program reading it", EINVAL,
	  "this kernel has no LPM trie maps" },
	{ "may_goto", PROBE_LOAD, "feat_may_goto", NULL,
	  "a syscall program with a loop bounded by may_goto", EINVAL,
	  "this kernel predates may_goto (Linux 6.9) or syscall programs (5.14)" },
	{ "bpf_iter_num", PROBE_LOAD, "feat_bpf_iter_num", NULL,
	  "a program looping with bpf_for() (bpf_iter_num kfuncs)", EINVAL,
	  "this kernel predates open-coded numeric iterators (Linux 6.4)" },
	{ "bpf_crypto", PROBE_LOAD, "feat_bpf_crypto", NULL,
	  "a syscall program calling bpf_crypto_ctx_create and bpf_crypto_ctx_release", EINVAL,
	  "this kernel has no BPF crypto kfuncs (Linux 6.10, CONFIG_CRYPTO_SKCIPHER)" },
	{ "bpf_enable_stats", PROBE_ENABLE_STATS, NULL, NULL,
	  "run-time statistics (BPF_ENABLE_STATS)", EINVAL,
	  "this kernel predates BPF_ENABLE_STATS (Linux 5.8)" },
};

#define NR_PROBES (int)(sizeof(probes) / sizeof(probes[0]))

const struct bench bench_features_probe = {
	.name = "features",
	.family = "features",
	.no_bpf = true,
};

/* The uprobe probes attach here; never called. */
__attribute__((noinline, used)) int bench_features_uprobe_target(int x)
{
	__asm__ volatile("" : "+r"(x));
	return x;
}

/* The multi-byte nop targets (x86-64): the kernel bench's 5-byte and
 * 10-byte nop, then ret.  Never called. */
void bench_features_nop5_target(void) __attribute__((visibility("hidden")));
void bench_features_nop10_target(void) __attribute__((visibility("hidden")));
#if defined(__x86_64__)
__asm__(
	"	.text\n"
	"	.p2align 4\n"
	"	.type bench_features_nop5_target, @function\n"
	"bench_features_nop5_target:\n"
	"	.byte 0x0f, 0x1f, 0x44, 0x00, 0x00\n"
	"	ret\n"
	"	.size bench_features_nop5_target, .-bench_features_nop5_target\n"
	"	.p2align 4\n"
	"	.type bench_features_nop10_target, @function\n"
	"bench_features_nop10_target:\n"
	"	.byte 0x66, 0x2e, 0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00\n"
	"	ret\n"
	"	.size bench_features_nop10_target, .-bench_features_nop10_target\n");
#define FEATURES_HAVE_X86 1
#else
void bench_features_nop5_target(void) { }
void bench_features_nop10_target(void) { }
#define FEATURES_HAVE_X86 0
#endif

/* how: "loading %s" or "%s loaded, but attaching it", %s being d->what */
static void describe_refusal(struct bench_feature *f, const struct probe_def *d,
			     const char *how, int err)
{
	const char *hint = NULL;
	char step[160];

	if (err < 0)
		err = -err;
	f->supported = false;
	f->err = err;
	if (d->hint && err == d->hint_err)
		hint = d->hint;
	else if (err == EPERM)
		hint = "the kernel denies it even to root (lockdown or a security module?)";
	else if (err == EOPNOTSUPP || err == 524)
		hint = "this kernel was built without it";
	snprintf(step, sizeof(step), how, d->what);
	if (snprintf(f->detail, sizeof(f->detail), "%s was refused: %s (%s)%s%s",
		     step, err == 524 ? "Not supported" : strerror(err),
		     bench_errno_name(err), hint ? "; " : "", hint ? hint : "") >=
	    (int)sizeof(f->detail))
		memcpy(f->detail + sizeof(f->detail) - 4, "...", 4);
}

/* Where libbpf says a map could not be created, the map was refused. */
static bool log_says_map_failed(const struct bench_log *log)
{
	return log->buf && log->len && strstr(log->buf, "failed to create");
}

static void probe_enable_stats(struct bench_feature *f, const struct probe_def *d)
{
	int fd = bpf_enable_stats(BPF_STATS_RUN_TIME);

	if (fd < 0) {
		describe_refusal(f, d, "enabling %s", fd);
		return;
	}
	close(fd);
	f->supported = true;
	snprintf(f->detail, sizeof(f->detail),
		 "enabled %s and disabled them again", d->what);
}

static int uprobe_target(enum probe_kind kind, char *path, size_t path_sz,
			 unsigned long *offset)
{
	const void *fn = kind == PROBE_UPROBE_NOP5 ? (const void *)bench_features_nop5_target :
			 kind == PROBE_UPROBE_NOP10 ? (const void *)bench_features_nop10_target :
			 (const void *)&bench_features_uprobe_target;
	long off = bench_uprobe_offset(fn, path, path_sz);

	if (off < 0)
		return (int)off;
	*offset = (unsigned long)off;
	return 0;
}

static void probe_program(struct bench_ctx *ctx, struct bench_feature *f,
			  const struct probe_def *d)
{
	struct features_bpf *skel = NULL;
	struct bpf_program *prog;
	struct bpf_link *link = NULL;
	struct bpf_map *map;
	char path[4096];
	unsigned long offset;
	int link_fd = -1, err;

	if (!FEATURES_HAVE_X86 && (d->kind == PROBE_UPROBE_NOP5 || d->kind == PROBE_UPROBE_NOP10)) {
		f->supported = false;
		f->err = EOPNOTSUPP;
		snprintf(f->detail, sizeof(f->detail), "%s: the target is x86-64 code", d->what);
		goto cleanup;
	}
	skel = features_bpf__open();
	if (!skel) {
		describe_refusal(f, d, "opening the BPF object for %s", -errno);
		goto cleanup;
	}
	prog = bpf_object__find_program_by_name(skel->obj, d->prog);
	if (!prog) {
		describe_refusal(f, d, "finding the program for %s", ENOENT);
		goto cleanup;
	}
	bpf_program__set_autoload(prog, true);
	bpf_object__for_each_map(map, skel->obj) {
		/* libbpf binds .rodata to every program: always create it */
		bool want = bpf_map__is_internal(map) ||
			    (d->map && strcmp(d->map, bpf_map__name(map)) == 0);

		bpf_map__set_autocreate(map, want);
	}
	if (d->kind == PROBE_UPROBE_MULTI)
		bpf_program__set_expected_attach_type(prog, BENCH_BPF_TRACE_UPROBE_MULTI);
	if (d->kind == PROBE_ATTACH && strcmp(d->name, "tracepoint") == 0)
		bench_ensure_tracefs(ctx);	/* as a run would; failure shows below */

	if (d->kind == PROBE_KFUNC) {
		err = bench_kernel_has_func(TRIG_DRIVER_KFUNC);
		if (err <= 0) {
			describe_refusal(f, d, err ? "reading kernel BTF to look up %s" :
					 "looking up %s in kernel BTF", err ? err : -ENOENT);
			goto cleanup;
		}
	}

	ctx->log.len = 0;
	ctx->log.truncated = false;
	if (ctx->log.buf)
		ctx->log.buf[0] = '\0';
	err = features_bpf__load(skel);
	if (err) {
		describe_refusal(f, d, d->map && log_says_map_failed(&ctx->log) ?
				 "creating the map for %s" : "loading %s", err);
		goto cleanup;
	}

	switch (d->kind) {
	case PROBE_ATTACH:
		link = bpf_program__attach(prog);
		if (!link) {
			describe_refusal(f, d, "%s loaded, but attaching it", -errno);
			goto cleanup;
		}
		snprintf(f->detail, sizeof(f->detail),
			 "loaded and attached %s, then detached it", d->what);
		break;
	case PROBE_LSM: {
		int fd;

		link = bpf_program__attach(prog);
		if (!link) {
			describe_refusal(f, d, "%s loaded, but attaching it", -errno);
			goto cleanup;
		}
		fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		if (fd < 0) {
			describe_refusal(f, d, "creating a socket to run %s", -errno);
			goto cleanup;
		}
		close(fd);
		if (!__atomic_load_n(&skel->bss->feat_lsm_runs, __ATOMIC_RELAXED)) {
			describe_refusal(f, d, "%s attached, but it never ran when a socket was "
					 "created", EOPNOTSUPP);
			goto cleanup;
		}
		snprintf(f->detail, sizeof(f->detail),
			 "loaded and attached %s, saw it run on a new socket, then detached it",
			 d->what);
		break;
	}
	case PROBE_KPROBE_MULTI: {
		const char *syms[] = { "__set_task_comm" };
		LIBBPF_OPTS(bpf_link_create_opts, opts,
			    .kprobe_multi.syms = syms, .kprobe_multi.cnt = 1);

		link_fd = bpf_link_create(bpf_program__fd(prog), 0,
					  BPF_TRACE_KPROBE_MULTI, &opts);
		if (link_fd < 0) {
			describe_refusal(f, d, "%s loaded, but attaching it", link_fd);
			goto cleanup;
		}
		snprintf(f->detail, sizeof(f->detail),
			 "loaded and attached %s, then detached it", d->what);
		break;
	}
	case PROBE_UPROBE:
	case PROBE_UPROBE_NOP5:
	case PROBE_UPROBE_NOP10:
	case PROBE_URETPROBE:
	case PROBE_UPROBE_MULTI:
		err = uprobe_target(d->kind, path, sizeof(path), &offset);
		if (err) {
			describe_refusal(f, d, "locating the target function for %s", err);
			goto cleanup;
		}
		if (d->kind == PROBE_UPROBE_MULTI) {
			link_fd = bench_attach_uprobe_multi(bpf_program__fd(prog), path,
							    &offset, 1, false);
			err = link_fd < 0 ? link_fd : 0;
		} else {
			link = bpf_program__attach_uprobe(prog, d->kind == PROBE_URETPROBE,
							  0, path, offset);
			err = link ? 0 : -errno;
		}
		if (err) {
			describe_refusal(f, d, "%s loaded, but attaching it", err);
			goto cleanup;
		}
		snprintf(f->detail, sizeof(f->detail),
			 "loaded and attached %s, then detached it", d->what);
		break;
	case PROBE_TEST_RUN: {
		__u64 args[1] = { TEST_RUN_ARG };
		LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = args,
			    .ctx_size_in = sizeof(args));

		err = bpf_prog_test_run_opts(bpf_program__fd(prog), &opts);
		if (err) {
			describe_refusal(f, d, "%s loaded, but running it", err);
			goto cleanup;
		}
		if (opts.retval != TEST_RUN_ARG + 1) {
			snprintf(f->detail, sizeof(f->detail),
				 "ran %s, but it returned %u instead of %d",
				 d->what, opts.retval, TEST_RUN_ARG + 1);
			goto cleanup;
		}
		snprintf(f->detail, sizeof(f->detail),
			 "ran %s: it returned %u as expected", d->what, opts.retval);
		break;
	}
	case PROBE_TEST_RUN_XDP: {
		__u8 pkt[64] = { 0 };
		LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = pkt,
			    .data_size_in = sizeof(pkt), .repeat = 1);

		err = bpf_prog_test_run_opts(bpf_program__fd(prog), &opts);
		if (err) {
			describe_refusal(f, d, "%s loaded, but running it", err);
			goto cleanup;
		}
		if (opts.retval != XDP_TX) {
			snprintf(f->detail, sizeof(f->detail),
				 "ran %s, but it returned %u instead of XDP_TX", d->what,
				 opts.retval);
			goto cleanup;
		}
		snprintf(f->detail, sizeof(f->detail),
			 "ran %s over a packet: it returned XDP_TX as expected", d->what);
		break;
	}
	default:
		snprintf(f->detail, sizeof(f->detail), "loaded %s", d->what);
		break;
	}
	f->supported = true;
	f->err = 0;

cleanup:
	bpf_link__destroy(link);
	if (link_fd >= 0)
		close(link_fd);
	features_bpf__destroy(skel);
}

static void probe_one(struct bench_ctx *ctx, const struct probe_def *d,
		      struct bench_feature *f)
{
	memset(f, 0, sizeof(*f));
	snprintf(f->name, sizeof(f->name), "%s", d->name);
	if (d->kind == PROBE_ENABLE_STATS)
		probe_enable_stats(f, d);
	else
		probe_program(ctx, f, d);
}

int bench_probe_feature(struct bench_ctx *ctx, const char *name, struct bench_feature *out)
{
	int i;

	for (i = 0; i < NR_PROBES; i++) {
		if (strcmp(probes[i].name, name) == 0) {
			probe_one(ctx, &probes[i], out);
			return 0;
		}
	}
	return -ENOENT;
}

int bench_require_feature(struct bench_ctx *ctx, const char *name, const char *what,
			  const char *fmt, ...)
{
	struct bench_feature f;
	char missing[512];
	va_list ap;
	int err = bench_probe_feature(ctx, name, &f);

	if (err)
		return bench_fail(ctx, BENCH_ERR_BENCH, -err, "%s: probing %s: %s",
				  ctx->bench->name, name, strerror(-err));
	if (f.supported)
		return 0;
	/* A probe refused for want of privileges says nothing of the kernel. */
	if (f.err == EPERM && !bench_bpf_privileged())
		return bench_fail_bpf(ctx, f.err, what, "%s: probing %s: %s",
				      ctx->bench->name, name, f.detail);
	va_start(ap, fmt);
	vsnprintf(missing, sizeof(missing), fmt, ap);
	va_end(ap);
	return bench_fail(ctx, BENCH_ERR_UNSUPPORTED, f.err ? f.err : EOPNOTSUPP, "%s: %s: %s",
			  ctx->bench->name, missing, f.detail);
}

int bench_probe_features(struct bench_ctx *ctx, struct bench_feature *out, int max)
{
	int i, n = 0;

	if (!out || max <= 0)
		return 0;
	bench_log_begin(ctx);	/* keep libbpf's complaints off stderr */
	for (i = 0; i < NR_PROBES && n < max; i++, n++)
		probe_one(ctx, &probes[i], &out[n]);
	bench_log_end(ctx);
	return n;
}
