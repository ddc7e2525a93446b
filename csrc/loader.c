// SPDX-License-Identifier: MIT
/*
 * libbpf glue shared by every family: message capture, tracefs, rlimits.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "bench.h"

#define BENCH_LOG_MAX (1u << 20)

/*
 * libbpf's print hook is process-wide, so the run being captured is too.
 * Runs are serialised by the binding's run lock, which makes this the one
 * piece of shared state.
 */
static struct bench_ctx *capturing;

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
	size_t i;

	for (i = 0; i < sizeof(roots) / sizeof(roots[0]); i++)
		if (stat(roots[i], &st) == 0 && S_ISDIR(st.st_mode))
			return 0;
	/* libbpf reads tracepoint ids from tracefs: mount it where it looks */
	if (mount("nodev", "/sys/kernel/tracing", "tracefs", 0, NULL) == 0)
		return 0;
	return bench_fail(ctx, errno == EPERM ? BENCH_ERR_PERMISSION : BENCH_ERR_UNSUPPORTED,
			  errno,
			  "%s: tracefs is not mounted and mounting it at /sys/kernel/tracing failed (%s); "
			  "mount it: mount -t tracefs nodev /sys/kernel/tracing",
			  ctx->bench->name, strerror(errno));
}

int bench_bump_memlock(void)
{
	struct rlimit r = { RLIM_INFINITY, RLIM_INFINITY };

	/* Kernels >= 5.11 charge BPF memory to cgroups and ignore this. */
	return setrlimit(RLIMIT_MEMLOCK, &r) ? -errno : 0;
}
