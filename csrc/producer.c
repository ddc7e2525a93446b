// SPDX-License-Identifier: MIT
/*
 * One way to load a BPF producer that fires on getpgid(): choose the
 * trigger, open, configure, load, filter on this process, attach.
 * Families describe their skeleton in a const bench_producer_ops and call
 * bench_producer_start() from setup; the BPF side is bpf/producer.bpf.h.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <bpf/libbpf.h>

#include "bench.h"

#define FENTRY_FEATURE "fentry programs (BPF trampolines)"
#define TP_FEATURE "tracepoint programs"

const char *const bench_trigger_choices[] = { "auto", "fentry", "tp", NULL };

int bench_getpgid_producer(struct bench_ctx *ctx, int idx)
{
	(void)idx;
	while (!bench_stopping(ctx))
		bench_getpgid_call();
	return 0;
}

void bench_producer_detach(struct bench_producer *p)
{
	bpf_link__destroy(p->link);
	p->link = NULL;
}

void bench_producer_destroy(struct bench_producer *p)
{
	bench_producer_detach(p);
	if (p->skel && p->ops)
		p->ops->destroy(p->skel);
	p->skel = NULL;
	p->prog = NULL;
}

/*
 * One attempt with the entry point of one trigger.  Returns 0 or a
 * negative errno without recording an error, so that auto can fall back;
 * *stage says which step failed.
 */
static int try_trigger(struct bench_ctx *ctx, struct bench_producer *p, bool fentry,
		       const char **stage)
{
	const struct bench_producer_ops *ops = p->ops;
	struct bpf_program *whoami;
	int err;

	*stage = "opening";
	p->skel = ops->open();
	if (!p->skel)
		return errno ? -errno : -ENOMEM;
	*stage = "configuring";
	err = ops->configure ? ops->configure(ctx, p->skel) : 0;
	if (err)
		return err;
	*stage = "enabling";
	p->prog = ops->program(ctx, p->skel, fentry);
	whoami = ops->whoami(p->skel);
	err = bpf_program__set_autoload(p->prog, true);
	if (!err)
		err = bpf_program__set_autoload(whoami, true);
	if (err)
		return err;
	*stage = "loading";
	err = ops->load(p->skel);
	if (err)
		return err;
	/* Writable data: set after load, before the program can fire. */
	p->tgid = bench_bpf_tgid(whoami);
	*ops->filter_tgid(p->skel) = p->tgid;
	*stage = "attaching";
	p->link = bpf_program__attach(p->prog);
	return p->link ? 0 : (errno ? -errno : -EINVAL);
}

int bench_producer_start(struct bench_ctx *ctx, const struct bench_producer_ops *ops,
			 struct bench_producer *p)
{
	int trig = bench_param(ctx, "trigger");
	const char *stage;
	bool fentry_first = trig == BENCH_TRIGGER_FENTRY ||
			    (trig == BENCH_TRIGGER_AUTO && !ops->tp_first);
	int err;

	memset(p, 0, sizeof(*p));
	p->ops = ops;
	if (fentry_first) {
		err = try_trigger(ctx, p, true, &stage);
		if (!err) {
			bench_set_trigger(ctx, &p->prog, 1);
			return 0;
		}
		bench_producer_destroy(p);
		if (trig == BENCH_TRIGGER_FENTRY)
			return bench_fail_bpf(ctx, err, FENTRY_FEATURE,
					      "%s %s as fentry on %s: %s", stage, ops->what,
					      BENCH_TRIGGER_FENTRY_TARGET, bench_errno_name(err));
	}
	err = bench_ensure_tracefs(ctx);
	if (err)
		return err;
	err = try_trigger(ctx, p, false, &stage);
	if (err)
		return bench_fail_bpf(ctx, err, ops->tp_feature ? ops->tp_feature : TP_FEATURE,
				      "%s %s on tracepoint %s: %s", stage, ops->what,
				      BENCH_TRIGGER_TP_NAME, bench_errno_name(err));
	bench_set_trigger(ctx, &p->prog, 1);
	return 0;
}
