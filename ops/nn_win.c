/* nn_win.c — the attribute readers of ops/nn_int.h: spatial attributes and
 * window sizes of convolutions and pools, layouts as letter positions, and
 * lists of int pairs.  Messages name the op, the attribute and the values. */
#include <stdio.h>
#include <string.h>

#include "ops/nn_int.h"

void nn_call_ctx(RelCtx *cx, Arena *a, const Expr *call) {
  memset(cx, 0, sizeof *cx);
  cx->arena = a;
  cx->op = ops_get(call->u.call.fn->u.op.index);
  cx->op_name = cx->op ? cx->op->name : "op";
}

const char *nn_dim_name(int S, int i) {
  static const char *const names[] = {"depth", "height", "width"};
  return names[NN_MAX_SPATIAL - S + i];
}

/* "[1, 0]" for messages. */
static const char *ints_str(RelCtx *cx, const int64_t *v, int n) {
  Dim d[TENSOR_MAX_RANK];
  for (int i = 0; i < n && i < TENSOR_MAX_RANK; i++) d[i] = dim_const(v[i]);
  const char *s = rel_shape_str(cx, n < TENSOR_MAX_RANK ? n : TENSOR_MAX_RANK, d);
  char *t = arena_strdup(cx->arena, s);
  t[0] = '[', t[strlen(t) - 1] = ']';
  return t;
}

bool nn_spatial_ints(RelCtx *cx, const Attrs *attrs, const char *key, int S, int64_t min,
                     int64_t *out) {
  int64_t v[8];
  int n = rel_attr_ints(cx, attrs, key, v, 8);
  if (n < 0 || cx->err[0]) return false;
  if (n != 1 && n != S) {
    if (S == 1)
      rel_fail(cx, "%s: `%s` must have 1 value, got %d", cx->op_name, key, n);
    else
      rel_fail(cx, "%s: `%s` must have 1 or %d values, got %d", cx->op_name, key, S, n);
    return false;
  }
  for (int i = 0; i < S; i++) {
    out[i] = v[n == 1 ? 0 : i];
    if (out[i] < min) {
      rel_fail(cx, "%s: `%s` values must be %s, got %s", cx->op_name, key,
               min > 0 ? "positive" : "non-negative", ints_str(cx, v, n));
      return false;
    }
  }
  return true;
}

/* 1, S or 2S values spread into per-dim before / after amounts. */
bool nn_padding(RelCtx *cx, const Attrs *attrs, int S, int64_t *lo, int64_t *hi) {
  int64_t v[8];
  int n = rel_attr_ints(cx, attrs, "padding", v, 8);
  if (n < 0 || cx->err[0]) return false;
  if (n != 1 && n != S && n != 2 * S) {
    if (S == 1)
      rel_fail(cx, "%s: padding must have 1 or 2 values, got %d", cx->op_name, n);
    else
      rel_fail(cx, "%s: padding must have 1, %d or %d values, got %d", cx->op_name, S, 2 * S, n);
    return false;
  }
  for (int i = 0; i < S; i++) {
    lo[i] = n == 1 ? v[0] : v[i];
    hi[i] = n == 1 ? v[0] : n == S ? v[i] : v[S + i];
  }
  for (int i = 0; i < n; i++)
    if (v[i] < 0) {
      rel_fail(cx, "%s: padding must not be negative, got %lld", cx->op_name, (long long)v[i]);
      return false;
    }
  return true;
}

bool nn_window_attrs(RelCtx *cx, const Attrs *attrs, NnWindow *w) {
  return nn_spatial_ints(cx, attrs, "strides", w->S, 1, w->stride) &&
         nn_spatial_ints(cx, attrs, "dilation", w->S, 1, w->dil) &&
         nn_padding(cx, attrs, w->S, w->lo, w->hi);
}

int64_t nn_window_size(const NnWindow *w, int i, int64_t in) {
  int64_t num = in + w->lo[i] + w->hi[i] - (w->dil[i] * (w->k[i] - 1) + 1);
  if (w->ceil_mode) num += w->stride[i] - 1;
  return num / w->stride[i] + 1;
}

int64_t nn_window_size_transposed(const NnWindow *w, int i, int64_t in) {
  return w->stride[i] * (in - 1) + w->dil[i] * (w->k[i] - 1) + 1 - w->lo[i] - w->hi[i] +
         w->out_pad[i];
}

static bool overflow(RelCtx *cx) {
  rel_fail(cx, "%s: window sizes overflow", cx->op_name);
  return false;
}

/* The sizes a window's arithmetic may take without overflow: every
 * attribute and dim below 2^31. */
static bool small(const NnWindow *w, int i, int64_t in) {
  const int64_t lim = (int64_t)1 << 31;
  return in < lim && w->k[i] < lim && w->stride[i] < lim && w->dil[i] < lim && w->lo[i] < lim &&
         w->hi[i] < lim && w->out_pad[i] < lim;
}

/* Checks the window fits the padded input (a constant dim), then sizes it. */
bool nn_window_out(RelCtx *cx, const NnWindow *w, int i, Dim in, Dim *out) {
  if (in.kind != DIM_CONST) {
    bool same = w->k[i] == 1 && w->stride[i] == 1 && w->lo[i] + w->hi[i] == 0;
    *out = same ? in : dim_any();
    return true;
  }
  if (!small(w, i, in.value)) return overflow(cx);
  int64_t eff = w->dil[i] * (w->k[i] - 1) + 1, padded = in.value + w->lo[i] + w->hi[i];
  if (padded < eff) {
    rel_fail(cx,
             "%s: the %s window (size %lld, dilation %lld) is larger than the padded input (%lld)",
             cx->op_name, nn_dim_name(w->S, i), (long long)w->k[i], (long long)w->dil[i],
             (long long)padded);
    return false;
  }
  *out = dim_const(nn_window_size(w, i, in.value));
  return true;
}

/* An empty input gives an empty output; otherwise the size must not be
 * negative (padding larger than the full output). */
bool nn_window_out_transposed(RelCtx *cx, const NnWindow *w, int i, Dim in, Dim *out) {
  if (in.kind != DIM_CONST) {
    bool same = w->k[i] == 1 && w->stride[i] == 1 && w->lo[i] + w->hi[i] == 0 && !w->out_pad[i];
    *out = same ? in : dim_any();
    return true;
  }
  if (!small(w, i, in.value)) return overflow(cx);
  if (in.value == 0) {
    *out = dim_const(0);
    return true;
  }
  int64_t n = nn_window_size_transposed(w, i, in.value);
  if (n < 0) {
    rel_fail(cx, "%s: padding %lld + %lld is larger than the %s of the full output (%lld)",
             cx->op_name, (long long)w->lo[i], (long long)w->hi[i], nn_dim_name(w->S, i),
             (long long)(n + w->lo[i] + w->hi[i]));
    return false;
  }
  *out = dim_const(n);
  return true;
}

/* ───────────────────────────── layouts ───────────────────────────── */

/* One axis of a layout at *s: a capital letter, or a block of one
 * ("16c": digits then the lowercase of a capital elsewhere in the layout,
 * not one of `need`); 0 when there is none.  *s moves past it. */
static char layout_axis(const char *layout, const char **s, const char *need) {
  const char *p = *s;
  if (*p >= 'A' && *p <= 'Z') return *s = p + 1, *p;
  while (*p >= '0' && *p <= '9') p++;
  if (p == *s || *p < 'a' || *p > 'z' || !strchr(layout, *p - 'a' + 'A') ||
      strchr(need, *p - 'a' + 'A'))
    return 0;
  *s = p + 1;
  return *p;
}

/* Every axis distinct, and every letter of `need` present. */
int nn_layout_letters(RelCtx *cx, const char *layout, const char *key, const char *need, int *pos) {
  char axes[TENSOR_MAX_RANK + 1] = {0};
  int n = 0;
  bool ok = layout[0] != 0;
  for (const char *s = layout; ok && *s; n++) {
    char a = n < TENSOR_MAX_RANK ? layout_axis(layout, &s, need) : 0;
    ok = a && !strchr(axes, a);
    if (ok) axes[n] = a;
  }
  for (int j = 0; ok && need[j]; j++) {
    const char *p = strchr(axes, need[j]);
    ok = p != NULL;
    if (p) pos[j] = (int)(p - axes);
  }
  if (ok) return n;
  StrBuf b = {0};
  for (int j = 0; need[j]; j++) sb_printf(&b, "%s%c", j ? ", " : "", need[j]);
  rel_fail(cx,
           "%s: %s %s is not supported: it must be distinct capital letters including %s (and "
           "channel-like blocks such as 16c)",
           cx->op_name, key, layout[0] ? layout : "\"\"", b.data);
  sb_free(&b);
  return -1;
}

int nn_layout_attr(RelCtx *cx, const Attrs *attrs, const char *key, const char *need, int *pos) {
  const char *l = rel_attr_str(cx, attrs, key);
  if (cx->err[0]) return -1;
  return nn_layout_letters(cx, l, key, need, pos);
}

bool nn_same_out_layout(RelCtx *cx, const Attrs *attrs, const char *key) {
  const char *l = rel_attr_str(cx, attrs, key), *o = rel_attr_str(cx, attrs, "out_layout");
  if (cx->err[0]) return false;
  if (!o[0] || strcmp(o, l) == 0) return true;
  rel_fail(cx, "%s: out_layout %s differs from %s %s (a layout change is not supported)",
           cx->op_name, o, key, l);
  return false;
}

/* One plain layout of a convolution: exactly the letters of `need`, in
 * any order; pos[] as nn_layout_letters gives it. */
static bool conv_layout(RelCtx *cx, const Attrs *attrs, const char *key, const char *need,
                        int *pos) {
  const char *l = rel_attr_str(cx, attrs, key);
  if (cx->err[0]) return false;
  RelCtx probe = *cx;
  int n = nn_layout_letters(&probe, l, key, need, pos);
  if (n == (int)strlen(need)) return true;
  rel_fail(cx, "%s: %s %s is not supported: it must be the letters %s in some order", cx->op_name,
           key, l[0] ? l : "\"\"", need);
  return false;
}

bool nn_conv_axes(RelCtx *cx, const Attrs *attrs, int S, NnConvAxes *ax) {
  const char *sp = &"DHW"[NN_MAX_SPATIAL - S];
  char xneed[8], wneed[8];
  snprintf(xneed, sizeof xneed, "NC%s", sp);
  snprintf(wneed, sizeof wneed, "OI%s", sp);
  return conv_layout(cx, attrs, "data_layout", xneed, ax->x) &&
         conv_layout(cx, attrs, "kernel_layout", wneed, ax->w) &&
         nn_same_out_layout(cx, attrs, "data_layout");
}

bool nn_conv_axes_plain(const NnConvAxes *ax, int S) {
  for (int i = 0; i < 2 + S; i++)
    if (ax->x[i] != i || ax->w[i] != i) return false;
  return true;
}

/* ───────────────────────────── dtypes ───────────────────────────── */

bool nn_operand_dtypes(RelCtx *cx, const Attrs *attrs, const Type *a, const Type *b) {
  DType da = a->u.tensor.dtype, db = b->u.tensor.dtype;
  if (da == db) return true;
  bool ints = dtype_is_int(da) && dtype_is_int(db);
  const char *od = ints ? rel_attr_str(cx, attrs, "out_dtype") : "";
  if (cx->err[0]) return false;
  if (ints && od[0]) return true;
  rel_fail(cx, "%s: dtypes %s and %s differ%s", cx->op_name, dtype_name(da), dtype_name(db),
           ints ? " (integer operands of two dtypes need out_dtype, e.g. \"int32\")" : "");
  return false;
}

/* ───────────────────────────── int pairs ───────────────────────────── */

static int pairs_fail(RelCtx *cx, const char *key, const char *why) {
  rel_fail(cx, "%s: `%s` must be a list of [before, after] pairs of ints%s", cx->op_name, key, why);
  return -1;
}

/* A list of lists of two ints, read straight from the attribute (the
 * generic accessors read flat lists only). */
int nn_attr_pairs(RelCtx *cx, const Attrs *attrs, const char *key, int64_t (*out)[2], int max) {
  const AttrValue *v = attrs_get(attrs, key);
  if (!v) {
    rel_fail(cx, "%s: missing attribute `%s`", cx->op_name, key);
    return -1;
  }
  if (v->kind != AV_LIST) return pairs_fail(cx, key, "");
  if (v->u.list.n > max) {
    rel_fail(cx, "%s: attribute `%s` has more than %d entries", cx->op_name, key, max);
    return -1;
  }
  for (int i = 0; i < v->u.list.n; i++) {
    const AttrValue *p = v->u.list.items[i];
    if (p->kind != AV_LIST || p->u.list.n != 2)
      return pairs_fail(cx, key, arena_printf(cx->arena, " (entry %d is not a pair)", i));
    for (int j = 0; j < 2; j++) {
      if (p->u.list.items[j]->kind != AV_INT) return pairs_fail(cx, key, "");
      out[i][j] = p->u.list.items[j]->u.i;
    }
  }
  return v->u.list.n;
}
