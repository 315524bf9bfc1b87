/* cmd_data.c — the data commands: :bind (BindParams), :save, :load-tensor,
 * and :extern.  Their file names are relative to the directory of the
 * script they are in (paths.c).
 *
 * Tensor files are read and written through the engine (engine/inspect.h,
 * as IR tensors); binding goes through its engine_bind_file (the BindParams
 * pass, also `rly --params FILE`), so the session keeps the previous module
 * on the undo stack like :pass does.  Constants made
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

/* ───────────────────────── printing with meta ───────────────────────── */

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

static const char *entry_of(const EngineTensors *b, const Tensor *t) {
  for (int i = 0; i < b->n; i++)
    if (b->values[i] == t) return b->names[i];
  return NULL;
}

/* Prints @fn of m; large constants as meta[relay.Constant][i] with a legend. */
static void print_with_meta(const Module *m, const char *fn, const EngineTensors *b,
                            const char *path) {
  FuncDef *f = module_func(m, fn);
  Arena a;
  arena_init(&a);
  PtrVec consts = {0}; /* Tensor * in numbering order */
  FuncDef shown = *f;
  shown.fn = engine_meta_function(&a, f->fn, META_INLINE_MAX, &consts);
  StrBuf text = {0}, out = {0};
  print_func_def_to(&text, m, &shown, (PrintOptions){0});
  put_meta_text(&out, text.data);
  fputs(out.data, stdout);
  if (out.len && out.data[out.len - 1] != '\n') putchar('\n');
  for (size_t i = 0; i < consts.len; i++) {
    const Tensor *t = consts.items[i];
    char shape[256];
    const char *from = b ? entry_of(b, t) : NULL;
    printf("// meta[relay.Constant][%zu]: Tensor[%s, %s]", i,
           engine_shape_text(shape, sizeof shape, t->ndim, t->shape), dtype_name(t->dtype));
    if (from) printf(" = %s['%s']", path, from);
    putchar('\n');
  }
  vec_free(&consts);
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
  EngineTensors b = {0};
  Module *out = engine_bind_file(session_module(s), &s->inputs, &s->diag, fn, path, where, w.sp[0],
                                 w.sp[1], &b);
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
 * error lists the file's entries so the user can pick one.  -1 after it. */
static int pick_entry(Session *s, const EngineTensors *f, const Words *w, Span where) {
  if (w->n == 3) {
    for (int i = 0; i < f->n; i++)
      if (strcmp(f->names[i], w->w[2]) == 0) return i;
    StrBuf keys = {0};
    for (int i = 0; i < f->n; i++) sb_printf(&keys, "%s'%s'", i ? ", " : "", f->names[i]);
    session_error(s, w->sp[2], NULL, "%s has no entry '%s' (its entries: %s)", w->w[1], w->w[2],
                  f->n ? keys.data : "none");
    sb_free(&keys);
    return -1;
  }
  if (f->n == 1) return 0;
  StrBuf keys = {0};
  for (int i = 0; i < f->n; i++) sb_printf(&keys, "%s%s", i ? " " : "", f->names[i]);
  session_error(s, where, NULL, "%s has %d entries; name one: %s", w->w[1], f->n,
                f->n ? keys.data : "(none)");
  sb_free(&keys);
  return -1;
}

static Type *tensor_type_of(Arena *a, const Tensor *t, Span sp) {
  Dim *dims = ARENA_ARRAY(a, Dim, t->ndim + 1);
  for (int i = 0; i < t->ndim; i++) dims[i] = (Dim){DIM_CONST, t->shape[i], NULL};
  return type_tensor(a, t->dtype, t->ndim, dims, sp);
}

/* Evaluates the constant and binds it to a new session variable. */
static bool bind_tensor(Session *s, const char *name, const Tensor *t, Span sp) {
  Tensor *c = tensor_new(&s->inputs, t->dtype, t->ndim, t->shape);
  if (tensor_nbytes(t)) memcpy(c->data, t->data, tensor_nbytes(t));
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
  EngineTensors f;
  Arena a; /* the file's tensors; the one bound is copied into the inputs */
  char err[RT_ERR_LEN];
  RunStatus st = RUN_ERROR;
  word_path(s, &w, 1);
  arena_init(&a);
  if (!engine_tensors_load(w.w[1], &a, &f, err, sizeof err)) {
    session_error(s, w.sp[1], NULL, "%s", err);
    arena_free(&a);
    return repl_free_words(&w), RUN_ERROR;
  }
  int e = pick_entry(s, &f, &w, where);
  if (e >= 0 && bind_tensor(s, w.w[0] + 1, f.values[e], w.sp[0])) {
    const Tensor *t = f.values[e];
    char shape[256];
    if (s->show_types) /* silent otherwise, like `let` */
      printf("%s : Tensor[%s, %s]\n", w.w[0],
             engine_shape_text(shape, sizeof shape, t->ndim, t->shape), dtype_name(t->dtype));
    st = RUN_OK;
  }
  arena_free(&a);
  repl_free_words(&w);
  return st;
}

/* ───────────────────────── :save ───────────────────────── */

typedef struct Capture {
  Arena *a;           /* the copies */
  PtrVec vals;        /* Tensor *, one per captured input */
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
    Tensor *t = tensor_new(c->a, c->dtypes[i], a[i].ndim, a[i].shape);
    if (tensor_nbytes(t)) memcpy(t->data, a[i].data, tensor_nbytes(t));
    vec_push(&c->vals, t);
  }
  (void)err, (void)errn;
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

/* Evaluates the capture call over the operands; fills *out (in a). */
static bool capture(Session *s, SaveList *l, Arena *a, EngineTensors *out, Span where) {
  Capture c = {a, {0}, (const char **)l->names.items, l->dtypes, l->n, false, ""};
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
  out->n = (int)c.vals.len;
  out->names = c.names;
  out->values = ARENA_ARRAY(a, Tensor *, c.vals.len + 1);
  for (size_t i = 0; i < c.vals.len; i++) out->values[i] = c.vals.items[i];
  vec_free(&c.vals);
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
  int capacity = engine_tensors_capacity(path);
  SaveList l = {0};
  EngineTensors file = {0};
  Arena a;
  arena_init(&a);
  bool ok = capacity > 0;
  if (!ok)
    session_error(s, w.sp[w.n - 1], NULL,
                  "cannot tell the format of '%s': use .npy, .npz or "
                  ".safetensors",
                  path);
  for (int i = 0; ok && i < w.n - 1; i++) ok = add_var(s, &l, w.w[i], w.sp[i]);
  if (ok && capacity == 1 && l.n != 1) {
    session_error(s, where, "use .npz or .safetensors for several tensors",
                  "a .npy file holds one tensor, not %d", l.n);
    ok = false;
  }
  ok = ok && capture(s, &l, &a, &file, where);
  char err[RT_ERR_LEN];
  if (ok && !engine_tensors_save(path, &file, err, sizeof err)) {
    session_error(s, w.sp[w.n - 1], NULL, "%s", err);
    ok = false;
  }
  if (ok) printf("saved %d tensor%s to %s\n", file.n, file.n == 1 ? "" : "s", path);
  arena_free(&a);
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
