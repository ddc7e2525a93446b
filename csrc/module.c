// SPDX-License-Identifier: MIT
/*
 * benchbpf._core: the only file that touches the CPython API.
 *
 * Multi-phase init with module state.  A run releases the GIL for its whole
 * length; the calling thread wakes at least every 100 ms to check signals and
 * to hand finished samples to an optional Python callback.  Worker threads
 * never see a PyObject: errors come back in struct bench_error and become
 * exceptions here, once the GIL is held again.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <pythread.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include <bpf/libbpf.h>

#include "bench.h"

#define WAKE_MS 100
/* What a run's callback returns to end the warm-up early (anything else:
 * go on). */
enum { REQUEST_END_WARMUP = 1 };

typedef struct {
	PyObject *benchmark_error;	/* benchbpf.BenchmarkError(RuntimeError) */
	PyObject *unsupported_error;	/* benchbpf.UnsupportedError(BenchmarkError) */
	PyThread_type_lock run_lock;	/* one run at a time per process */
	unsigned long run_owner;	/* thread holding run_lock, 0 if none */
} core_state;

static core_state *get_state(PyObject *module)
{
	return (core_state *)PyModule_GetState(module);
}

/* ---- describing the registry ---- */

static const char *param_type_name(enum bench_param_type t)
{
	switch (t) {
	case BENCH_PARAM_BOOL: return "bool";
	case BENCH_PARAM_CHOICE: return "choice";
	case BENCH_PARAM_STRING: return "string";
	default: return "int";
	}
}

/* A NULL-terminated string array as a tuple; None for NULL. */
static PyObject *string_tuple(const char *const *strings)
{
	PyObject *t;
	int i;

	if (!strings)
		return Py_NewRef(Py_None);
	t = PyTuple_New(0);
	for (i = 0; t && strings[i]; i++) {
		PyObject *s = PyUnicode_FromString(strings[i]);

		if (!s || _PyTuple_Resize(&t, i + 1) < 0) {
			Py_XDECREF(s);
			Py_CLEAR(t);
			break;
		}
		PyTuple_SET_ITEM(t, i, s);
	}
	return t;
}

static PyObject *describe_param(const struct bench_param_def *p)
{
	PyObject *choices = NULL, *choice_help = NULL, *choice_needs = NULL, *d = NULL;
	bool choice = p->type == BENCH_PARAM_CHOICE;

	choices = string_tuple(choice ? p->choices : NULL);
	choice_help = string_tuple(choice ? p->choice_help : NULL);
	choice_needs = string_tuple(choice ? p->choice_needs : NULL);
	if (!choices || !choice_help || !choice_needs)
		goto cleanup;
	if (p->type == BENCH_PARAM_STRING)
		d = Py_BuildValue("{s:s,s:s,s:s,s:s,s:L,s:L,s:O,s:O,s:O,s:s,s:O,s:O}",
				  "name", p->name, "cli", p->cli ? p->cli : "",
				  "type", param_type_name(p->type),
				  "default", p->def_str ? p->def_str : "", "min", (long long)p->min,
				  "max", (long long)p->max, "choices", choices,
				  "choice_help", choice_help, "choice_needs", choice_needs,
				  "help", p->help ? p->help : "",
				  "choice_flags", p->choice_flags ? Py_True : Py_False,
				  "required", p->required ? Py_True : Py_False);
	else
		d = Py_BuildValue("{s:s,s:s,s:s,s:L,s:L,s:L,s:O,s:O,s:O,s:s,s:O,s:O}",
				  "name", p->name, "cli", p->cli ? p->cli : "",
				  "type", param_type_name(p->type),
				  "default", (long long)p->def, "min", (long long)p->min,
				  "max", (long long)p->max, "choices", choices,
				  "choice_help", choice_help, "choice_needs", choice_needs,
				  "help", p->help ? p->help : "",
				  "choice_flags", p->choice_flags ? Py_True : Py_False,
				  "required", p->required ? Py_True : Py_False);
cleanup:
	Py_XDECREF(choices);
	Py_XDECREF(choice_help);
	Py_XDECREF(choice_needs);
	return d;
}

static PyObject *describe_bench(const struct bench *b)
{
	PyObject *params = NULL, *extra = NULL, *needs = NULL, *d = NULL, *item;
	int i;

	params = PyList_New(0);
	extra = PyList_New(0);
	needs = PyList_New(0);
	if (!params || !extra || !needs)
		goto cleanup;
	for (i = 0; i < BENCH_MAX_NEEDS; i++) {
		if (!b->needs[i])
			continue;
		item = PyUnicode_FromString(b->needs[i]);
		if (!item || PyList_Append(needs, item) < 0) {
			Py_XDECREF(item);
			goto cleanup;
		}
		Py_DECREF(item);
	}
	for (i = 0; b->params && b->params[i].name; i++) {
		if (!bench_param_applies(b, &b->params[i]))
			continue;
		item = describe_param(&b->params[i]);
		if (!item || PyList_Append(params, item) < 0) {
			Py_XDECREF(item);
			goto cleanup;
		}
		Py_DECREF(item);
	}
	for (i = 0; b->extra && b->extra[i] && i < BENCH_MAX_EXTRA; i++) {
		item = PyUnicode_FromString(b->extra[i]);
		if (!item || PyList_Append(extra, item) < 0) {
			Py_XDECREF(item);
			goto cleanup;
		}
		Py_DECREF(item);
	}
	d = Py_BuildValue("{s:s,s:s,s:O,s:s,s:s,s:O,s:O,s:i,s:i,s:i,s:O,s:O,s:O}",
			  "name", b->name, "family", b->family, "needs", needs,
			  "report", b->report ? b->report : "hits_drops",
			  "help", b->help ? b->help : "", "params", params,
			  "extra", extra, "default_consumers", b->default_consumers,
			  "max_consumers", b->max_consumers,
			  "max_producers", b->max_producers ? b->max_producers : BENCH_MAX_THREADS,
			  "needs_bpf", b->no_bpf ? Py_False : Py_True,
			  "always_pinned", b->always_pinned ? Py_True : Py_False,
			  "sees_other_processes", b->sees_other_processes ? Py_True : Py_False);
cleanup:
	Py_XDECREF(params);
	Py_XDECREF(extra);
	Py_XDECREF(needs);
	return d;
}

static PyObject *core_benchmarks(PyObject *module, PyObject *unused)
{
	const struct bench **all;
	PyObject *list = NULL, *item;
	int n, i;

	all = bench_all(&n);
	if (!all)
		return PyErr_NoMemory();
	list = PyList_New(0);
	for (i = 0; list && i < n; i++) {
		item = describe_bench(all[i]);
		if (!item || PyList_Append(list, item) < 0) {
			Py_XDECREF(item);
			Py_CLEAR(list);
			break;
		}
		Py_DECREF(item);
	}
	free(all);
	return list;
}

/* ---- reading options ---- */

static int dict_int(PyObject *d, const char *key, long long *out, bool *found)
{
	PyObject *v = PyDict_GetItemString(d, key);	/* borrowed */

	*found = v != NULL;
	if (!v)
		return 0;
	if (!PyLong_Check(v)) {
		PyErr_Format(PyExc_TypeError, "%s must be an int, not %s", key,
			     Py_TYPE(v)->tp_name);
		return -1;
	}
	*out = PyLong_AsLongLong(v);
	return (*out == -1 && PyErr_Occurred()) ? -1 : 0;
}

static int read_cpus(PyObject *d, const char *key, int *cpus, int *len)
{
	PyObject *v = PyDict_GetItemString(d, key), *seq = NULL;
	Py_ssize_t i, n;
	int ret = -1;

	*len = 0;
	if (!v || v == Py_None)
		return 0;
	seq = PySequence_Fast(v, "CPU set must be a sequence of ints");
	if (!seq)
		goto cleanup;
	n = PySequence_Fast_GET_SIZE(seq);
	if (n > BENCH_MAX_THREADS) {
		PyErr_Format(PyExc_ValueError, "%s lists %zd CPUs: at most %d",
			     key, n, BENCH_MAX_THREADS);
		goto cleanup;
	}
	for (i = 0; i < n; i++) {
		PyObject *item = PySequence_Fast_GET_ITEM(seq, i);
		int overflow = 0, nr_cpus = bench_nr_cpus();
		long long c;

		if (!PyLong_Check(item)) {
			PyErr_Format(PyExc_TypeError, "%s: CPU numbers must be ints, not %s",
				     key, Py_TYPE(item)->tp_name);
			goto cleanup;
		}
		c = PyLong_AsLongLongAndOverflow(item, &overflow);
		if (c == -1 && PyErr_Occurred())
			goto cleanup;
		/* Checked before narrowing: CPU 2^32 must not become CPU 0. */
		if (overflow || c < 0 || c >= nr_cpus) {
			PyErr_Format(PyExc_ValueError,
				     "%s names CPU %R: this machine has CPUs 0..%d",
				     key, item, nr_cpus - 1);
			goto cleanup;
		}
		cpus[i] = (int)c;
	}
	*len = (int)n;
	ret = 0;
cleanup:
	Py_XDECREF(seq);
	return ret;
}

static int read_env(struct bench_ctx *ctx, PyObject *env)
{
	struct bench_env *e = &ctx->env;
	long long v;
	bool found;

	if (dict_int(env, "interval_ns", &v, &found) < 0)
		return -1;
	if (found)
		e->interval_ns = v < 0 ? 0 : (uint64_t)v;
	if (dict_int(env, "first_sample_ns", &v, &found) < 0)
		return -1;
	if (found && v < 0) {
		PyErr_Format(PyExc_ValueError,
			     "first_sample_ns=%lld out of range: 0..interval_ns", v);
		return -1;
	}
	if (found)
		e->first_sample_ns = (uint64_t)v;
#define INT_FIELD(key, field)						\
	if (dict_int(env, key, &v, &found) < 0)				\
		return -1;						\
	if (found) {							\
		if (v < INT_MIN || v > INT_MAX) {			\
			PyErr_Format(PyExc_ValueError, "%s=%lld out of range", key, v); \
			return -1;					\
		}							\
		e->field = (int)v;					\
	}
	INT_FIELD("warmup_samples", warmup_samples)
	INT_FIELD("duration_samples", duration_samples)
	INT_FIELD("producers", producer_cnt)
	INT_FIELD("consumers", consumer_cnt)
	INT_FIELD("ready_fd", ready_fd)
	INT_FIELD("go_fd", go_fd)
#undef INT_FIELD
	e->affinity = PyObject_IsTrue(PyDict_GetItemString(env, "affinity") ?: Py_False) == 1;
	e->verbose = PyObject_IsTrue(PyDict_GetItemString(env, "verbose") ?: Py_False) == 1;
	e->prog_stats = PyObject_IsTrue(PyDict_GetItemString(env, "prog_stats") ?: Py_False) == 1;
	if (read_cpus(env, "prod_affinity", e->prod_cpus, &e->prod_cpus_len) < 0 ||
	    read_cpus(env, "cons_affinity", e->cons_cpus, &e->cons_cpus_len) < 0)
		return -1;
	if (e->prod_cpus_len || e->cons_cpus_len)
		e->affinity = true;
	return 0;
}

static int read_params(struct bench_ctx *ctx, PyObject *params)
{
	const struct bench *b = ctx->bench;
	PyObject *key, *value;
	Py_ssize_t pos = 0;

	while (PyDict_Next(params, &pos, &key, &value)) {
		const struct bench_param_def *p;
		const char *name = PyUnicode_AsUTF8(key);
		long long v;
		int i;

		if (!name)
			return -1;
		i = bench_param_index(b, name);
		if (i < 0 || !bench_param_applies(b, &b->params[i])) {
			PyErr_Format(PyExc_TypeError, "%s takes no parameter %R", b->name, key);
			return -1;
		}
		p = &b->params[i];
		if (p->type == BENCH_PARAM_STRING) {
			Py_ssize_t len;
			const char *text = PyUnicode_Check(value) ?
					   PyUnicode_AsUTF8AndSize(value, &len) : NULL;

			if (!text) {
				if (!PyErr_Occurred())
					PyErr_Format(PyExc_TypeError, "%s must be a str, not %s",
						     name, Py_TYPE(value)->tp_name);
				return -1;
			}
			if (len < p->min || len > p->max || len >= BENCH_PARAM_STR_LEN ||
			    (Py_ssize_t)strlen(text) != len) {
				PyErr_Format(PyExc_ValueError, "%s=%R: allowed a string of "
					     "%lld..%lld characters", name, value,
					     (long long)p->min, (long long)p->max);
				return -1;
			}
			memcpy(ctx->param_str[i], text, len + 1);
			continue;
		}
		if (!PyLong_Check(value)) {
			PyErr_Format(PyExc_TypeError, "%s must be an int, not %s",
				     name, Py_TYPE(value)->tp_name);
			return -1;
		}
		v = PyLong_AsLongLong(value);
		if (v == -1 && PyErr_Occurred())
			return -1;
		if (v < p->min || v > p->max) {
			PyErr_Format(PyExc_ValueError, "%s=%lld out of range: allowed %lld..%lld",
				     name, v, (long long)p->min, (long long)p->max);
			return -1;
		}
		ctx->params[i] = v;
	}
	return 0;
}

/* ---- results and errors ---- */

static PyObject *sample_tuple(const struct bench_sample *s)
{
	return Py_BuildValue("(KKKKK(KKKK)OK(KKKK))",
			     (unsigned long long)s->interval_ns,
			     (unsigned long long)s->hits,
			     (unsigned long long)s->drops,
			     (unsigned long long)s->false_hits,
			     (unsigned long long)s->important_hits,
			     (unsigned long long)s->extra[0],
			     (unsigned long long)s->extra[1],
			     (unsigned long long)s->extra[2],
			     (unsigned long long)s->extra[3],
			     s->late ? Py_True : Py_False,
			     (unsigned long long)s->producer_cpu_ns,
			     (unsigned long long)s->late_ns,
			     (unsigned long long)s->steal_ns,
			     (unsigned long long)s->involuntary,
			     (unsigned long long)s->migrations);
}

static PyObject *log_string(struct bench_ctx *ctx)
{
	if (!ctx->log.buf)
		return PyUnicode_FromString("");
	return PyUnicode_DecodeUTF8(ctx->log.buf, ctx->log.len, "replace");
}

static void raise_bench_error(core_state *st, struct bench_ctx *ctx)
{
	struct bench_error *e = &ctx->error;
	PyObject *type, *exc = NULL, *log = NULL;

	switch (e->kind) {
	case BENCH_ERR_VALUE: type = PyExc_ValueError; break;
	case BENCH_ERR_UNSUPPORTED: type = st->unsupported_error; break;
	case BENCH_ERR_PERMISSION: type = PyExc_PermissionError; break;
	case BENCH_ERR_OS: type = PyExc_OSError; break;
	default: type = st->benchmark_error; break;
	}
	if (type == PyExc_OSError || type == PyExc_PermissionError)
		exc = PyObject_CallFunction(type, "is", e->err, e->msg);
	else
		exc = PyObject_CallFunction(type, "s", e->msg);
	if (!exc)
		return;
	log = log_string(ctx);
	if (log) {
		PyObject_SetAttrString(exc, "log", log);
		if (type != PyExc_OSError && type != PyExc_PermissionError) {
			PyObject *no = PyLong_FromLong(e->err);

			if (no)
				PyObject_SetAttrString(exc, "errno", no);
			Py_XDECREF(no);
		}
	}
	PyErr_Clear();
	PyErr_SetObject(type, exc);
	Py_XDECREF(log);
	Py_DECREF(exc);
}

/* Take the process-wide run lock without blocking Ctrl-C.  The thread
 * that holds it is running a benchmark's callback: waiting would never end. */
static int acquire_run_lock(core_state *st, const char *what)
{
	unsigned long me = PyThread_get_thread_ident();
	PyLockStatus r;

	if (st->run_owner == me) {
		PyErr_Format(PyExc_RuntimeError,
			     "benchbpf.%s called from inside a running benchmark's callback: "
			     "runs do not nest; start it after the current run returns", what);
		return -1;
	}
	for (;;) {
		Py_BEGIN_ALLOW_THREADS
		r = PyThread_acquire_lock_timed(st->run_lock, WAKE_MS * 1000, 0);
		Py_END_ALLOW_THREADS
		if (r == PY_LOCK_ACQUIRED) {
			st->run_owner = me;
			return 0;
		}
		if (PyErr_CheckSignals() < 0)
			return -1;
	}
}

static void release_run_lock(core_state *st)
{
	st->run_owner = 0;
	PyThread_release_lock(st->run_lock);
}

static int deliver(PyObject *callback, struct bench_ctx *ctx, int from, int to)
{
	int i;

	for (i = from; i < to; i++) {
		PyObject *t = sample_tuple(&ctx->samples[i]), *r;

		if (!t)
			return -1;
		/* Warm-up as it stands now: an early end only moves it to
		 * samples not yet taken, so this is what the sample was. */
		r = PyObject_CallFunction(callback, "iOO", i, t,
					  i < bench_warmup_samples(ctx) ? Py_True : Py_False);
		Py_DECREF(t);
		if (!r)
			return -1;
		/* The callback may end the warm-up after this sample. */
		if (PyLong_CheckExact(r)) {
			int overflow;
			long request = PyLong_AsLongAndOverflow(r, &overflow);

			if (!overflow && request == REQUEST_END_WARMUP)
				bench_request_warmup_end(ctx, i + 1);
		}
		Py_DECREF(r);
	}
	return 0;
}

/* The CPUs threads first..first+count-1 were pinned to, or None. */
static PyObject *placement(struct bench_ctx *ctx, int first, int count)
{
	PyObject *cpus;
	int i;

	if (!ctx->env.affinity)
		return Py_NewRef(Py_None);
	cpus = PyTuple_New(count);
	for (i = 0; cpus && i < count; i++) {
		PyObject *c = PyLong_FromLong(ctx->thread_cpus[first + i]);

		if (!c) {
			Py_CLEAR(cpus);
			break;
		}
		PyTuple_SET_ITEM(cpus, i, c);
	}
	return cpus;
}

/* [(name, type, run_cnt, run_time_ns), ...] over the measured window, or
 * None when the run did not ask for them or the window was not completed. */
static PyObject *prog_stats_list(struct bench_ctx *ctx)
{
	const struct bench_prog_stats *ps = &ctx->prog_stats;
	PyObject *list;
	int i;

	if (!ctx->env.prog_stats || !ps->complete)
		Py_RETURN_NONE;
	list = PyList_New(ps->nr);
	for (i = 0; list && i < ps->nr; i++) {
		const struct bench_prog_stat *p = &ps->prog[i];
		PyObject *t = Py_BuildValue("(ssKK)", p->name, p->type,
					    (unsigned long long)p->run_cnt,
					    (unsigned long long)p->run_time_ns);

		if (!t)
			Py_CLEAR(list);
		else
			PyList_SET_ITEM(list, i, t);
	}
	return list;
}

/* collect()'s series as {name: tuple of floats}, its notes as {key: str}. */
static PyObject *series_dict(struct bench_ctx *ctx)
{
	PyObject *d = PyDict_New(), *t = NULL;
	int i, j;

	for (i = 0; d && i < ctx->nr_series; i++) {
		t = PyTuple_New(ctx->series[i].len);
		if (!t)
			goto fail;
		for (j = 0; j < ctx->series[i].len; j++) {
			PyObject *v = PyFloat_FromDouble(ctx->series[i].values[j]);

			if (!v)
				goto fail;
			PyTuple_SET_ITEM(t, j, v);
		}
		if (PyDict_SetItemString(d, ctx->series[i].name, t) < 0)
			goto fail;
		Py_CLEAR(t);
	}
	return d;
fail:
	Py_XDECREF(t);
	Py_XDECREF(d);
	return NULL;
}

static PyObject *notes_dict(struct bench_ctx *ctx)
{
	PyObject *d = PyDict_New(), *v;
	int i;

	for (i = 0; d && i < ctx->nr_notes; i++) {
		v = PyUnicode_DecodeUTF8(ctx->notes[i].value, strlen(ctx->notes[i].value),
					 "replace");
		if (!v || PyDict_SetItemString(d, ctx->notes[i].key, v) < 0) {
			Py_XDECREF(v);
			Py_DECREF(d);
			return NULL;
		}
		Py_DECREF(v);
	}
	return d;
}

static PyObject *build_result(struct bench_ctx *ctx)
{
	PyObject *samples = NULL, *log = NULL, *result = NULL, *progs = NULL;
	PyObject *series = NULL, *notes = NULL;
	PyObject *cons_cpus = NULL, *prod_cpus = NULL;
	int i;

	samples = PyList_New(ctx->nr_samples);
	if (!samples)
		goto cleanup;
	for (i = 0; i < ctx->nr_samples; i++) {
		PyObject *t = sample_tuple(&ctx->samples[i]);

		if (!t)
			goto cleanup;
		PyList_SET_ITEM(samples, i, t);
	}
	log = log_string(ctx);
	cons_cpus = placement(ctx, 0, ctx->env.consumer_cnt);
	prod_cpus = placement(ctx, ctx->env.consumer_cnt, ctx->env.producer_cnt);
	series = series_dict(ctx);
	notes = notes_dict(ctx);
	if (!log || !cons_cpus || !prod_cpus || !series || !notes)
		goto cleanup;
	progs = prog_stats_list(ctx);
	if (!progs)
		goto cleanup;
	result = Py_BuildValue("{s:O,s:i,s:s,s:O,s:O,s:O,s:O,s:O,s:K,s:O,s:O}", "samples", samples,
			       "warmup_samples", ctx->env.warmup_samples,
			       "trigger", ctx->trigger, "log", log,
			       "tracefs_mounted", ctx->tracefs_mounted ? Py_True : Py_False,
			       "consumer_cpus", cons_cpus, "producer_cpus", prod_cpus,
			       "prog_stats", progs,
			       "prog_stats_boundary_ns",
			       (unsigned long long)ctx->prog_stats.boundary_ns,
			       "series", series, "notes", notes);
cleanup:
	Py_XDECREF(samples);
	Py_XDECREF(log);
	Py_XDECREF(cons_cpus);
	Py_XDECREF(prod_cpus);
	Py_XDECREF(progs);
	Py_XDECREF(series);
	Py_XDECREF(notes);
	return result;
}

static void free_ctx(struct bench_ctx *ctx)
{
	if (!ctx)
		return;
	bench_ctx_destroy(ctx);
	free(ctx);
}

/* A context for benchmark `name` with the caller's options read in, or
 * NULL with an exception set: what run() and validate() both start from. */
static struct bench_ctx *new_ctx(const char *name, PyObject *env, PyObject *params)
{
	const struct bench *b = bench_find(name);
	struct bench_ctx *ctx;

	if (!b) {
		PyErr_Format(PyExc_ValueError, "unknown benchmark '%s'", name);
		return NULL;
	}
	ctx = malloc(sizeof(*ctx));
	if (!ctx) {
		PyErr_NoMemory();
		return NULL;
	}
	bench_ctx_init(ctx, b);
	if (read_env(ctx, env) < 0 || read_params(ctx, params) < 0) {
		free_ctx(ctx);
		return NULL;
	}
	return ctx;
}

PyDoc_STRVAR(core_run_doc,
"run(name, env, params, callback=None) -> dict\n\n"
"Run one benchmark.  env holds the common options (interval_ns,\n"
"warmup_samples, duration_samples, producers, consumers, affinity,\n"
"prod_affinity, cons_affinity, verbose, prog_stats, first_sample_ns (the\n"
"first warm-up sample's length when not one interval), and for a duet\n"
"ready_fd and go_fd); params the benchmark's own.\n"
"callback(index, sample_tuple, warmup) is called as each sample arrives;\n"
"returning END_WARMUP ends the warm-up after that sample (or the first the\n"
"sampler has not begun), and result['warmup_samples'] says where it ended.");

static PyObject *core_run(PyObject *module, PyObject *args, PyObject *kwargs)
{
	static char *kwlist[] = { "name", "env", "params", "callback", NULL };
	core_state *st = get_state(module);
	const char *name;
	PyObject *env, *params, *callback = Py_None, *result = NULL;
	struct bench_ctx *ctx = NULL;
	bool locked = false, started = false, py_error = false;
	int seen = 0, n, err = 0;
	bool done = false;

	if (!PyArg_ParseTupleAndKeywords(args, kwargs, "sO!O!|O:run", kwlist, &name,
					 &PyDict_Type, &env, &PyDict_Type, &params,
					 &callback))
		return NULL;
	if (callback != Py_None && !PyCallable_Check(callback)) {
		PyErr_SetString(PyExc_TypeError, "callback must be callable or None");
		return NULL;
	}
	ctx = new_ctx(name, env, params);
	if (!ctx)
		return NULL;

	if (acquire_run_lock(st, "run()") < 0)
		goto cleanup;
	locked = true;

	bench_log_begin(ctx);
	started = true;
	Py_BEGIN_ALLOW_THREADS
	err = bench_start(ctx);
	Py_END_ALLOW_THREADS

	while (!err && !done) {
		Py_BEGIN_ALLOW_THREADS
		n = bench_wait(ctx, seen, WAKE_MS, &done);
		Py_END_ALLOW_THREADS
		if (callback != Py_None && n > seen && deliver(callback, ctx, seen, n) < 0) {
			py_error = true;
			break;
		}
		seen = n;
		/* KeyboardInterrupt (or any signal handler's exception) ends
		 * the run; cleanup below still joins and frees everything. */
		if (PyErr_CheckSignals() < 0) {
			py_error = true;
			break;
		}
	}

cleanup:
	if (ctx) {
		PyObject *et = NULL, *ev = NULL, *tb = NULL;

		/* Keep a pending exception across the blocking cleanup. */
		PyErr_Fetch(&et, &ev, &tb);
		Py_BEGIN_ALLOW_THREADS
		bench_finish(ctx);
		Py_END_ALLOW_THREADS
		if (started)
			bench_log_end(ctx);
		PyErr_Restore(et, ev, tb);
		/* A Ctrl-C that came while the GIL was released (setup,
		 * teardown) wins over the run's own outcome: the caller asked
		 * to stop, and a setup error may be only its side effect. */
		if (!PyErr_Occurred() && !py_error && PyErr_CheckSignals() < 0)
			py_error = true;
		if (!PyErr_Occurred() && !py_error) {
			if (ctx->error.kind != BENCH_ERR_NONE)
				raise_bench_error(st, ctx);
			else if (started)
				result = build_result(ctx);
		}
		free_ctx(ctx);
	}
	if (locked)
		release_run_lock(st);
	return result;
}

PyDoc_STRVAR(core_validate_doc,
"validate(name, env, params) -> None\n\n"
"Every check run() makes before loading anything (common options, the\n"
"benchmark's own cross-parameter checks), without running: raises as\n"
"run() would, else returns None.  Loads nothing.");

static PyObject *core_validate(PyObject *module, PyObject *args, PyObject *kwargs)
{
	static char *kwlist[] = { "name", "env", "params", NULL };
	core_state *st = get_state(module);
	PyObject *env, *params, *result = NULL;
	struct bench_ctx *ctx;
	const char *name;

	if (!PyArg_ParseTupleAndKeywords(args, kwargs, "sO!O!:validate", kwlist, &name,
					 &PyDict_Type, &env, &PyDict_Type, &params))
		return NULL;
	ctx = new_ctx(name, env, params);
	if (!ctx)
		return NULL;
	if (bench_validate(ctx))
		raise_bench_error(st, ctx);
	else
		result = Py_NewRef(Py_None);
	free_ctx(ctx);
	return result;
}

static PyObject *core_probe_features(PyObject *module, PyObject *unused)
{
	core_state *st = get_state(module);
	struct bench_feature *feats;
	struct bench_ctx *ctx = NULL;
	PyObject *list = NULL;
	int n = 0, i;

	feats = calloc(64, sizeof(*feats));
	ctx = malloc(sizeof(*ctx));
	if (!feats || !ctx) {
		PyErr_NoMemory();
		goto cleanup;
	}
	if (bench_ctx_init(ctx, &bench_features_probe)) {
		free(ctx);
		ctx = NULL;
		PyErr_NoMemory();
		goto cleanup;
	}
	if (acquire_run_lock(st, "features()") < 0)
		goto cleanup;
	Py_BEGIN_ALLOW_THREADS
	n = bench_probe_features(ctx, feats, 64);
	Py_END_ALLOW_THREADS
	release_run_lock(st);
	list = PyList_New(0);
	for (i = 0; list && i < n; i++) {
		PyObject *t = Py_BuildValue("(sOis)", feats[i].name,
					    feats[i].supported ? Py_True : Py_False,
					    feats[i].err, feats[i].detail);

		if (!t || PyList_Append(list, t) < 0)
			Py_CLEAR(list);
		Py_XDECREF(t);
	}
cleanup:
	if (ctx)
		bench_ctx_destroy(ctx);
	free(ctx);
	free(feats);
	return list;
}

static PyObject *core_libbpf_version(PyObject *module, PyObject *unused)
{
	return PyUnicode_FromString(libbpf_version_string());
}

static PyObject *core_setup_count(PyObject *module, PyObject *unused)
{
	return PyLong_FromUnsignedLong(bench_setup_count());
}

static PyMethodDef core_methods[] = {
	{ "benchmarks", core_benchmarks, METH_NOARGS,
	  "benchmarks() -> list of dicts describing every registered benchmark" },
	{ "run", (PyCFunction)(void (*)(void))core_run, METH_VARARGS | METH_KEYWORDS,
	  core_run_doc },
	{ "validate", (PyCFunction)(void (*)(void))core_validate, METH_VARARGS | METH_KEYWORDS,
	  core_validate_doc },
	{ "probe_features", core_probe_features, METH_NOARGS,
	  "probe_features() -> list of (name, supported, errno, detail)" },
	{ "libbpf_version", core_libbpf_version, METH_NOARGS,
	  "libbpf_version() -> version string of the libbpf in use" },
	{ "setup_count", core_setup_count, METH_NOARGS,
	  "setup_count() -> how many runs reached setup in this process" },
	{ NULL, NULL, 0, NULL },
};

static int core_exec(PyObject *module)
{
	core_state *st = get_state(module);

	st->benchmark_error = PyErr_NewExceptionWithDoc(
		"benchbpf.BenchmarkError",
		"A benchmark failed to set up or run; .log holds libbpf's messages.",
		PyExc_RuntimeError, NULL);
	if (!st->benchmark_error)
		return -1;
	st->unsupported_error = PyErr_NewExceptionWithDoc(
		"benchbpf.UnsupportedError",
		"This kernel lacks a feature the benchmark needs; the message names it.",
		st->benchmark_error, NULL);
	if (!st->unsupported_error)
		return -1;
	st->run_lock = PyThread_allocate_lock();
	if (!st->run_lock) {
		PyErr_NoMemory();
		return -1;
	}
	if (PyModule_AddObjectRef(module, "BenchmarkError", st->benchmark_error) < 0 ||
	    PyModule_AddObjectRef(module, "UnsupportedError", st->unsupported_error) < 0 ||
	    PyModule_AddIntConstant(module, "MAX_THREADS", BENCH_MAX_THREADS) < 0 ||
	    PyModule_AddIntConstant(module, "MAX_SAMPLES", BENCH_MAX_SAMPLES) < 0 ||
	    PyModule_AddIntConstant(module, "END_WARMUP", REQUEST_END_WARMUP) < 0)
		return -1;
	/* What the limit was before the core raised it, for metadata: a
	 * low limit the core could not raise explains EPERM on old kernels. */
	{
		struct rlimit r;
		long long before = -2;	/* unknown */
		PyObject *v;
		int err;

		if (getrlimit(RLIMIT_MEMLOCK, &r) == 0)
			before = r.rlim_cur == RLIM_INFINITY ? -1 : (long long)r.rlim_cur;
		bench_bump_memlock();
		v = PyLong_FromLongLong(before);
		if (!v)
			return -1;
		err = PyModule_AddObjectRef(module, "MEMLOCK_AT_IMPORT", v);
		Py_DECREF(v);
		if (err < 0)
			return -1;
	}
	return 0;
}

static int core_traverse(PyObject *module, visitproc visit, void *arg)
{
	core_state *st = get_state(module);

	Py_VISIT(st->benchmark_error);
	Py_VISIT(st->unsupported_error);
	return 0;
}

static int core_clear(PyObject *module)
{
	core_state *st = get_state(module);

	Py_CLEAR(st->benchmark_error);
	Py_CLEAR(st->unsupported_error);
	return 0;
}

static void core_free(void *module)
{
	core_state *st = get_state(module);

	core_clear(module);
	if (st->run_lock) {
		PyThread_free_lock(st->run_lock);
		st->run_lock = NULL;
	}
}

static PyModuleDef_Slot core_slots[] = {
	{ Py_mod_exec, core_exec },
	{ 0, NULL },
};

static struct PyModuleDef core_module = {
	PyModuleDef_HEAD_INIT,
	.m_name = "benchbpf._core",
	.m_doc = "C core of benchbpf: runs the kernel's BPF benchmarks.",
	.m_size = sizeof(core_state),
	.m_methods = core_methods,
	.m_slots = core_slots,
	.m_traverse = core_traverse,
	.m_clear = core_clear,
	.m_free = core_free,
};

PyMODINIT_FUNC PyInit__core(void)
{
	return PyModuleDef_Init(&core_module);
}
