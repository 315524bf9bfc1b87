/* schedule.c — the engine's side of schedules: a module's pending
 * schedules applied after it checks, `:sched` steps, and the texts of
 * :trace, :print --unscheduled and :step (engine/schedule.h). */
#include "engine/schedule.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/profile.h"
#include "jit/jit.h"
#include "parser/parser.h"
#include "passes/pass.h"
#include "rt/tir_interp.h"
#include "sched/sched.h"
#include "types/types.h"

enum { VERIFY_SEED = 1 };

/* The result of a schedule checked against the function as written. */
static bool verified(const PrimFunc *f, DiagCtx *d, Span where) {
  char err[512];
  if (sched_verify(f, VERIFY_SEED, err, sizeof err)) return true;
  diag_error(d, where, "%s", err);
  diag_hint(d, "a step's preconditions let a wrong rewrite through: please report it");
  return false;
}

bool engine_apply_schedules(Module *m, DiagCtx *d, bool verify) {
  bool ok = true;
  SchedOptions o = {0};
  for (int i = 0; i < m->ndefs; i++) {
    const Def *df = &m->defs[i];
    if (df->kind != DEF_PRIM || !df->u.prim->trace || df->u.prim->unscheduled) continue;
    PrimFunc *f = sched_apply_trace(m->arena, df->u.prim, d, &o);
    if (f && verify && !verified(f, d, df->u.prim->trace->span)) f = NULL;
    if (!f) {
      ok = false;
      continue;
    }
    module_add(m, (Def){.kind = DEF_PRIM, .u.prim = f});
  }
  return ok;
}

const PrimFunc *engine_prim(const Module *m, const char *name, DiagCtx *d, Span where) {
  const char *n = name[0] == '@' ? name + 1 : name;
  const PrimFunc *f = module_prim(m, n);
  if (!f) diag_error(d, where, "no prim function named `@%s`", n);
  return f;
}

char *engine_prim_text(const PrimFunc *f, bool unscheduled) {
  StrBuf b = {0};
  print_prim_func_to(&b, unscheduled && f->unscheduled ? f->unscheduled : f);
  return sb_take(&b);
}

char *engine_sched_text(const PrimFunc *f) {
  if (!f->trace) return NULL;
  StrBuf b = {0};
  print_sched_trace_to(&b, f->trace);
  return sb_take(&b);
}

char *engine_sched_prefix_text(const PrimFunc *f, int k, DiagCtx *d);

Module *engine_sched_step(const Module *m, Arena *a, DiagCtx *d, const char *name, Span step,
                          bool verify, char **diff) {
  const PrimFunc *f = engine_prim(m, name, d, step);
  if (!f) return NULL;
  uint32_t off, file = diag_span_file(d, step, &off);
  Module *out = module_copy(m, a);
  ParseOptions po = {.from = off, .to = off + step.len};
  SchedStep *st = parse_sched_step(out, d, file, &po);
  SchedOptions o = {0};
  PrimFunc *g = st ? sched_apply_step(a, f, st, d, &o) : NULL;
  if (g && verify && !verified(g, d, st->span)) g = NULL;
  if (!g) {
    module_free(out);
    return NULL;
  }
  module_add(out, (Def){.kind = DEF_PRIM, .u.prim = g});
  char *before = engine_sched_prefix_text(f, engine_sched_nsteps(f), d);
  char *after = engine_prim_text(g, false);
  char key[256];
  snprintf(key, sizeof key, "@%s", f->name);
  *diff = text_diff(key, before, after);
  free(before), free(after);
  return out;
}

char *engine_text_diff(const char *key, const char *before, const char *after) {
  return text_diff(key, before, after);
}

int engine_sched_nsteps(const PrimFunc *f) { return f->trace ? f->trace->n : 0; }

char *engine_sched_step_text(const PrimFunc *f, int i) {
  StrBuf b = {0};
  if (f->trace && i >= 0 && i < f->trace->n) print_sched_step_to(&b, f->trace->steps[i]);
  return sb_take(&b);
}

char *engine_sched_prefix_text(const PrimFunc *f, int k, DiagCtx *d) {
  Arena a;
  arena_init(&a);
  SchedOptions o = {0};
  PrimFunc *g = sched_prefix(&a, f, k, d, &o);
  char *t = g ? engine_prim_text(g, false) : NULL;
  arena_free(&a);
  return t;
}

char *engine_sched_help(void) {
  StrBuf b = {0};
  for (int i = 0; i < sched_prim_count(); i++) {
    const SchedPrimInfo *p = sched_prim_info(i);
    sb_printf(&b, "  %s(%s)\n      %s\n", p->name, p->args, p->help);
  }
  sb_printf(&b, "tensor intrinsics (tensorize's INTRIN):\n");
  for (int i = 0; i < sched_intrin_count(); i++)
    sb_printf(&b, "  \"%s\"\n      %s\n", sched_intrin_name(i), sched_intrin_help(i));
  return sb_take(&b);
}

/* ───────────────────────── timing a prim function ───────────────────────── */

enum { RUN_SEED = 3, SIZE_VALUE = 7 };

struct PrimRun {
  const PrimFunc *f;
  const JitKernel *k; /* NULL: the TIR interpreter */
  RtTensor *args[64];
  double flops, bytes;
};

void engine_prim_run_free(PrimRun *r) {
  if (!r) return;
  for (int i = 0; i < r->f->nparams; i++) rt_tensor_release(r->args[i]);
  free(r);
}

PrimRun *engine_prim_run_new(const Engine *e, const PrimFunc *f, char *err, size_t n) {
  if (f->nparams > 64) return snprintf(err, n, "more than 64 buffers"), NULL;
  PrimRun *r = calloc(1, sizeof *r);
  if (!r) abort();
  r->f = f = prim_to_run(f);
  if (!sched_random_args(f, RUN_SEED, r->args, err, n)) return engine_prim_run_free(r), NULL;
  TirError te = {0};
  if (engine_options(e)->exec == EXEC_JIT && jit_available() && !(r->k = jit_get(f, &te))) {
    snprintf(err, n, "%s", te.msg);
    return engine_prim_run_free(r), NULL;
  }
  int64_t sizes[64];
  for (int i = 0; i < f->nsizevars && i < 64; i++) sizes[i] = SIZE_VALUE;
  r->flops = profile_prim_flops(f, sizes);
  for (int i = 0; i < f->nparams; i++)
    r->bytes += (double)r->args[i]->numel * dtype_bytes(r->args[i]->dtype);
  return r;
}

bool engine_prim_run(PrimRun *r, char *err, size_t n) {
  TirError te = {0};
  bool ok = r->k ? jit_run(r->k, r->args, r->f->nparams, &te)
                 : tir_interp_run_func(r->f, r->args, r->f->nparams, &te);
  if (!ok) snprintf(err, n, "%s", te.msg);
  return ok;
}

double engine_prim_run_flops(const PrimRun *r) { return r->flops; }
double engine_prim_run_bytes(const PrimRun *r) { return r->bytes; }
