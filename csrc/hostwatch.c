// SPDX-License-Identifier: MIT
/*
 * The host watch: what the host did to a run, read by the sampler thread
 * (harness.c) right after each sample's counters.  Steal time from
 * /proc/stat (the run's pinned CPUs, else the all-CPU line); each worker
 * thread's involuntary switches and migrations from
 * /proc/self/task/TID/sched (nr_involuntary_switches, se.nr_migrations: one
 * read gives both), or, where the kernel has no sched file, the involuntary
 * switches from its status file and no migrations.  Files are opened per
 * read: a thread that has returned just stops counting, and nothing stays
 * open between samples.  No globals; the sampler owns the watch.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

#define WATCH_MAX (BENCH_MAX_THREADS * 2)

struct bench_host_watch {
	struct bench_ctx *ctx;
	bool cpu_used[WATCH_MAX];	/* indexed by CPU, when pinned */
	int nr_cpu_used;		/* 0: every CPU (the "cpu" line) */
	int nr_cpus_counted;
	uint64_t steal_ticks;
	uint64_t nivcsw[WATCH_MAX], migr[WATCH_MAX];	/* by thread, as thread_tids */
	bool seen[WATCH_MAX];		/* a first reading taken */
	bool migrations_known;
	long ticks_per_s;
	uint64_t cost_ns, reads;	/* the watch's own CPU time, for its note */
};

/* Reads a small /proc file into buf (NUL-terminated): its length or -1. */
static ssize_t read_proc(const char *path, char *buf, size_t size)
{
	ssize_t n = 0, got;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		n = -1;
		goto cleanup;
	}
	while ((size_t)n < size - 1 && (got = read(fd, buf + n, size - 1 - n)) > 0)
		n += got;
	buf[n] = '\0';
cleanup:
	if (fd >= 0)
		close(fd);
	return n;
}

/* The number after `key` and its separator (spaces, ':') in text, or -1. */
static long long proc_field(const char *text, const char *key)
{
	const char *p = strstr(text, key);
	long long v = -1;

	if (p) {
		p += strlen(key);
		while (*p == ' ' || *p == ':' || *p == '\t')
			p++;
		v = strtoll(p, NULL, 10);
	}
	return v;
}

/* Steal ticks summed over the counted CPUs, or -1 if /proc/stat cannot be read. */
static long long steal_ticks(const struct bench_host_watch *hw)
{
	static const size_t size = 64 * 1024;
	unsigned long long v[8];
	char *buf = malloc(size), *line, *save = NULL, *fields;
	long long sum = -1;
	int cpu;

	if (!buf || read_proc("/proc/stat", buf, size) < 0)
		goto cleanup;
	sum = 0;
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (strncmp(line, "cpu", 3) != 0)
			break;	/* the cpu lines come first */
		if (sscanf(line + 3, "%d", &cpu) == 1) {
			if (!hw->nr_cpu_used || cpu < 0 || cpu >= WATCH_MAX || !hw->cpu_used[cpu])
				continue;
		} else if (hw->nr_cpu_used) {
			continue;
		}
		/* user nice system idle iowait irq softirq steal ... */
		fields = strchr(line, ' ');
		if (fields && sscanf(fields, "%llu %llu %llu %llu %llu %llu %llu %llu",
				     &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]) == 8)
			sum += v[7];
	}
cleanup:
	free(buf);
	return sum;
}

struct bench_host_watch *bench_host_watch_start(struct bench_ctx *ctx)
{
	struct bench_host_watch *hw = calloc(1, sizeof(*hw));
	char buf[4096];
	long long steal;
	int i, cpu;

	if (!hw)
		goto out;
	hw->ctx = ctx;
	hw->ticks_per_s = sysconf(_SC_CLK_TCK);
	if (hw->ticks_per_s <= 0)
		hw->ticks_per_s = 100;
	hw->nr_cpus_counted = bench_nr_cpus();
	for (i = 0; ctx->env.affinity && i < ctx->nr_threads; i++) {
		cpu = ctx->thread_cpus[i];
		if (cpu >= 0 && cpu < WATCH_MAX && !hw->cpu_used[cpu]) {
			hw->cpu_used[cpu] = true;
			hw->nr_cpu_used++;
		}
	}
	if (hw->nr_cpu_used)
		hw->nr_cpus_counted = hw->nr_cpu_used;
	steal = steal_ticks(hw);
	hw->steal_ticks = steal > 0 ? (uint64_t)steal : 0;
	hw->migrations_known = read_proc("/proc/thread-self/sched", buf, sizeof(buf)) > 0 &&
			       strstr(buf, "se.nr_migrations") != NULL;
out:
	return hw;
}

/* The calling thread's CPU time, ns: what the watch costs, whatever the
 * scheduler does to the sampler meanwhile. */
static uint64_t thread_cpu_ns(void)
{
	struct timespec ts = { 0 };

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static void watch_read(struct bench_host_watch *hw, struct bench_sample *s)
{
	uint64_t began = thread_cpu_ns();
	char path[64], buf[4096];
	long long steal, nivcsw, migr;
	int i, tid;

	steal = steal_ticks(hw);
	if (steal >= 0 && (uint64_t)steal >= hw->steal_ticks) {
		s->steal_ns = ((uint64_t)steal - hw->steal_ticks) * 1000000000ull /
			      (uint64_t)hw->ticks_per_s;
		hw->steal_ticks = steal;
	}
	for (i = 0; i < hw->ctx->nr_threads && i < WATCH_MAX; i++) {
		tid = atomic_load(&hw->ctx->thread_tids[i]);
		if (!tid)
			continue;	/* not started yet: counted from its first reading */
		migr = -1;
		snprintf(path, sizeof(path), "/proc/self/task/%d/sched", tid);
		if (hw->migrations_known && read_proc(path, buf, sizeof(buf)) > 0) {
			nivcsw = proc_field(buf, "nr_involuntary_switches");
			migr = proc_field(buf, "se.nr_migrations");
		} else {
			snprintf(path, sizeof(path), "/proc/self/task/%d/status", tid);
			nivcsw = read_proc(path, buf, sizeof(buf)) > 0 ?
				 proc_field(buf, "nonvoluntary_ctxt_switches") : -1;
		}
		if (nivcsw < 0)
			continue;	/* returned: it counts no more */
		if (hw->seen[i]) {
			s->involuntary += (uint64_t)nivcsw - hw->nivcsw[i];
			if (migr >= 0)
				s->migrations += (uint64_t)migr - hw->migr[i];
		}
		hw->nivcsw[i] = nivcsw;
		hw->migr[i] = migr >= 0 ? migr : 0;
		hw->seen[i] = true;
	}
	hw->cost_ns += thread_cpu_ns() - began;
	hw->reads++;
}

void bench_host_watch_read(struct bench_host_watch *hw, struct bench_sample *s)
{
	if (hw)
		watch_read(hw, s);
}

void bench_host_watch_end(struct bench_host_watch *hw)
{
	if (hw)
		bench_note(hw->ctx, "host_watch",
			   "steal_cpus=%d migrations=%s cost_ns_per_sample=%llu",
			   hw->nr_cpus_counted,
			   hw->migrations_known ? "se.nr_migrations" : "unavailable",
			   (unsigned long long)(hw->reads ? hw->cost_ns / hw->reads : 0));
	free(hw);
}
