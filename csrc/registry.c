// SPDX-License-Identifier: MIT
/*
 * Every benchmark, found by name.  A family registers its ops tables with
 * BENCH_REGISTER() where it defines them (bench.h); nothing is listed here.
 * The linker gathers the registrations into the bench_registry section, in
 * whatever order it and the compiler emitted them, so the list handed out
 * is sorted once: by family, then by the file and line of each register
 * line.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

/* GNU ld defines these for a section whose name is a C identifier. */
extern const struct bench_registration __start_bench_registry[]
	__attribute__((visibility("hidden")));
extern const struct bench_registration __stop_bench_registry[]
	__attribute__((visibility("hidden")));

struct sorted_registry {
	pthread_once_t once;
	const struct bench **all;
	int count;
};

static struct sorted_registry sorted = { .once = PTHREAD_ONCE_INIT };

static int registration_cmp(const void *a, const void *b)
{
	const struct bench_registration *x = a, *y = b;
	int c = strcmp(x->bench->family, y->bench->family);

	if (c == 0)
		c = strcmp(x->file, y->file);
	if (c == 0)
		c = (x->line > y->line) - (x->line < y->line);
	if (c == 0)	/* two tables registered by one macro on one line */
		c = strcmp(x->bench->name, y->bench->name);
	return c;
}

static void sort_registry(void)
{
	size_t n = (size_t)(__stop_bench_registry - __start_bench_registry), i;
	struct bench_registration *regs = NULL;
	const struct bench **all = NULL;

	regs = malloc((n ? n : 1) * sizeof(*regs));
	all = malloc((n ? n : 1) * sizeof(*all));
	if (!regs || !all)
		goto cleanup;	/* out of memory at load: an empty registry */
	memcpy(regs, __start_bench_registry, n * sizeof(*regs));
	qsort(regs, n, sizeof(*regs), registration_cmp);
	for (i = 0; i < n; i++)
		all[i] = regs[i].bench;
	sorted.all = all;
	sorted.count = (int)n;
	all = NULL;
cleanup:
	free(regs);
	free(all);
}

const struct bench *const *bench_all(int *count)
{
	pthread_once(&sorted.once, sort_registry);
	*count = sorted.count;
	return sorted.all;
}

const struct bench *bench_find(const char *name)
{
	const struct bench *const *all;
	int n, i;

	all = bench_all(&n);
	for (i = 0; i < n; i++)
		if (strcmp(all[i]->name, name) == 0)
			return all[i];
	return NULL;
}
