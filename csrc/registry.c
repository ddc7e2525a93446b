// SPDX-License-Identifier: MIT
/*
 * Every benchmark, found by name.  A family registers its ops tables with
 * BENCH_REGISTER() where it defines them (bench.h); nothing is listed here.
 * The linker gathers the registrations into the bench_registry section, in
 * whatever order it and the compiler emitted them, so bench_all() hands
 * out a sorted copy: by family, then by the file and line of each register
 * line.  No state is kept between calls.
 */
#include <stdlib.h>
#include <string.h>

#include "bench.h"

/* GNU ld defines these for a section whose name is a C identifier. */
extern const struct bench_registration __start_bench_registry[]
	__attribute__((visibility("hidden")));
extern const struct bench_registration __stop_bench_registry[]
	__attribute__((visibility("hidden")));

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

const struct bench **bench_all(int *count)
{
	size_t n = (size_t)(__stop_bench_registry - __start_bench_registry), i;
	struct bench_registration *regs = NULL;
	const struct bench **all = NULL;

	*count = 0;
	regs = malloc((n ? n : 1) * sizeof(*regs));
	all = malloc((n ? n : 1) * sizeof(*all));
	if (!regs || !all) {
		free(all);
		all = NULL;
		goto cleanup;
	}
	memcpy(regs, __start_bench_registry, n * sizeof(*regs));
	qsort(regs, n, sizeof(*regs), registration_cmp);
	for (i = 0; i < n; i++)
		all[i] = regs[i].bench;
	*count = (int)n;
cleanup:
	free(regs);
	return all;
}

const struct bench *bench_find(const char *name)
{
	const struct bench_registration *r;

	/* Names are unique (a test holds it): the section's order does not matter. */
	for (r = __start_bench_registry; r < __stop_bench_registry; r++)
		if (strcmp(r->bench->name, name) == 0)
			return r->bench;
	return NULL;
}
