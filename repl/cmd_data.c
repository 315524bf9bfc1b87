/* cmd_data.c — the data commands: :bind (BindParams), :save, :load-tensor,
 * :extern, and `rly --params FILE` (repl_bind_file).  Their file names are
 * relative to the directory of the script they are in (paths.c).
 *
 * Tensor files are read and written by io/tensor_io.h; binding goes
 * through the BindParams pass (passes/bind_params.c), so the session keeps
 * the previous module on the undo stack like :pass does.  Constants made
 * from a file live in the inputs arena (kept: the module and run-time
 * values point at them).
 *
 * The evaluator's interface gives values only as text, so :save reads a
 * variable's tensors by evaluating `call_tir("rly.capture", (%x, ...), ...)`
 * with a private external function registered for the duration of the
 * command; :load-tensor binds a variable by evaluating the loaded tensor as
 * a constant, then records the variable as `let` does. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "engine/inspect.h"
#include "io/tensor_io.h"
#include "passes/pass.h"
#include "passes/rewrite.h"
#include "repl/repl.h"

enum {
  META_INLINE_MAX = 16, /* constants with more elements print as meta[relay.Constant][i] */
};

/* ───────────────────────── argument words ───────────────────────── */

/* Splits args at blanks; "double quotes" keep blanks in a word. */
bool repl_split_words(Session *s, const char *args, Span where, Words *out) {
  out->n = 0;
  size_t i = 0, n = strlen(args);
  while (i < n) {
    while (i < n && isspace((unsigned char)args[i])) i++;
    if (i == n) break;
    bool q = args[i] == '"';
    size_t st = i + q, e = st;
    while (e < n && (q ? args[e] != '"' : !isspace((unsigned char)args[e]))) e++;
    if (out->n == REPL_MAX_WORDS) {
      session_error(s, where, NULL, "too many arguments (at most %d)", REPL_MAX_WORDS);
      return false;
    }
    out->sp[out->n] = span_make(where.off + (uint32_t)i, e + q - i);
    out->w[out->n] = strndup(args + st, e - st);
    if (!out->w[out->n++]) rly_oom();
    i = e + (q && e < n);
  }
  return true;
}

void repl_free_words(Words *w) {
  for (int i = 0; i < w->n; i++) free(w->w[i]);
  w->n = 0;
}

/* Word i is a path: beside the script the command comes from (paths.c). */
static void word_path(Session *s, Words *w, int i) {
  char *p = session_path(s, w->w[i], w->sp[i]);
  free(w->w[i]);
  w->w[i] = p;
}

/* ───────────────────────── binding a file ───────────────────────── */

typedef struct Bound {
  int n;
  const char **names;
  Tensor **values;
} Bound;

static bool load_constants(const char *path, Arena *a, DiagCtx *d, Span where, Bound *b) {
  TioFile f;
  char err[RT_ERR_LEN];
  if (!tio_load(path, &f, err, sizeof err)) {
    diag_error(d, where, "%s", err);
    return false;
  }
  b->n = f.n;
  b->names = ARENA_ARRAY(a, const char *, f.n + 1);
  b->values = ARENA_ARRAY(a, Tensor *, f.n + 1);
  for (int i = 0; i < f.n; i++) {
    b->names[i] = arena_strdup(a, f.entries[i].name);
    b->values[i] = rt_tensor_to_ir(a, f.entries[i].t);
  }
  tio_file_free(&f);
  return true;
}

/* where: the command; fn_sp, file_sp: its two words (for errors about them). */
static Module *bind_file(Module *m, Arena *a, DiagCtx *d, const char *fn, const char *path,
                         Span where, Span fn_sp, Span file_sp, Bound *bp) {
  Bound b;
  if (!module_func(m, fn)) {
    diag_error(d, fn_sp, "no function @%s to bind parameters of", fn);
    return NULL;
  }
  if (!load_constants(path, a, d, file_sp, &b)) return NULL;
  BindParamsSpec spec = {fn, b.n, b.names, b.values, path, where};
  Module *out = pass_bind(&spec, m, a, d, NULL);
  if (out && !engine_check_module(out, d)) {
    diag_note(d, where, "the module with @%s's parameters bound from %s does not type-check", fn,
              path);
    module_free(out);
    out = NULL;
  }
  if (bp) *bp = b;
  return out;
}

Module *repl_bind_file(Module *m, Arena *a, DiagCtx *d, const char *fn, const char *path,
                       Span where) {
  return bind_file(m, a, d, fn, path, where, where, where, NULL);
}

/* ───────────────────────── printing with meta ───────────────────────── */

typedef struct MetaCtx {
  int n;
  PtrVec consts; /* Tensor * in numbering order */
} MetaCtx;

static Expr *meta_pre(Rewriter *rw, Expr *e) {
  MetaCtx *mc = rw->user;
  if (e->kind != EX_CONST || e->u.konst.value->numel <= META_INLINE_MAX) return NULL;
  vec_push(&mc->consts, e->u.konst.value);
  return expr_global(rw->a, arena_printf(rw->a, "__rly_meta_%d", mc->n++), e->span);
}

/* "@__rly_meta_N" → "meta[relay.Constant][N]". */
static void put_meta_text(StrBuf *out, const char *text) {
  static const char tag[] = "@__rly_meta_";
  const char *p = text, *q;
  while ((q = strstr(p, tag))) {
    sb_putn(out, p, (size_t)(q - p));
    q += sizeof tag - 1;
    const char *d = q;
    while (isdigit((unsigned char)*q)) q++;
    sb_printf(out, "meta[relay.Constant][%.*s]", (int)(q - d), d);
    p = q;
  }
  sb_puts(out, p);
}

static const char *entry_of(const Bound *b, const Tensor *t) {
  for (int i = 0; i < b->n; i++)
    if (b->values[i] == t) return b->names[i];
  return NULL;
}

/* Prints @fn of m; large constants as meta[relay.Constant][i] with a legend. */
static void print_with_meta(const Module *m, const char *fn, const Bound *b, const char *path) {
  FuncDef *f = module_func(m, fn);
  Arena a;
  arena_init(&a);
  MetaCtx mc = {0};
  Rewriter rw = {.a = &a, .pre = meta_pre, .user = &mc};
  FuncDef shown = *f;
  shown.fn = rw_function(&rw, f->fn);
  StrBuf text = {0}, out = {0};
  print_func_def_to(&text, m, &shown, (PrintOptions){0});
  put_meta_text(&out, text.data);
  fputs(out.data, stdout);
  if (out.len && out.data[out.len - 1] != '\n') putchar('\n');
  for (size_t i = 0; i < mc.consts.len; i++) {
    const Tensor *t = mc.consts.items[i];
    char shape[256];
    const char *from = b ? entry_of(b, t) : NULL;
    printf("// meta[relay.Constant][%zu]: Tensor[%s, %s]", i,
           rt_shape_str(shape, sizeof shape, t->ndim, t->shape), dtype_name(t->dtype));
    if (from) printf(" = %s['%s']", path, from);
    putchar('\n');
  }
  ptrmap_free(&rw.subst);
  vec_free(&mc.consts);
  sb_free(&text), sb_free(&out);
  arena_free(&a);
}

/* ───────────────────────── :bind ───────────────────────── */

static RunStatus bind_usage(Session *s, Span where) {
  session_error(s, where, "usage: :bind @f FILE.npz|FILE.safetensors",
                ":bind needs a function and a tensor file");
  return RUN_ERROR;
}

/* `:bind @f FILE`: runs BindParams on @f with the file's tensors and makes
 * the result the session's module (one undo step), printing the new @f. */
RunStatus repl_cmd_bind(Session *s, const char *args, Span where) {
  Words w;
  if (!repl_split_words(s, args, where, &w)) return RUN_ERROR;
  if (w.n != 2 || w.w[0][0] != '@' || !w.w[0][1]) return repl_free_words(&w), bind_usage(s, where);
  word_path(s, &w, 1);
  const char *fn = w.w[0] + 1, *path = w.w[1];
  Bound b = {0};
  Module *out =
      bind_file(session_module(s), &s->inputs, &s->diag, fn, path, where, w.sp[0], w.sp[1], &b);
  session_render(s);
  if (!out) return repl_free_words(&w), RUN_ERROR;
  int before = module_func(session_module(s), fn)->fn->nparams,
      after = module_func(out, fn)->fn->nparams;
  print_with_meta(out, fn, &b, path);
  session_keep_module(s, out);
  printf("bound %d parameter%s of @%s from %s; kept (undo with :undo)\n", before - after,
         before - after == 1 ? "" : "s", fn, path);
  repl_free_words(&w);
  return RUN_OK;
}

/* ───────────────────────── :import ───────────────────────── */

static bool valid_global(const char *w) {
  if (w[0] != '@' || !(isalpha((unsigned char)w[1]) || w[1] == '_')) return false;
  for (const char *p = w + 2; *p; p++)
    if (!isalnum((unsigned char)*p) && *p != '_') return false;
  return true;
}

/* "imported m.onnx as @main: 3 inputs, 62 weights (11689512 values) bound
 * as constants" and the function's type. */
static void import_summary(const Module *m, const char *fn, const char *path,
                           const OnnxWeights *w) {
  FuncDef *f = module_func(m, fn);
  int64_t values = 0;
  for (int i = 0; i < w->n; i++) values += w->values[i]->numel;
  printf("imported %s as @%s: %d input%s, %d weight%s (%lld values) bound as constants\n", path, fn,
         f->fn->nparams, f->fn->nparams == 1 ? "" : "s", w->n, w->n == 1 ? "" : "s",
         (long long)values);
  char *line = f->ty ? session_def_line("", fn, f->ty) : NULL;
  if (line) puts(line);
  free(line);
}

/* "fn (...) -> ..." or "global of T" for the definition @fn replaces, or
 * NULL when the name is new (malloc'd). */
static char *replaced_text(const Module *m, const char *fn) {
  const Def *d = module_lookup(m, fn);
  if (!d) return NULL;
  StrBuf b = {0};
  if (d->kind == DEF_FUNC && d->u.func->ty)
    print_type_to(&b, d->u.func->ty);
  else if (d->kind == DEF_GLOBAL)
    sb_puts(&b, "a state global of "), print_type_to(&b, d->u.global->type);
  else
    sb_puts(&b, d->kind == DEF_PRIM ? "a prim function" : "a function");
  return sb_take(&b);
}

/* `:import FILE.onnx [as @name]`: the model's function, its weights bound
 * as constants, replaces the session's module (one undo step); the
 * definition of that name it replaces, if any, is named with its type.  A failed
 * import leaves the session as it was and releases what it built. */
RunStatus repl_cmd_import(Session *s, const char *args, Span where) {
  Words w;
  if (!repl_split_words(s, args, where, &w)) return RUN_ERROR;
  if (w.n != 1 && !(w.n == 3 && strcmp(w.w[1], "as") == 0 && valid_global(w.w[2]))) {
    repl_free_words(&w);
    session_error(s, where, "usage: :import FILE.onnx [as @name]",
                  ":import needs a model file, and optionally `as @name`");
    return RUN_ERROR;
  }
  const char *fn = w.n == 3 ? w.w[2] + 1 : "main";
  word_path(s, &w, 0);
  ArenaMark mark = arena_mark(&s->inputs);
  uint64_t gen = s->kept_gen;
  OnnxWeights wts;
  Module *out = engine_import_onnx(repl_engine(s->ev), session_module(s), &s->inputs, w.w[0], fn,
                                   true, w.sp[0], &wts);
  session_render(s);
  if (!out) {
    if (s->kept_gen == gen) arena_release(&s->inputs, mark);
    repl_free_words(&w);
    return RUN_ERROR;
  }
  import_summary(out, fn, w.w[0], &wts);
  char *was = replaced_text(session_module(s), fn);
  if (was) printf("replaced @%s (was %s)\n", fn, was);
  free(was);
  session_keep_module(s, out);
  s->kept_gen++;
  repl_free_words(&w);
  return RUN_OK;
}

/* ───────────────────────── :load-tensor ───────────────────────── */

/* The entry named by KEY, or the only entry when no KEY is given; the
 * error lists the file's entries so the user can pick one. */
static const TioEntry *pick_entry(Session *s, const TioFile *f, const Words *w, Span where) {
  if (w->n == 3) {
    const TioEntry *e = tio_find(f, w->w[2]);
    if (!e) {
      StrBuf keys = {0};
      for (int i = 0; i < f->n; i++) sb_printf(&keys, "%s'%s'", i ? ", " : "", f->entries[i].name);
      session_error(s, w->sp[2], NULL, "%s has no entry '%s' (its entries: %s)", w->w[1], w->w[2],
                    f->n ? keys.data : "none");
      sb_free(&keys);
    }
    return e;
  }
  if (f->n == 1) return &f->entries[0];
  StrBuf keys = {0};
  for (int i = 0; i < f->n; i++) sb_printf(&keys, "%s%s", i ? " " : "", f->entries[i].name);
  session_error(s, where, NULL, "%s has %d entries; name one: %s", w->w[1], f->n,
                f->n ? keys.data : "(none)");
  sb_free(&keys);
  return NULL;
}

static Type *tensor_type_of(Arena *a, const Tensor *t, Span sp) {
  Dim *dims = ARENA_ARRAY(a, Dim, t->ndim + 1);
  for (int i = 0; i < t->ndim; i++) dims[i] = (Dim){DIM_CONST, t->shape[i], NULL};
  return type_tensor(a, t->dtype, t->ndim, dims, sp);
}

/* Evaluates the constant and binds it to a new session variable. */
static bool bind_tensor(Session *s, const char *name, const RtTensor *t, Span sp) {
  Tensor *c = rt_tensor_to_ir(&s->inputs, t);
  Type *ty = tensor_type_of(&s->inputs, c, sp);
  Var *v = var_new(&s->inputs, arena_strdup(&s->inputs, name), ty, sp);
  Expr *e = expr_const(&s->inputs, c, sp);
  char *text = NULL;
  if (!engine_check_expr(session_module(s), e, &s->diag) ||
      !repl_eval(s->ev, session_module(s), e, v, &text)) {
    session_render(s);
    return false;
  }
  free(text);
  engine_var_set(session_engine(s), v);
  return true;
}

/* `:load-tensor %x FILE [KEY]`: binds a session variable to a tensor from
 * a file; quiet like `let` unless types are shown. */
RunStatus repl_cmd_load_tensor(Session *s, const char *args, Span where) {
  Words w;
  if (!repl_split_words(s, args, where, &w)) return RUN_ERROR;
  if ((w.n != 2 && w.n != 3) || w.w[0][0] != '%' || !w.w[0][1]) {
    repl_free_words(&w);
    session_error(s, where, "usage: :load-tensor %x FILE [KEY]",
                  ":load-tensor needs a variable and a tensor file");
    return RUN_ERROR;
  }
  TioFile f;
  char err[RT_ERR_LEN];
  RunStatus st = RUN_ERROR;
  word_path(s, &w, 1);
  if (!tio_load(w.w[1], &f, err, sizeof err)) {
    session_error(s, w.sp[1], NULL, "%s", err);
    return repl_free_words(&w), RUN_ERROR;
  }
  const TioEntry *e = pick_entry(s, &f, &w, where);
  if (e && bind_tensor(s, w.w[0] + 1, e->t, w.sp[0])) {
    char shape[256];
    if (s->show_types) /* silent otherwise, like `let` */
      printf("%s : Tensor[%s, %s]\n", w.w[0],
             rt_shape_str(shape, sizeof shape, e->t->ndim, e->t->shape), dtype_name(e->t->dtype));
    st = RUN_OK;
  }
  tio_file_free(&f);
  repl_free_words(&w);
  return st;
}

/* ───────────────────────── :save ───────────────────────── */

typedef struct Capture {
  TioFile *file;
  const char **names; /* one per captured input */
  const DType *dtypes;
  int n;
  bool ok;
  char err[RT_ERR_LEN];
} Capture;

/* The private external function behind :save: copies its inputs (all but
 * the last argument, the unused output). */
static int capture_fn(DLTensor *a, int n, void *ctx, char *err, size_t errn) {
  Capture *c = ctx;
  for (int i = 0; i < n - 1 && i < c->n; i++) {
    RtTensor *t = rt_tensor_new(c->dtypes[i], a[i].ndim, a[i].shape, err, errn);
    if (!t) return 1;
    if (rt_tensor_nbytes(t)) memcpy(t->data, a[i].data, rt_tensor_nbytes(t));
    bool ok = tio_add(c->file, c->names[i], t, err, errn);
    rt_tensor_release(t);
    if (!ok) return 1;
  }
  c->ok = true;
  return 0;
}

typedef struct SaveList {
  StrBuf expr;  /* the tuple of operands */
  PtrVec names; /* malloc'd entry names */
  DType dtypes[REPL_MAX_WORDS * 4];
  int n;
} SaveList;

static bool add_operand(Session *s, SaveList *l, const char *text, const char *name, const Type *t,
                        Span sp) {
  if (t->kind != TY_TENSOR) return false;
  if (l->n == REPL_MAX_WORDS * 4) {
    session_error(s, sp, NULL, "too many tensors for one :save");
    return false;
  }
  sb_printf(&l->expr, "%s%s", l->n ? ", " : "", text);
  char *copy = strdup(name);
  if (!copy) rly_oom();
  vec_push(&l->names, copy);
  l->dtypes[l->n++] = t->u.tensor.dtype;
  return true;
}

/* %x (a tensor: entry "x") or a tuple of tensors (entries "x_0", "x_1", ...). */
static bool add_var(Session *s, SaveList *l, const char *word, Span sp) {
  Var *v = word[0] == '%' ? engine_var(session_engine(s), word + 1) : NULL;
  if (!v || !v->annot) {
    session_error(s, sp, "`:save %x [%y ...] FILE` saves session variables",
                  "`%s` is not a session variable", word);
    return false;
  }
  const Type *t = v->annot;
  char text[300], name[300];
  if (t->kind == TY_TUPLE) {
    for (int i = 0; i < t->u.tuple.n; i++) {
      snprintf(text, sizeof text, "%s.%d", word, i);
      snprintf(name, sizeof name, "%s_%d", word + 1, i);
      if (!add_operand(s, l, text, name, t->u.tuple.fields[i], sp)) goto bad;
    }
    return true;
  }
  if (add_operand(s, l, word, word + 1, t, sp)) return true;
bad:;
  char *ty = print_type(t);
  session_error(s, sp, NULL, "%s is a %s, not a tensor or a tuple of tensors", word, ty);
  free(ty);
  return false;
}

/* Evaluates the capture call over the operands; fills l's file. */
static bool capture(Session *s, SaveList *l, TioFile *file, Span where) {
  Capture c = {file, (const char **)l->names.items, l->dtypes, l->n, false, ""};
  StrBuf src = {0};
  sb_printf(&src, "call_tir(\"rly.capture\", (%s%s), shape=[0], dtype=\"uint8\")", l->expr.data,
            l->n == 1 ? "," : "");
  uint32_t id = diag_add_source(&s->diag, "<:save>", src.data, src.len);
  Span sp = diag_span(&s->diag, id, 0, (uint32_t)src.len);
  sb_free(&src);
  Module view;
  Expr *e = session_parse_expr(s, sp, &s->inputs, &view);
  char *text = NULL;
  engine_register_extern("rly.capture", capture_fn, &c);
  bool ok = e && repl_eval(s->ev, session_module(s), e, NULL, &text) && c.ok;
  engine_register_extern("rly.capture", NULL, NULL);
  free(text);
  if (!ok) {
    session_render(s);
    session_error(s, where, NULL, "could not read the variables' values");
  }
  return ok;
}

/* `:save %x [%y ...] FILE`: writes session tensors, the format chosen by
 * the file's extension; all variables are checked before anything is written. */
RunStatus repl_cmd_save(Session *s, const char *args, Span where) {
  Words w;
  if (!repl_split_words(s, args, where, &w)) return RUN_ERROR;
  if (w.n < 2) {
    repl_free_words(&w);
    session_error(s, where, "usage: :save %x [%y ...] FILE.npy|.npz|.safetensors",
                  ":save needs variables and a file name");
    return RUN_ERROR;
  }
  word_path(s, &w, w.n - 1);
  const char *path = w.w[w.n - 1];
  TioFormat fmt = tio_format_of_path(path);
  SaveList l = {0};
  TioFile file = {0};
  bool ok = fmt != TIO_UNKNOWN;
  if (!ok)
    session_error(s, w.sp[w.n - 1], NULL,
                  "cannot tell the format of '%s': use .npy, .npz or "
                  ".safetensors",
                  path);
  for (int i = 0; ok && i < w.n - 1; i++) ok = add_var(s, &l, w.w[i], w.sp[i]);
  if (ok && fmt == TIO_NPY && l.n != 1) {
    session_error(s, where, "use .npz or .safetensors for several tensors",
                  "a .npy file holds one tensor, not %d", l.n);
    ok = false;
  }
  ok = ok && capture(s, &l, &file, where);
  char err[RT_ERR_LEN];
  if (ok && !tio_save(path, fmt, &file, err, sizeof err)) {
    session_error(s, w.sp[w.n - 1], NULL, "%s", err);
    ok = false;
  }
  if (ok) printf("saved %d tensor%s to %s\n", file.n, file.n == 1 ? "" : "s", path);
  tio_file_free(&file);
  for (size_t i = 0; i < l.names.len; i++) free(l.names.items[i]);
  vec_free(&l.names);
  sb_free(&l.expr);
  repl_free_words(&w);
  return ok ? RUN_OK : RUN_ERROR;
}

/* ───────────────────────── :extern ───────────────────────── */

RunStatus repl_cmd_extern(Session *s, const char *args, Span where) {
  Words w;
  if (!repl_split_words(s, args, where, &w)) return RUN_ERROR;
  if (w.n != 3) {
    repl_free_words(&w);
    session_error(s, where, "usage: :extern NAME LIB.so SYMBOL",
                  ":extern needs a name, a shared library and a symbol");
    return RUN_ERROR;
  }
  char err[RT_ERR_LEN];
  if (strchr(w.w[1], '/')) word_path(s, &w, 1); /* a bare name: dlopen's search */
  bool ok = engine_extern_load(w.w[0], w.w[1], w.w[2], err, sizeof err);
  if (ok)
    printf("registered %s = %s from %s\n", w.w[0], w.w[2], w.w[1]);
  else
    session_error(s, where, NULL, "%s", err);
  repl_free_words(&w);
  return ok ? RUN_OK : RUN_ERROR;
}
