// SPDX-License-Identifier: MIT
/*
 * What every part of a run uses: the clock, the CPU count, a parameter's
 * index, and the calls that record into the run's struct bench_ctx (the
 * first error, the stop request, the result's notes and series).  It calls nothing else of the
 * core, so the harness, the loader and the families all build on it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

uint64_t bench_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

int bench_nr_cpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n > 0 ? (int)n : 1;
}

/* Running out of file descriptors shows up as any call failing anywhere;
 * whatever failed, the cure is the same, so the message names it. */
static void fd_hint(struct bench_error *e)
{
	size_t len = strlen(e->msg);
	struct rlimit r;

	if (e->err == ENFILE) {
		snprintf(e->msg + len, sizeof(e->msg) - len,
			 " [the system's file table is full: raise fs.file-max]");
		return;
	}
	if (getrlimit(RLIMIT_NOFILE, &r) == 0 && r.rlim_cur != RLIM_INFINITY)
		snprintf(e->msg + len, sizeof(e->msg) - len,
			 " [out of file descriptors: the open-files limit is %llu; "
			 "raise it, e.g. ulimit -n %llu]",
			 (unsigned long long)r.rlim_cur,
			 (unsigned long long)(r.rlim_cur < 4096 ? 4096 : r.rlim_cur * 2));
	else
		snprintf(e->msg + len, sizeof(e->msg) - len,
			 " [out of file descriptors: raise the open-files limit, ulimit -n]");
}

static int vfail(struct bench_ctx *ctx, enum bench_err_kind kind, int err,
		 const char *fmt, va_list ap)
{
	pthread_mutex_lock(&ctx->lock);
	if (ctx->error.kind == BENCH_ERR_NONE) {
		ctx->error.kind = kind;
		ctx->error.err = err;
		vsnprintf(ctx->error.msg, sizeof(ctx->error.msg), fmt, ap);
		if (err == EMFILE || err == ENFILE) {
			ctx->error.kind = BENCH_ERR_OS;
			fd_hint(&ctx->error);
		}
	}
	pthread_mutex_unlock(&ctx->lock);
	bench_request_stop(ctx);
	return -err;
}

int bench_fail(struct bench_ctx *ctx, enum bench_err_kind kind, int err,
	       const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = vfail(ctx, kind, err, fmt, ap);
	va_end(ap);
	return ret;
}

void bench_request_stop(struct bench_ctx *ctx)
{
	atomic_store(&ctx->stop, true);
	pthread_mutex_lock(&ctx->lock);
	pthread_cond_broadcast(&ctx->stop_cond);
	pthread_mutex_unlock(&ctx->lock);
}

int bench_values_push(struct bench_values *a, double x)
{
	if (a->len == a->cap) {
		int cap = a->cap ? 2 * a->cap : 256;
		double *grown = realloc(a->v, cap * sizeof(double));

		if (!grown)
			return -ENOMEM;
		a->v = grown;
		a->cap = cap;
	}
	a->v[a->len++] = x;
	return 0;
}

void bench_values_free(struct bench_values *a)
{
	free(a->v);
	a->v = NULL;
	a->len = a->cap = 0;
}

int bench_series_add(struct bench_ctx *ctx, const char *name, const double *values, int len)
{
	struct bench_series *grown, *sr;

	grown = realloc(ctx->series, (ctx->nr_series + 1) * sizeof(*grown));
	if (!grown)
		return -ENOMEM;
	ctx->series = grown;
	sr = &ctx->series[ctx->nr_series];
	memset(sr, 0, sizeof(*sr));
	snprintf(sr->name, sizeof(sr->name), "%s", name);
	sr->values = malloc((len > 0 ? len : 1) * sizeof(double));
	if (!sr->values)
		return -ENOMEM;
	if (len > 0)
		memcpy(sr->values, values, len * sizeof(double));
	sr->len = len;
	ctx->nr_series++;
	return 0;
}

void bench_note(struct bench_ctx *ctx, const char *key, const char *fmt, ...)
{
	struct bench_note *n = NULL;
	va_list ap;
	int i;

	for (i = 0; i < ctx->nr_notes; i++)
		if (strcmp(ctx->notes[i].key, key) == 0)
			n = &ctx->notes[i];
	if (!n) {
		if (ctx->nr_notes == BENCH_MAX_NOTES)
			return;
		n = &ctx->notes[ctx->nr_notes++];
		snprintf(n->key, sizeof(n->key), "%s", key);
	}
	va_start(ap, fmt);
	vsnprintf(n->value, sizeof(n->value), fmt, ap);
	va_end(ap);
}

bool bench_param_applies(const struct bench *b, const struct bench_param_def *p)
{
	int i;

	if (!p->only)
		return true;
	for (i = 0; p->only[i]; i++)
		if (strcmp(p->only[i], b->name) == 0)
			return true;
	return false;
}

int bench_param_index(const struct bench *b, const char *name)
{
	int i;

	for (i = 0; b->params && b->params[i].name; i++)
		if (strcmp(b->params[i].name, name) == 0)
			return i;
	return -1;
}
