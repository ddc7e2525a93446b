// SPDX-License-Identifier: MIT
/* Every benchmark, found by name.  A family adds its ops tables here. */
#include <string.h>

#include "bench.h"

extern const struct bench bench_count_global;
extern const struct bench bench_count_local;
extern const struct bench bench_rename_base, bench_rename_kprobe, bench_rename_kretprobe, bench_rename_rawtp, bench_rename_fentry, bench_rename_fexit;

static const struct bench *const registry[] = {
	&bench_count_global,
	&bench_count_local,
	&bench_rename_base, &bench_rename_kprobe, &bench_rename_kretprobe, &bench_rename_rawtp, &bench_rename_fentry, &bench_rename_fexit,
};

const struct bench *const *bench_all(int *count)
{
	*count = sizeof(registry) / sizeof(registry[0]);
	return registry;
}

const struct bench *bench_find(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(registry) / sizeof(registry[0]); i++)
		if (strcmp(registry[i]->name, name) == 0)
			return registry[i];
	return NULL;
}

int bench_param_index(const struct bench *b, const char *name)
{
	int i;

	for (i = 0; b->params && b->params[i].name; i++)
		if (strcmp(b->params[i].name, name) == 0)
			return i;
	return -1;
}
