// SPDX-License-Identifier: MIT
/*
 * Trigger family: the cost of firing a BPF program from each kind of hook,
 * with the batched design of the kernel bench.
 *
 *  - trig-syscall-count, trig-usermode-count: no BPF; producers count in
 *    user space around a getpgid() syscall or a call of the uprobe target.
 *  - kernel-driven (trig-kernel-count, -tp, -rawtp, -kprobe*, -fentry,
 *    -fexit, -fmodret): producers loop on BPF_PROG_TEST_RUN of a raw_tp
 *    driver program that fires the hooked event trig_batch_iters times per
 *    run.  Only trig-kernel-count counts in the driver itself.
 *  - uprobe family: producers call a tiny function of this extension on
 *    which a uprobe / uretprobe / uprobe-multi / USDT probe is attached.
 *    On x86-64 also the multi-byte nop targets (-nop5, -nop10) that newer
 *    kernels can probe without a trap.
 *  - trig-k(ret)probe-multi-all: trig-k(ret)probe-multi while an empty
 *    kprobe-multi program sits on every other traceable kernel function.
 *
 * A hit is one run of the counting code.  Counters are one 128-byte slot
 * per CPU (BPF side) or per producer (user side); measure swaps each slot to
 * zero and sums what it took.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <linux/bpf.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bench.h"
#include "uprobe_multi.h"
#include "trigger.h"
#include "trigger.skel.h"

/* ---- uprobe targets ----
 *
 * The kernel bench's targets are C functions with an asm nop / a call of
 * an opaque function / an empty body.  Its Makefile compiles the benchmark
 * files at -O2 (whatever OPT_FLAGS says) with frame pointers and without
 * CET: the nop target is "nop; ret", the ret target a bare "ret" and the
 * push target "push %rbp; mov %rsp,%rbp; call; mov $1,%eax; pop %rbp; ret".
 * Written here in assembly, instruction for instruction as that build
 * emits them, so our compiler cannot change what is probed, nor the cost of
 * the unprobed loop (trig-usermode-count).  Hidden, so calls from this file
 * are direct, with no PLT hop.  The USDT site is a nop inside a frame,
 * described by a .note.stapsdt entry (the format USDT consumers read).
 */
void trig_target_nop(void) __attribute__((visibility("hidden")));
int trig_target_push(void) __attribute__((visibility("hidden")));
void trig_target_ret(void) __attribute__((visibility("hidden")));
void trig_target_usdt(void) __attribute__((visibility("hidden")));
void trig_target_nop5(void) __attribute__((visibility("hidden")));
void trig_target_nop10(void) __attribute__((visibility("hidden")));
void trig_target_usdt_nop5(void) __attribute__((visibility("hidden")));
void trig_target_usdt_nop10(void) __attribute__((visibility("hidden")));

#if defined(__x86_64__)
/*
 * A USDT site: label 990 at the probe instruction(s) NOPS, and its
 * .note.stapsdt entry (provider TRIG_USDT_PROVIDER, name NAME, no
 * arguments, no semaphore).
 */
#define TRIG_USDT_SITE(NAME, NOPS)					\
	"990:	" NOPS "\n"						\
	"	.pushsection .note.stapsdt, \"\", \"note\"\n"		\
	"	.balign 4\n"						\
	"	.4byte 992f-991f, 994f-993f, 3\n"			\
	"991:	.asciz \"stapsdt\"\n"					\
	"992:	.balign 4\n"						\
	"993:	.8byte 990b\n"						\
	"	.8byte _.stapsdt.base\n"					\
	"	.8byte 0\n"						\
	"	.asciz \"" TRIG_USDT_PROVIDER "\"\n"				\
	"	.asciz \"" NAME "\"\n"					\
	"	.asciz \"\"\n"						\
	"994:	.balign 4\n"						\
	"	.popsection\n"
/* The multi-byte nops: the kernel bench's 5-byte nop (nopl 0x0(%rax,%rax,1))
 * and 10-byte nop (cs nopw 0x0(%rax,%rax,1)). */
#define TRIG_ASM_NOP5 ".byte 0x0f, 0x1f, 0x44, 0x00, 0x00"
#define TRIG_ASM_NOP10 ".byte 0x66, 0x2e, 0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00"

__asm__(
	"	.text\n"
	"	.p2align 4\n"
	"	.globl trig_target_nop\n"
	"	.hidden trig_target_nop\n"
	"	.type trig_target_nop, @function\n"
	"trig_target_nop:\n"
	"	nop\n"				/* the asm body */
	"	ret\n"
	"	.size trig_target_nop, .-trig_target_nop\n"

	"	.p2align 4\n"
	"	.type trig_opaque_noop, @function\n"
	"trig_opaque_noop:\n"
	"	ret\n"
	"	.size trig_opaque_noop, .-trig_opaque_noop\n"

	"	.p2align 4\n"
	"	.globl trig_target_push\n"
	"	.hidden trig_target_push\n"
	"	.type trig_target_push, @function\n"
	"trig_target_push:\n"
	"	push %rbp\n"
	"	mov %rsp, %rbp\n"
	"	call trig_opaque_noop\n"
	"	mov $1, %eax\n"
	"	pop %rbp\n"
	"	ret\n"
	"	.size trig_target_push, .-trig_target_push\n"

	"	.p2align 4\n"
	"	.globl trig_target_ret\n"
	"	.hidden trig_target_ret\n"
	"	.type trig_target_ret, @function\n"
	"trig_target_ret:\n"
	"	ret\n"
	"	.size trig_target_ret, .-trig_target_ret\n"

	/* The nop targets of the multi-byte nop benchmarks: the kernel
	 * bench's asm body, then ret (a leaf at -O2: no frame). */
	"	.p2align 4\n"
	"	.globl trig_target_nop5\n"
	"	.hidden trig_target_nop5\n"
	"	.type trig_target_nop5, @function\n"
	"trig_target_nop5:\n"
	"	" TRIG_ASM_NOP5 "\n"
	"	ret\n"
	"	.size trig_target_nop5, .-trig_target_nop5\n"

	"	.p2align 4\n"
	"	.globl trig_target_nop10\n"
	"	.hidden trig_target_nop10\n"
	"	.type trig_target_nop10, @function\n"
	"trig_target_nop10:\n"
	"	" TRIG_ASM_NOP10 "\n"
	"	ret\n"
	"	.size trig_target_nop10, .-trig_target_nop10\n"

	/* The USDT sites, as the kernel bench's usdt_1() and usdt_2() come
	 * out of its build: 16-byte aligned leaves, the probe at a 1-byte nop,
	 * followed (usdt.h's default on x86-64) by a 5-byte or, since the
	 * -nop10 rename, a 10-byte nop. */
	"	.p2align 4\n"
	"	.globl trig_target_usdt\n"
	"	.hidden trig_target_usdt\n"
	"	.type trig_target_usdt, @function\n"
	"trig_target_usdt:\n"
	TRIG_USDT_SITE(TRIG_USDT_NAME, "nop")
	"	ret\n"
	"	.size trig_target_usdt, .-trig_target_usdt\n"

	"	.p2align 4\n"
	"	.globl trig_target_usdt_nop5\n"
	"	.hidden trig_target_usdt_nop5\n"
	"	.type trig_target_usdt_nop5, @function\n"
	"trig_target_usdt_nop5:\n"
	TRIG_USDT_SITE(TRIG_USDT_NAME_NOP5, "nop; " TRIG_ASM_NOP5)
	"	ret\n"
	"	.size trig_target_usdt_nop5, .-trig_target_usdt_nop5\n"

	"	.p2align 4\n"
	"	.globl trig_target_usdt_nop10\n"
	"	.hidden trig_target_usdt_nop10\n"
	"	.type trig_target_usdt_nop10, @function\n"
	"trig_target_usdt_nop10:\n"
	TRIG_USDT_SITE(TRIG_USDT_NAME_NOP10, "nop; " TRIG_ASM_NOP10)
	"	ret\n"
	"	.size trig_target_usdt_nop10, .-trig_target_usdt_nop10\n"

	"	.ifndef _.stapsdt.base\n"
	"	.pushsection .stapsdt.base, \"aG\", \"progbits\", .stapsdt.base, comdat\n"
	"	.weak _.stapsdt.base\n"
	"	.hidden _.stapsdt.base\n"
	"_.stapsdt.base:\n"
	"	.space 1\n"
	"	.size _.stapsdt.base, 1\n"
	"	.popsection\n"
	"	.endif\n"
	"	.text\n");
#define TRIG_HAVE_X86 1
#else
/* Other architectures: plain C targets, laid out by the compiler. */
__attribute__((noinline, used)) void trig_target_nop(void)
{
	__asm__ volatile("nop");
}

__attribute__((noinline, used)) static void trig_opaque_noop(void)
{
	__asm__ volatile("");
}

__attribute__((noinline, used)) int trig_target_push(void)
{
	trig_opaque_noop();
	return 1;
}

__attribute__((noinline, used)) void trig_target_ret(void)
{
	__asm__ volatile("");
}

__attribute__((noinline, used)) void trig_target_usdt(void)
{
	__asm__ volatile("nop");
}

/* x86-64 only (refused before loading elsewhere); never called. */
void trig_target_nop5(void) { }
void trig_target_nop10(void) { }
void trig_target_usdt_nop5(void) { }
void trig_target_usdt_nop10(void) { }
#define TRIG_HAVE_X86 0
#endif

/* ---- variants ---- */

enum trig_mode {
	TRIG_USER_SYSCALL,	/* getpgid() loop, user-space count */
	TRIG_USER_CALL,		/* call the nop target, user-space count */
	TRIG_KERNEL,		/* BPF_PROG_TEST_RUN of a driver */
	TRIG_UPROBE,		/* call a probed target */
	TRIG_USDT,		/* call the USDT site */
};

enum trig_target {
	TRIG_NOP,
	TRIG_PUSH,
	TRIG_RET,
	TRIG_NOP5,	/* x86-64 multi-byte nops */
	TRIG_NOP10,
};

struct trig_variant {
	enum trig_mode mode;
	const char *feature;	/* for UnsupportedError: "fentry programs" */
	const char *driver;	/* raw_tp driver program (TRIG_KERNEL) */
	const char *hook;	/* program counting the hits, NULL: the driver */
	const char *kfunc;	/* kfunc the driver calls, probed before loading */
	bool needs_tracefs;
	/* k(ret)probe-multi-all: this empty program goes on every other
	 * traceable kernel function */
	const char *all_empty;
	/* uprobe family (TRIG_USDT: the site's nop, TRIG_NOP* only) */
	enum trig_target target;
	bool retprobe;
	bool multi;
};

struct trig_state {
	const struct trig_variant *v;
	struct trigger_bpf *skel;
	struct bpf_link *link;
	struct bpf_link *all_link;	/* -multi-all: the empty program */
	int multi_link_fd;
	int driver_fd;
	struct trig_slot *slots;	/* skel->bss->hits or user_slots */
	struct trig_slot *user_slots;	/* TRIG_NR_SLOTS, user counting */
	/* Kernel-driven: BPF_PROG_TEST_RUN calls per producer, each written
	 * only by its producer; the sampler reports the growth since it last
	 * looked (runs_seen is the sampler's own). */
	struct trig_slot *driver_runs;
	long *runs_seen;
};

static const char *const target_names[] = {
	[TRIG_NOP] = "nop",
	[TRIG_PUSH] = "push",
	[TRIG_RET] = "ret",
	[TRIG_NOP5] = "nop5",
	[TRIG_NOP10] = "nop10",
};

static void *target_addr(enum trig_target t)
{
	switch (t) {
	case TRIG_PUSH: return (void *)trig_target_push;
	case TRIG_RET: return (void *)trig_target_ret;
	case TRIG_NOP5: return (void *)trig_target_nop5;
	case TRIG_NOP10: return (void *)trig_target_nop10;
	default: return (void *)trig_target_nop;
	}
}

/* The USDT site of a trig-usdt-* variant, and its probe name. */
static void (*usdt_site(enum trig_target t))(void)
{
	switch (t) {
	case TRIG_NOP5: return trig_target_usdt_nop5;
	case TRIG_NOP10: return trig_target_usdt_nop10;
	default: return trig_target_usdt;
	}
}

static const char *usdt_name(enum trig_target t)
{
	switch (t) {
	case TRIG_NOP5: return TRIG_USDT_NAME_NOP5;
	case TRIG_NOP10: return TRIG_USDT_NAME_NOP10;
	default: return TRIG_USDT_NAME;
	}
}

static const char *errname(int err)
{
	return bench_errno_name(err);
}

static struct trig_state *state(struct bench_ctx *ctx)
{
	return ctx->priv;
}

/* ---- resolving a target of this extension to (file, offset) ---- */

struct seg_query {
	uintptr_t addr;
	size_t offset;
	bool found;
};

static int find_segment(struct dl_phdr_info *info, size_t size, void *data)
{
	struct seg_query *q = data;
	int i;

	(void)size;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t start = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		if (q->addr < start || q->addr >= start + ph->p_memsz)
			continue;
		/* uprobes take a file offset */
		q->offset = q->addr - start + ph->p_offset;
		q->found = true;
		return 1;
	}
	return 0;
}

/* The mapping holding addr, from /proc/self/maps. */
struct mapping {
	unsigned long start, end;
	dev_t dev;
	ino_t ino;
};

static int find_mapping(uintptr_t addr, struct mapping *m)
{
	unsigned long start, end, inode;
	unsigned int maj, min;
	char line[4096];
	FILE *f;
	int err = -ENOENT;

	f = fopen("/proc/self/maps", "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx %*s %*x %x:%x %lu", &start, &end, &maj,
			   &min, &inode) != 5)
			continue;
		if (addr >= start && addr < end) {
			m->start = start;
			m->end = end;
			m->dev = makedev(maj, min);
			m->ino = inode;
			err = 0;
			break;
		}
	}
	fclose(f);
	return err;
}

static bool same_file(const char *path, const struct mapping *m)
{
	struct stat st;

	return stat(path, &st) == 0 && st.st_ino == m->ino && st.st_dev == m->dev;
}

#ifndef OVERLAYFS_SUPER_MAGIC
#define OVERLAYFS_SUPER_MAGIC 0x794c7630
#endif

/*
 * Under an overlay (a guest's /tmp, a container's root) the path's device is
 * the overlay's while the mapping names the file underneath, where the
 * kernel also puts a uprobe given the overlay path.  The overlay reports
 * that file's inode number, so the number alone says it is the same file.
 */
static bool same_overlaid_file(const char *path, const struct mapping *m)
{
	struct statfs fs;
	struct stat st;

	return statfs(path, &fs) == 0 && fs.f_type == OVERLAYFS_SUPER_MAGIC &&
	       stat(path, &st) == 0 && st.st_ino == m->ino;
}

/*
 * Where to put a uprobe on fn, a function of this extension: the extension's
 * file (from dladdr) and fn's file offset (from its loaded segment).
 */
static int resolve_target(struct bench_ctx *ctx, void *fn, char *path,
			  size_t *offset)
{
	struct seg_query q = { .addr = (uintptr_t)fn };
	struct mapping m;
	Dl_info info;
	int err;

	if (!dladdr(fn, &info) || !info.dli_fname || !info.dli_fname[0])
		return bench_fail(ctx, BENCH_ERR_BENCH, ENOENT,
				  "%s: cannot find which file holds the uprobe target", ctx->bench->name);
	if (!realpath(info.dli_fname, path))
		return bench_fail(ctx, BENCH_ERR_OS, errno,
				  "%s: cannot resolve the uprobe target file %s: %s",
				  ctx->bench->name, info.dli_fname, strerror(errno));
	dl_iterate_phdr(find_segment, &q);
	if (!q.found)
		return bench_fail(ctx, BENCH_ERR_BENCH, ENOENT,
				  "%s: uprobe target %p is in no executable segment of %s",
				  ctx->bench->name, fn, path);
	*offset = q.offset;
	/* A uprobe goes on an inode: the file at this path must still be the
	 * one this process mapped.  If a rebuild replaced it, name the mapped
	 * file through its /proc/self/map_files link instead. */
	err = find_mapping((uintptr_t)fn, &m);
	if (err)
		return bench_fail(ctx, BENCH_ERR_OS, -err,
				  "%s: cannot find uprobe target %p in /proc/self/maps: %s",
				  ctx->bench->name, fn, strerror(-err));
	if (same_file(path, &m) || same_overlaid_file(path, &m))
		return 0;
	snprintf(path, PATH_MAX, "/proc/self/map_files/%lx-%lx", m.start, m.end);
	if (same_file(path, &m))
		return 0;
	return bench_fail(ctx, BENCH_ERR_BENCH, ESTALE,
			  "%s: %s was replaced on disk after this process loaded it, so a "
			  "uprobe on it would never fire: restart Python",
			  ctx->bench->name, info.dli_fname);
}

/* ---- setup / teardown ---- */

static struct bpf_program *prog_by_name(struct trig_state *st, const char *name)
{
	return bpf_object__find_program_by_name(st->skel->obj, name);
}

static int attach_uprobe_multi(struct bench_ctx *ctx, struct bpf_program *prog,
			       const char *path, size_t offset)
{
	struct trig_state *st = state(ctx);
	unsigned long off = offset;
	int fd;

	fd = bench_attach_uprobe_multi(bpf_program__fd(prog), path, &off, 1, st->v->retprobe);
	if (fd < 0)
		/* Kernels without uprobe-multi answer EINVAL (unknown attach
		 * type) or EOPNOTSUPP: either way the kernel refuses it. */
		return bench_fail(ctx, BENCH_ERR_UNSUPPORTED, -fd,
				  "%s: %s unavailable on this kernel: it answered %s (%s) "
				  "(BPF_LINK_CREATE with BPF_TRACE_UPROBE_MULTI on %s+0x%zx)",
				  ctx->bench->name, st->v->feature, errname(-fd),
				  strerror(-fd), path, offset);
	st->multi_link_fd = fd;
	return 0;
}

static int attach_uprobe(struct bench_ctx *ctx, struct bpf_program *prog)
{
	struct trig_state *st = state(ctx);
	const struct trig_variant *v = st->v;
	char path[PATH_MAX];
	size_t offset;
	int err;

	err = resolve_target(ctx, target_addr(v->target), path, &offset);
	if (err)
		return err;
	if (v->multi)
		return attach_uprobe_multi(ctx, prog, path, offset);
	st->link = bpf_program__attach_uprobe(prog, v->retprobe, -1 /* every process */,
					      path, offset);
	if (!st->link) {
		err = -errno;
		return bench_fail_bpf(ctx, err, v->feature, "attaching %s to %s+0x%zx: %s",
				      bpf_program__name(prog), path, offset, errname(err));
	}
	return 0;
}

static int attach_usdt(struct bench_ctx *ctx, struct bpf_program *prog)
{
	struct trig_state *st = state(ctx);
	char path[PATH_MAX];
	size_t offset;
	int err;

	err = resolve_target(ctx, (void *)usdt_site(st->v->target), path, &offset);
	if (err)
		return err;
	/* pid 0: this process, as the kernel bench */
	st->link = bpf_program__attach_usdt(prog, 0, path, TRIG_USDT_PROVIDER,
					    usdt_name(st->v->target), NULL);
	if (!st->link) {
		err = -errno;
		return bench_fail_bpf(ctx, err, st->v->feature, "attaching %s to USDT %s:%s in %s: %s",
				      bpf_program__name(prog), TRIG_USDT_PROVIDER,
				      usdt_name(st->v->target), path, errname(err));
	}
	return 0;
}

/* ---- every traceable kernel function (k(ret)probe-multi-all) ---- */

/*
 * The kernel bench's list (bpf_get_ksyms() of its trace_helpers): the
 * names of available_filter_functions, kernel only (no "[module]"), each
 * once, under its /proc/kallsyms spelling (".llvm.<hash>" suffixes kept,
 * which the ftrace list drops), minus functions that recurse into the
 * probe machinery or trip RCU checks when probed, and minus the function
 * the benchmark measures.
 */
static bool all_skip(const char *name)
{
	static const char *const skip[] = {
		"arch_cpu_idle", "default_idle", "bpf_dispatcher_xdp_func",
		"migrate_disable", "migrate_enable", "rcu_read_unlock_strict",
		"preempt_count_add", "preempt_count_sub", "__rcu_read_lock",
		"__rcu_read_unlock", "bpf_get_numa_node_id",
	};
	size_t i;

	if (!strncmp(name, "rcu_", 4) ||
	    !strncmp(name, "__ftrace_invalid_address__", 26))
		return true;
	for (i = 0; i < sizeof(skip) / sizeof(skip[0]); i++)
		if (!strcmp(name, skip[i]))
			return true;
	return false;
}

/* Length of name without a ".llvm.<hash>" suffix. */
static size_t base_len(const char *name)
{
	const char *llvm = strstr(name, ".llvm.");

	return llvm ? (size_t)(llvm - name) : strlen(name);
}

static int cmp_base(const char *a, const char *b)
{
	size_t la = base_len(a), lb = base_len(b);
	int c = strncmp(a, b, la < lb ? la : lb);

	return c ? c : (la > lb) - (la < lb);
}

static int cmp_names(const void *a, const void *b)
{
	return cmp_base(*(char *const *)a, *(char *const *)b);
}

struct name_list {
	char **v;
	size_t n, cap;
};

static int name_list_add(struct name_list *l, const char *name)
{
	char **grown;

	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 4096;

		grown = realloc(l->v, cap * sizeof(*grown));
		if (!grown)
			return -ENOMEM;
		l->v = grown;
		l->cap = cap;
	}
	l->v[l->n] = strdup(name);
	if (!l->v[l->n])
		return -ENOMEM;
	l->n++;
	return 0;
}

static void name_list_free(struct name_list *l)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	memset(l, 0, sizeof(*l));
}

/* Text symbols of /proc/kallsyms, sorted by name without llvm suffix. */
static int read_kallsyms(struct name_list *out)
{
	char line[512], name[256], type;
	unsigned long long addr;
	FILE *f = fopen("/proc/kallsyms", "re");
	int err = 0;

	if (!f)
		return -errno;
	while (!err && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %c %255s", &addr, &type, name) != 3)
			continue;
		if ((type == 't' || type == 'T') && !strchr(line, '['))
			err = name_list_add(out, name);
	}
	fclose(f);
	if (!err)
		qsort(out->v, out->n, sizeof(*out->v), cmp_names);
	return err;
}

static int read_traceable(struct bench_ctx *ctx, struct name_list *out)
{
	static const char *const paths[] = {
		"/sys/kernel/tracing/available_filter_functions",
		"/sys/kernel/debug/tracing/available_filter_functions",
	};
	struct name_list kallsyms = { 0 };
	char line[512], name[256];
	FILE *f = NULL;
	size_t i, j;
	int err;

	err = read_kallsyms(&kallsyms);
	if (err)
		goto out;
	for (i = 0; i < 2 && !f; i++)
		f = fopen(paths[i], "re");
	if (!f) {
		err = -errno;
		goto out;
	}
	while (fgets(line, sizeof(line), f)) {
		const char *key = name, **hit;

		if (strchr(line, '[') || sscanf(line, "%255s", name) != 1 || all_skip(name))
			continue;
		hit = bsearch(&key, kallsyms.v, kallsyms.n, sizeof(*kallsyms.v), cmp_names);
		if (!hit) {
			err = -ENOENT;
			bench_fail(ctx, BENCH_ERR_BENCH, ENOENT,
				   "%s: traceable function %s is not in /proc/kallsyms",
				   ctx->bench->name, name);
			goto out;
		}
		err = name_list_add(out, *hit);
		if (err)
			goto out;
	}
	/* each function once */
	qsort(out->v, out->n, sizeof(*out->v), cmp_names);
	for (i = 0, j = 0; i < out->n; i++) {
		if (j && !strcmp(out->v[j - 1], out->v[i])) {
			free(out->v[i]);
			continue;
		}
		out->v[j++] = out->v[i];
	}
	out->n = j;
out:
	if (f)
		fclose(f);
	name_list_free(&kallsyms);
	return err;
}

static int attach_all(struct bench_ctx *ctx, struct bpf_program *empty)
{
	struct trig_state *st = state(ctx);
	struct name_list syms = { 0 };
	LIBBPF_OPTS(bpf_kprobe_multi_opts, opts);
	int err;

	err = bench_ensure_tracefs(ctx);
	if (!err)
		err = read_traceable(ctx, &syms);
	if (err) {
		if (!ctx->error.kind)
			bench_fail(ctx, BENCH_ERR_OS, -err,
				   "%s: listing the traceable kernel functions: %s",
				   ctx->bench->name, strerror(-err));
		goto out;
	}
	opts.syms = (const char **)syms.v;
	opts.cnt = syms.n;
	opts.retprobe = st->v->retprobe;
	st->all_link = bpf_program__attach_kprobe_multi_opts(empty, NULL, &opts);
	if (!st->all_link) {
		err = -errno;
		bench_fail_bpf(ctx, err, st->v->feature,
			       "attaching %s to %zu kernel functions: %s",
			       bpf_program__name(empty), syms.n, errname(err));
		goto out;
	}
	bench_note(ctx, "kprobe_multi_all_functions", "%zu", syms.n);
out:
	name_list_free(&syms);
	return err;
}

static int trig_setup(struct bench_ctx *ctx, const struct trig_variant *v)
{
	struct bpf_program *driver = NULL, *hook = NULL, *counter;
	struct trig_state *st;
	int err = 0;

	st = calloc(1, sizeof(*st));
	if (!st)
		return -ENOMEM;
	ctx->priv = st;
	st->v = v;
	st->multi_link_fd = -1;
	st->driver_fd = -1;

	if (!TRIG_HAVE_X86 && (v->target == TRIG_NOP5 || v->target == TRIG_NOP10 ||
				v->mode == TRIG_USDT))
		return bench_fail(ctx, BENCH_ERR_UNSUPPORTED, EOPNOTSUPP,
				  "%s: its target is x86-64 code (this is %s)",
				  ctx->bench->name, "not x86-64");
	/*
	 * Refused before anything of ours is loaded, with the kernel's answer
	 * to the same probe features() makes: -multi-all lists and attaches
	 * every kernel function only where the one measured probe can go,
	 * and a uprobe on a multi-byte nop is a question of the kernel's
	 * instruction decoder, not of uprobes as such.
	 */
	if (v->all_empty)
		err = bench_require_feature(ctx, "kprobe_multi", v->feature,
					    "%s unavailable on this kernel", v->feature);
	else if (v->mode == TRIG_UPROBE && v->target == TRIG_NOP5)
		err = bench_require_feature(ctx, "uprobe_nop5", "uprobe programs",
					    "uprobes on a 5-byte nop unavailable on this kernel");
	else if (v->mode == TRIG_UPROBE && v->target == TRIG_NOP10)
		err = bench_require_feature(ctx, "uprobe_nop10", "uprobe programs",
					    "uprobes on a 10-byte nop unavailable on this kernel");
	if (err)
		return err;

	switch (v->mode) {
	case TRIG_USER_SYSCALL:
	case TRIG_USER_CALL:
		st->user_slots = aligned_alloc(_Alignof(struct trig_slot),
					       TRIG_NR_SLOTS * sizeof(struct trig_slot));
		if (!st->user_slots)
			return -ENOMEM;
		memset(st->user_slots, 0, TRIG_NR_SLOTS * sizeof(struct trig_slot));
		st->slots = st->user_slots;
		snprintf(ctx->trigger, sizeof(ctx->trigger), "%s",
			 v->mode == TRIG_USER_SYSCALL ? "getpgid() syscall loop" :
			 "call of the (unprobed) nop target");
		return 0;
	default:
		break;
	}

	if (v->kfunc) {
		/* A driver calling a kfunc the kernel lacks fails to load with
		 * a bare EINVAL: ask first, and name what is missing. */
		err = bench_require_feature(ctx, "trigger_kfunc", "raw_tp programs",
					    "this kernel lacks the kfunc %s, which the driver "
					    "calls to fire the %s", v->kfunc, v->feature);
		if (err)
			return err;
	}
	if (v->needs_tracefs) {
		err = bench_ensure_tracefs(ctx);
		if (err)
			return err;
	}

	st->skel = trigger_bpf__open();
	if (!st->skel) {
		err = -errno;
		return bench_fail(ctx, BENCH_ERR_BENCH, -err, "%s: opening the trigger BPF object: %s",
				  ctx->bench->name, strerror(-err));
	}
	st->skel->rodata->batch_iters = (int)bench_param(ctx, "trig_batch_iters");
	st->skel->rodata->stacktrace = bench_param(ctx, "stacktrace") != 0;
	if (v->driver) {
		driver = prog_by_name(st, v->driver);
		bpf_program__set_autoload(driver, true);
	}
	if (v->hook) {
		hook = prog_by_name(st, v->hook);
		bpf_program__set_autoload(hook, true);
		if (v->multi) {
			err = bpf_program__set_expected_attach_type(
				hook, (enum bpf_attach_type)BENCH_BPF_TRACE_UPROBE_MULTI);
			if (err)
				return bench_fail(ctx, BENCH_ERR_BENCH, -err,
						  "%s: cannot set the uprobe-multi attach type: %s",
						  ctx->bench->name, strerror(-err));
		}
	}
	if (v->all_empty)
		bpf_program__set_autoload(prog_by_name(st, v->all_empty), true);
	if (v->mode != TRIG_USDT) {
		/* only the USDT attachment uses libbpf's USDT maps */
		bpf_map__set_autocreate(st->skel->maps.__bpf_usdt_specs, false);
		bpf_map__set_autocreate(st->skel->maps.__bpf_usdt_ip_to_spec_id, false);
	}
	err = trigger_bpf__load(st->skel);
	if (err)
		return bench_fail_bpf(ctx, err, v->feature, "BPF_PROG_LOAD of %s%s%s: %s",
				      v->hook ? v->hook : v->driver,
				      v->hook && v->driver ? " with its driver " : "",
				      v->hook && v->driver ? v->driver : "", errname(err));

	switch (v->mode) {
	case TRIG_UPROBE:
		err = attach_uprobe(ctx, hook);
		break;
	case TRIG_USDT:
		err = attach_usdt(ctx, hook);
		break;
	default:
		if (!hook)
			break;
		st->link = bpf_program__attach(hook);
		if (!st->link) {
			err = -errno;
			return bench_fail_bpf(ctx, err, v->feature, "attaching %s: %s",
					      v->hook, errname(err));
		}
		/* the measured probe first: the kernel bench's order */
		if (v->all_empty)
			err = attach_all(ctx, prog_by_name(st, v->all_empty));
	}
	if (err)
		return err;

	st->slots = st->skel->bss->hits;
	counter = hook ? hook : driver;
	if (v->mode == TRIG_KERNEL) {
		st->driver_runs = aligned_alloc(_Alignof(struct trig_slot),
						ctx->env.producer_cnt * sizeof(struct trig_slot));
		st->runs_seen = calloc(ctx->env.producer_cnt, sizeof(*st->runs_seen));
		if (!st->driver_runs || !st->runs_seen)
			return -ENOMEM;
		memset(st->driver_runs, 0, ctx->env.producer_cnt * sizeof(struct trig_slot));
		st->driver_fd = bpf_program__fd(driver);
		snprintf(ctx->trigger, sizeof(ctx->trigger), "BPF_PROG_TEST_RUN %s x%d -> %s%s",
			 v->driver, (int)bench_param(ctx, "trig_batch_iters"),
			 bench_attach_point(counter),
			 bench_param(ctx, "stacktrace") ? " +stack" : "");
	} else if (v->mode == TRIG_USDT) {
		snprintf(ctx->trigger, sizeof(ctx->trigger), "call of USDT %s:%s (%s)",
			 TRIG_USDT_PROVIDER, usdt_name(v->target),
			 v->target == TRIG_NOP ? "nop" : v->target == TRIG_NOP5 ?
			 "nop, nop5" : "nop, nop10");
	} else {
		snprintf(ctx->trigger, sizeof(ctx->trigger), "call of the %s target (%s%s)",
			 target_names[v->target], v->multi ? "uprobe-multi" : "uprobe",
			 v->retprobe ? ", return" : "");
	}
	return 0;
}

static void trig_teardown(struct bench_ctx *ctx)
{
	struct trig_state *st = ctx->priv;

	if (!st)
		return;
	if (st->multi_link_fd >= 0)
		close(st->multi_link_fd);
	bpf_link__destroy(st->all_link);
	bpf_link__destroy(st->link);
	trigger_bpf__destroy(st->skel);
	free(st->user_slots);
	free(st->driver_runs);
	free(st->runs_seen);
	free(st);
	ctx->priv = NULL;
}

/* ---- producers ---- */

/*
 * As the kernel bench counts in user space: every hit reads the thread id
 * back from memory (there a thread-local, here a volatile local) and hashes
 * it into a slot, so each hit pays that load and hash and producers may
 * share a slot, as there.  A slot fixed per producer (the hash hoisted out
 * of the loop) measured 5-18% faster, which is not the kernel bench's figure.
 */
static inline void user_hit(struct trig_slot *slots, const volatile pid_t *tid)
{
	unsigned int slot = (2654435769u * (unsigned int)*tid) >> 24;

	__atomic_fetch_add(&slots[slot & TRIG_SLOT_MASK].value, 1, __ATOMIC_RELAXED);
}

/*
 * getpgid() of the calling thread itself: the kernel bench's loop calls
 * syscall(__NR_getpgid) with no argument, and its compiled loop leaves the
 * thread id (just used for the counter slot) in the register that becomes
 * the pid argument, so every call there looks the thread up by id (and runs
 * the LSM hook) rather than taking the pid 0 shortcut.  With pid 0 the
 * side-by-side comparison read 1.28x the kernel bench's rate.
 */
static int syscall_count_producer(struct bench_ctx *ctx, int idx)
{
	struct trig_slot *slots = state(ctx)->slots;
	volatile pid_t tid = gettid();

	(void)idx;
	while (!bench_stopping(ctx)) {
		(void)syscall(__NR_getpgid, tid);
		user_hit(slots, &tid);
	}
	return 0;
}

static int usermode_count_producer(struct bench_ctx *ctx, int idx)
{
	struct trig_slot *slots = state(ctx)->slots;
	volatile pid_t tid = gettid();

	(void)idx;
	while (!bench_stopping(ctx)) {
		trig_target_nop();
		user_hit(slots, &tid);
	}
	return 0;
}

static int batch_producer(struct bench_ctx *ctx, int idx)
{
	struct trig_state *st = state(ctx);
	long *runs = &st->driver_runs[idx].value;
	int fd = st->driver_fd, err;

	while (!bench_stopping(ctx)) {
		err = bpf_prog_test_run_opts(fd, NULL);
		if (err)
			return bench_fail(ctx, BENCH_ERR_BENCH, -err,
					  "%s: BPF_PROG_TEST_RUN of the driver failed: %s",
					  ctx->bench->name, strerror(-err));
		/* single writer: a plain increment, published for the sampler */
		__atomic_store_n(runs, *runs + 1, __ATOMIC_RELAXED);
	}
	return 0;
}

/* One loop per target, each a direct call: a call through a pointer would
 * add an indirect branch to every hit. */
static int uprobe_producer(struct bench_ctx *ctx, int idx)
{
	(void)idx;
	switch (state(ctx)->v->target) {
	case TRIG_PUSH:
		while (!bench_stopping(ctx))
			(void)trig_target_push();
		break;
	case TRIG_RET:
		while (!bench_stopping(ctx))
			trig_target_ret();
		break;
	case TRIG_NOP5:
		while (!bench_stopping(ctx))
			trig_target_nop5();
		break;
	case TRIG_NOP10:
		while (!bench_stopping(ctx))
			trig_target_nop10();
		break;
	default:
		while (!bench_stopping(ctx))
			trig_target_nop();
	}
	return 0;
}

static int usdt_producer(struct bench_ctx *ctx, int idx)
{
	(void)idx;
	switch (state(ctx)->v->target) {
	case TRIG_NOP5:
		while (!bench_stopping(ctx))
			trig_target_usdt_nop5();
		break;
	case TRIG_NOP10:
		while (!bench_stopping(ctx))
			trig_target_usdt_nop10();
		break;
	default:
		while (!bench_stopping(ctx))
			trig_target_usdt();
	}
	return 0;
}

static void trig_measure(struct bench_ctx *ctx, struct bench_sample *s)
{
	struct trig_slot *slots = state(ctx)->slots;
	int i;

	for (i = 0; i < TRIG_NR_SLOTS; i++)
		s->hits += __atomic_exchange_n(&slots[i].value, 0, __ATOMIC_RELAXED);
}

/* Kernel-driven: also the driver runs of the interval (extra "driver_runs"),
 * so that hits / driver_runs shows the iterations each run made. */
static void trig_batch_measure(struct bench_ctx *ctx, struct bench_sample *s)
{
	struct trig_state *st = state(ctx);
	int i;

	for (i = 0; i < ctx->env.producer_cnt; i++) {
		long now = __atomic_load_n(&st->driver_runs[i].value, __ATOMIC_RELAXED);

		s->extra[0] += now - st->runs_seen[i];
		st->runs_seen[i] = now;
	}
	trig_measure(ctx, s);
}

static const char *const batch_extra[] = { "driver_runs", NULL };

/* ---- benchmark tables ---- */

#define TRIG_BATCH_ITERS_PARAM {					\
		.name = "trig_batch_iters",				\
		.cli = "--trig-batch-iters",				\
		.type = BENCH_PARAM_INT,				\
		.def = 100,						\
		.min = 1,						\
		.max = TRIG_MAX_BATCH_ITERS,				\
		.help = "times the driver fires the hooked event per BPF_PROG_TEST_RUN", \
	}

/* trig-kernel-count: nothing hooked, nothing to take a stack of. */
static const struct bench_param_def batch_params[] = {
	TRIG_BATCH_ITERS_PARAM,
	{ 0 },
};

/* The kernel bench's common -s/--stacktrace, which only its hooked
 * kernel-side trigger programs read. */
static const struct bench_param_def hook_params[] = {
	TRIG_BATCH_ITERS_PARAM,
	{
		.name = "stacktrace",
		.cli = "--stacktrace",
		.type = BENCH_PARAM_BOOL,
		.def = 0,
		.min = 0,
		.max = 1,
		.help = "the hooked program also takes a stack trace (bpf_get_stack, "
			"128 frames) on every hit",
	},
	{ 0 },
};

#define TRIG_VARIANT(id, ...)						\
	static const struct trig_variant variant_##id = { __VA_ARGS__ };\
	static int setup_##id(struct bench_ctx *ctx)			\
	{								\
		return trig_setup(ctx, &variant_##id);			\
	}

#define TRIG_BENCH(id, NAME, HELP, PRODUCER, PARAMS, NO_BPF, ...)	\
	const struct bench bench_trig_##id = {				\
		.name = NAME,						\
		.family = "trigger",					\
		.report = "hits_drops",					\
		.help = HELP,						\
		.params = PARAMS,					\
		.measure = trig_measure,				\
		.default_consumers = 0,					\
		.max_consumers = 0,					\
		.no_bpf = NO_BPF,					\
		.setup = setup_##id,					\
		.producer = PRODUCER,					\
		.teardown = trig_teardown,				\
		__VA_ARGS__						\
	};								\
	BENCH_REGISTER(bench_trig_##id)

#define TRIG_KERNEL_BENCH(id, NAME, HELP, FEATURE, DRIVER, HOOK, NEEDS, ...) \
	TRIG_VARIANT(id, .mode = TRIG_KERNEL, .feature = FEATURE,	\
		     .driver = DRIVER, .hook = HOOK, __VA_ARGS__)	\
	TRIG_BENCH(id, NAME, HELP, batch_producer, hook_params, false,	\
		   .measure = trig_batch_measure, .extra = batch_extra,	\
		   .sees_other_processes = true, .needs = NEEDS)

/* A probe on a multi-byte nop is the kernel's instruction decoder's call. */
#define TRIG_SITE_NEED(TARGET)						\
	((TARGET) == TRIG_NOP5 ? "uprobe_nop5" : (TARGET) == TRIG_NOP10 ? "uprobe_nop10" : NULL)

#define TRIG_UPROBE_BENCH(id, NAME, PROBE, TARGET, KIND, SHAPE, RET, MULTI) \
	TRIG_VARIANT(id, .mode = TRIG_UPROBE,				\
		     .feature = MULTI ? (RET ? "uretprobe-multi links" : "uprobe-multi links") \
				      : (RET ? "uretprobes" : "uprobes"),	\
		     .hook = MULTI ? "trig_uprobe_multi" : "trig_uprobe",	\
		     .target = TARGET, .retprobe = RET, .multi = MULTI)	\
	TRIG_BENCH(id, NAME, PROBE " on the kernel bench's '" KIND		\
		   "' target (" SHAPE "), called in a loop",			\
		   uprobe_producer, NULL, false, .sees_other_processes = true, \
		   .needs = BENCH_NEEDS(MULTI ? "uprobe_multi" : RET ? "uretprobe" : "uprobe", \
					TRIG_SITE_NEED(TARGET)))

TRIG_VARIANT(syscall_count, .mode = TRIG_USER_SYSCALL)
TRIG_BENCH(syscall_count, "trig-syscall-count",
	   "getpgid() syscalls counted in user space, no BPF: the raw syscall rate",
	   syscall_count_producer, NULL, true);

TRIG_VARIANT(usermode_count, .mode = TRIG_USER_CALL)
TRIG_BENCH(usermode_count, "trig-usermode-count",
	   "calls of the unprobed uprobe target counted in user space: the uprobe ceiling",
	   usermode_count_producer, NULL, true);

TRIG_VARIANT(kernel_count, .mode = TRIG_KERNEL, .feature = "raw_tp test runs",
	     .driver = "trig_count")
TRIG_BENCH(kernel_count, "trig-kernel-count",
	   "the raw_tp driver only counts its own iterations: the in-kernel ceiling",
	   batch_producer, batch_params, false,
	   .measure = trig_batch_measure, .extra = batch_extra,
	   .needs = BENCH_NEEDS("prog_test_run_raw_tp"));
TRIG_KERNEL_BENCH(tp, "trig-tp",
		  "tracepoint program on bpf_test_run:bpf_trigger_tp, fired by the driver's kfunc calls",
		  "tracepoint programs", "trig_driver_kfunc", "trig_tp",
		  BENCH_NEEDS("prog_test_run_raw_tp", "trigger_kfunc"), .needs_tracefs = true,
		  .kfunc = TRIG_DRIVER_KFUNC);
TRIG_KERNEL_BENCH(rawtp, "trig-rawtp",
		  "raw tracepoint program on bpf_trigger_tp, fired by the driver's kfunc calls",
		  "raw tracepoint programs", "trig_driver_kfunc", "trig_rawtp",
		  BENCH_NEEDS("prog_test_run_raw_tp", "trigger_kfunc"),
		  .kfunc = TRIG_DRIVER_KFUNC);
TRIG_KERNEL_BENCH(kprobe, "trig-kprobe",
		  "kprobe on bpf_get_numa_node_id, called by the driver",
		  "kprobes", "trig_driver", "trig_kprobe", BENCH_NEEDS("kprobe"));
TRIG_KERNEL_BENCH(kretprobe, "trig-kretprobe",
		  "kretprobe on bpf_get_numa_node_id, called by the driver",
		  "kretprobes", "trig_driver", "trig_kretprobe", BENCH_NEEDS("kretprobe"));
TRIG_KERNEL_BENCH(kprobe_multi, "trig-kprobe-multi",
		  "kprobe-multi link on bpf_get_numa_node_id, called by the driver",
		  "kprobe-multi links", "trig_driver", "trig_kprobe_multi",
		  BENCH_NEEDS("kprobe_multi"));
TRIG_KERNEL_BENCH(kretprobe_multi, "trig-kretprobe-multi",
		  "kretprobe-multi link on bpf_get_numa_node_id, called by the driver",
		  "kretprobe-multi links", "trig_driver", "trig_kretprobe_multi",
		  BENCH_NEEDS("kprobe_multi"));
TRIG_KERNEL_BENCH(kprobe_multi_all, "trig-kprobe-multi-all",
		  "kprobe-multi link on bpf_get_numa_node_id, called by the driver, while an "
		  "empty kprobe-multi program is attached to every other traceable kernel function",
		  "kprobe-multi links", "trig_driver", "trig_kprobe_multi",
		  BENCH_NEEDS("kprobe_multi"), .all_empty = "trig_kprobe_multi_empty", .needs_tracefs = true);
TRIG_KERNEL_BENCH(kretprobe_multi_all, "trig-kretprobe-multi-all",
		  "kretprobe-multi link on bpf_get_numa_node_id, called by the driver, while an "
		  "empty kretprobe-multi program is attached to every other traceable kernel function",
		  "kretprobe-multi links", "trig_driver", "trig_kretprobe_multi",
		  BENCH_NEEDS("kprobe_multi"), .all_empty = "trig_kretprobe_multi_empty", .retprobe = true,
		  .needs_tracefs = true);
TRIG_KERNEL_BENCH(fentry, "trig-fentry",
		  "fentry program on bpf_get_numa_node_id, called by the driver",
		  "fentry programs", "trig_driver", "trig_fentry", BENCH_NEEDS("fentry"));
TRIG_KERNEL_BENCH(fexit, "trig-fexit",
		  "fexit program on bpf_get_numa_node_id, called by the driver",
		  "fexit programs", "trig_driver", "trig_fexit", BENCH_NEEDS("fexit"));
TRIG_KERNEL_BENCH(fmodret, "trig-fmodret",
		  "fmod_ret program on the bpf_modify_return_test_tp kfunc, called by the driver",
		  "fmod_ret programs", "trig_driver_kfunc", "trig_fmodret",
		  BENCH_NEEDS("fmod_ret", "trigger_kfunc"),
		  .kfunc = TRIG_DRIVER_KFUNC);

TRIG_UPROBE_BENCH(uprobe_nop, "trig-uprobe-nop", "uprobe", TRIG_NOP, "nop", "nop; ret", false, false);
TRIG_UPROBE_BENCH(uprobe_push, "trig-uprobe-push", "uprobe", TRIG_PUSH, "push", "frame setup, a call", false, false);
TRIG_UPROBE_BENCH(uprobe_ret, "trig-uprobe-ret", "uprobe", TRIG_RET, "ret", "a bare ret", false, false);
TRIG_UPROBE_BENCH(uretprobe_nop, "trig-uretprobe-nop", "uretprobe", TRIG_NOP, "nop", "nop; ret", true, false);
TRIG_UPROBE_BENCH(uretprobe_push, "trig-uretprobe-push", "uretprobe", TRIG_PUSH, "push", "frame setup, a call", true, false);
TRIG_UPROBE_BENCH(uretprobe_ret, "trig-uretprobe-ret", "uretprobe", TRIG_RET, "ret", "a bare ret", true, false);
TRIG_UPROBE_BENCH(uprobe_multi_nop, "trig-uprobe-multi-nop", "uprobe-multi", TRIG_NOP, "nop", "nop; ret", false, true);
TRIG_UPROBE_BENCH(uprobe_multi_push, "trig-uprobe-multi-push", "uprobe-multi", TRIG_PUSH, "push", "frame setup, a call", false, true);
TRIG_UPROBE_BENCH(uprobe_multi_ret, "trig-uprobe-multi-ret", "uprobe-multi", TRIG_RET, "ret", "a bare ret", false, true);
TRIG_UPROBE_BENCH(uretprobe_multi_nop, "trig-uretprobe-multi-nop", "uretprobe-multi", TRIG_NOP, "nop", "nop; ret", true, true);
TRIG_UPROBE_BENCH(uretprobe_multi_push, "trig-uretprobe-multi-push", "uretprobe-multi", TRIG_PUSH, "push", "frame setup, a call", true, true);
TRIG_UPROBE_BENCH(uretprobe_multi_ret, "trig-uretprobe-multi-ret", "uretprobe-multi", TRIG_RET, "ret", "a bare ret", true, true);

/* x86-64: the multi-byte nop targets; newer kernels probe a 5-byte nop
 * (since the -nop10 rename upstream, a 10-byte one) without a trap. */
TRIG_UPROBE_BENCH(uprobe_nop5, "trig-uprobe-nop5", "uprobe", TRIG_NOP5, "nop5", "nop5; ret", false, false);
TRIG_UPROBE_BENCH(uretprobe_nop5, "trig-uretprobe-nop5", "uretprobe", TRIG_NOP5, "nop5", "nop5; ret", true, false);
TRIG_UPROBE_BENCH(uprobe_multi_nop5, "trig-uprobe-multi-nop5", "uprobe-multi", TRIG_NOP5, "nop5", "nop5; ret", false, true);
TRIG_UPROBE_BENCH(uretprobe_multi_nop5, "trig-uretprobe-multi-nop5", "uretprobe-multi", TRIG_NOP5, "nop5", "nop5; ret", true, true);
TRIG_UPROBE_BENCH(uprobe_nop10, "trig-uprobe-nop10", "uprobe", TRIG_NOP10, "nop10", "nop10; ret", false, false);
TRIG_UPROBE_BENCH(uretprobe_nop10, "trig-uretprobe-nop10", "uretprobe", TRIG_NOP10, "nop10", "nop10; ret", true, false);
TRIG_UPROBE_BENCH(uprobe_multi_nop10, "trig-uprobe-multi-nop10", "uprobe-multi", TRIG_NOP10, "nop10", "nop10; ret", false, true);
TRIG_UPROBE_BENCH(uretprobe_multi_nop10, "trig-uretprobe-multi-nop10", "uretprobe-multi", TRIG_NOP10, "nop10", "nop10; ret", true, true);

#define TRIG_USDT_BENCH(id, NAME, TARGET, HELP)				\
	TRIG_VARIANT(id, .mode = TRIG_USDT, .feature = "USDT probes",	\
		     .hook = "trig_usdt", .target = TARGET)		\
	TRIG_BENCH(id, NAME, HELP, usdt_producer, NULL, false,		\
		   .needs = BENCH_NEEDS("uprobe"))

TRIG_USDT_BENCH(usdt_nop, "trig-usdt-nop", TRIG_NOP,
		"BPF USDT program on a nop probe site, called in a loop");
TRIG_USDT_BENCH(usdt_nop5, "trig-usdt-nop5", TRIG_NOP5,
		"BPF USDT program on a probe site of a nop and a 5-byte nop, called in a loop");
TRIG_USDT_BENCH(usdt_nop10, "trig-usdt-nop10", TRIG_NOP10,
		"BPF USDT program on a probe site of a nop and a 10-byte nop, called in a loop");
