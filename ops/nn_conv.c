/* nn_conv.c — op family "nn_conv": nn.conv1d, nn.conv2d, nn.conv3d and the
 * transposed nn.conv1d_transpose, nn.conv2d_transpose, nn.conv3d_transpose.
 *
 * Attributes and defaults are TVM v0.10's (Conv1DAttrs ... in
 * relay/attrs/nn.h); the window arithmetic is in ops/nn_win.c.  Layouts:
 * a convolution takes any order of its letters (ops/nn_int.h,
 * nn_conv_axes): NCHW data with OIHW weights, NHWC data with HWIO, OHWI or
 * HWOI weights as TensorFlow and TFLite models print them, and the 1-D and
 * 3-D analogues; the result has the data's layout.  The transposed ops take
 * data NCW / NCHW and weights OIW / OIHW or IOW / IOHW (what TVM's Python
 * API writes); others fail "layout NHWC is not supported yet".
 *
 * Channels: a convolution's weight is (O, C / groups, k...) and O must be
 * divisible by groups (depthwise: groups = C, weight (C * m, 1, k...)).  A
 * transposed convolution's weight has the input channels C and O / groups
 * output channels per group; the output has O = (O / groups) * groups
 * channels.  Which weight axis holds which follows TVM's relations: for
 * conv2d_transpose the letter I marks the input channels (IOHW: (C, O/g,
 * kh, kw)), while conv1d_transpose reads its default OIW as (C, O/g, kw),
 * the letter O marking the input channels.  TVM's relations ignore groups in
 * places (the output then has O / groups channels); here the output always
 * has all O, as the computation gives. */
#include <string.h>

#include "ops/families.h"
#include "ops/nn_int.h"

static const Span no_span;

/* A single dim as text ("4", "n", "?"). */
static const char *dim_text(RelCtx *cx, Dim d) {
  const char *s = rel_shape_str(cx, 1, &d);
  return arena_strndup(cx->arena, s + 1, strlen(s) - 2);
}

static bool rank_is(RelCtx *cx, const Type *t, int rank, const char *what, const char *layout) {
  if (t->u.tensor.ndim == rank) return true;
  rel_fail(cx, "%s: %s must be %d-D (%s), got %s", cx->op_name, what, rank, layout,
           rel_type_str(cx, t));
  return false;
}

/* The spatial letters of S dims: "W", "HW", "DHW". */
static const char *spatial(int S) { return &"DHW"[NN_MAX_SPATIAL - S]; }

/* A layout attribute that must be `prefix` followed by the spatial letters
 * (or alt, when given); *alt_used tells which. */
static bool fixed_layout(RelCtx *cx, const Attrs *attrs, const char *key, const char *prefix,
                         const char *alt, int S, const char *what, bool *alt_used) {
  const char *l = rel_attr_str(cx, attrs, key);
  if (cx->err[0]) return false;
  if (!l[0] && strcmp(key, "out_layout") == 0) return true;
  size_t np = strlen(prefix);
  bool sp_ok = strlen(l) == np + (size_t)S && strcmp(l + np, spatial(S)) == 0;
  if (sp_ok && strncmp(l, prefix, np) == 0) return true;
  if (sp_ok && alt && strncmp(l, alt, np) == 0) return *alt_used = true;
  rel_fail(cx, "%s: %s %s is not supported yet", cx->op_name, what, l);
  return false;
}

typedef struct Conv {
  int S;
  bool transpose;
  const Type *x, *w;
  int64_t groups;
  int w_in, w_out; /* weight axes of the input channels and the output channels (per group) */
  NnConvAxes ax;   /* the data's N, C, spatial axes; the weight's O, I, spatial axes */
  NnWindow win;
} Conv;

/* A convolution's layouts: any order of the letters (nn_conv_axes), and
 * the ranks they give. */
static bool plain_conv_layouts(RelCtx *cx, const Attrs *attrs, Conv *c) {
  int S = c->S;
  if (!nn_conv_axes(cx, attrs, S, &c->ax) ||
      !rank_is(cx, c->x, 2 + S, "data", rel_attr_str(cx, attrs, "data_layout")) ||
      !rank_is(cx, c->w, 2 + S, "weight", rel_attr_str(cx, attrs, "kernel_layout")))
    return false;
  c->w_out = c->ax.w[0], c->w_in = c->ax.w[1];
  return true;
}

/* The transposed ones' layouts (data NC..., weight OI... or IO...; out_layout
 * empty or the data's) and the ranks; sets which weight axes hold the
 * input and the output channels. */
static bool conv_layouts(RelCtx *cx, const Attrs *attrs, Conv *c) {
  int S = c->S;
  bool io = false, unused = false;
  for (int i = 0; i < 2 + S; i++) c->ax.x[i] = c->ax.w[i] = i;
  if (!c->transpose) return plain_conv_layouts(cx, attrs, c);
  const char *dl = S == 1 ? "NCW" : S == 2 ? "NCHW" : "NCDHW";
  if (!fixed_layout(cx, attrs, "data_layout", "NC", NULL, S, "layout", &unused) ||
      !fixed_layout(cx, attrs, "kernel_layout", "OI", c->transpose ? "IO" : NULL, S,
                    "kernel layout", &io) ||
      !fixed_layout(cx, attrs, "out_layout", "NC", NULL, S, "out_layout", &unused) ||
      !rank_is(cx, c->x, 2 + S, "data", dl) ||
      !rank_is(cx, c->w, 2 + S, "weight",
               arena_printf(cx->arena, "%s%s", io ? "IO" : "OI", spatial(S))))
    return false;
  /* which axis is which: see the comment at the top */
  bool o_first = !io; /* the letter O comes first */
  bool o_is_input = c->transpose && S == 1;
  int o_axis = o_first ? 0 : 1, i_axis = 1 - o_axis;
  if (!c->transpose) {
    c->w_out = o_axis, c->w_in = i_axis;
  } else {
    c->w_in = o_is_input ? o_axis : i_axis;
    c->w_out = 1 - c->w_in;
  }
  return true;
}

/* A convolution's channel rule: C = weight in-channels * groups and O
 * divisible by groups; symbolic channels unify only when groups is 1
 * (otherwise the product is not a dim). */
static bool conv_channels(RelCtx *cx, const Conv *c) {
  Dim ch = c->x->u.tensor.dims[c->ax.x[1]], in = c->w->u.tensor.dims[c->w_in];
  Dim o = c->w->u.tensor.dims[c->w_out];
  int64_t want, g = c->groups;
  if (ch.kind == DIM_CONST && in.kind == DIM_CONST) {
    if (__builtin_mul_overflow(in.value, g, &want) || ch.value != want)
      return rel_fail(cx, "%s: input has %lld channels but weight %s expects %lld (groups=%lld)",
                      cx->op_name, (long long)ch.value, rel_tensor_shape_str(cx, c->w),
                      (long long)want, (long long)g),
             false;
  } else if (g == 1 && !rel_unify_dim(cx, ch, in)) {
    return rel_fail(cx, "%s: input has %s channels but weight %s expects %s", cx->op_name,
                    dim_text(cx, ch), rel_tensor_shape_str(cx, c->w), dim_text(cx, in)),
           false;
  }
  if (o.kind == DIM_CONST && o.value % g != 0)
    return rel_fail(cx, "%s: weight %s has %lld output channels, not divisible by groups=%lld",
                    cx->op_name, rel_tensor_shape_str(cx, c->w), (long long)o.value, (long long)g),
           false;
  return true;
}

/* A transposed convolution's: C = weight in-channels, divisible by groups. */
static bool transposed_channels(RelCtx *cx, const Conv *c) {
  Dim ch = c->x->u.tensor.dims[1], in = c->w->u.tensor.dims[c->w_in];
  if (!rel_unify_dim(cx, ch, in))
    return rel_fail(cx, "%s: input has %s channels but weight %s has %s input channels (axis %d)",
                    cx->op_name, dim_text(cx, ch), rel_tensor_shape_str(cx, c->w), dim_text(cx, in),
                    c->w_in),
           false;
  if (ch.kind == DIM_CONST && ch.value % c->groups != 0)
    return rel_fail(cx, "%s: %lld input channels are not divisible by groups=%lld", cx->op_name,
                    (long long)ch.value, (long long)c->groups),
           false;
  return true;
}

/* The output channels: O (convolution) or O/groups * groups (transposed). */
static Dim out_channels(RelCtx *cx, const Conv *c) {
  Dim o = c->w->u.tensor.dims[c->w_out];
  if (!c->transpose || c->groups == 1) return o;
  int64_t v;
  if (o.kind != DIM_CONST || __builtin_mul_overflow(o.value, c->groups, &v)) return dim_any();
  return dim_const(v);
}

/* `channels` and `kernel_size`, when given, must agree with the weight. */
static bool conv_hints(RelCtx *cx, const Attrs *attrs, const Conv *c) {
  const Dim *wd = c->w->u.tensor.dims;
  if (!rel_attr_is_none(cx, attrs, "channels")) {
    int64_t ch = rel_attr_int(cx, attrs, "channels");
    Dim o = out_channels(cx, c);
    if (!cx->err[0] && !rel_unify_dim(cx, dim_const(ch), o))
      rel_fail(cx, "%s: channels=%lld but the weight %s gives %s output channels%s", cx->op_name,
               (long long)ch, rel_tensor_shape_str(cx, c->w), dim_text(cx, o),
               c->transpose ? arena_printf(cx->arena, " (groups=%lld)", (long long)c->groups) : "");
  }
  if (!cx->err[0] && !rel_attr_is_none(cx, attrs, "kernel_size")) {
    int64_t ks[NN_MAX_SPATIAL];
    if (!nn_spatial_ints(cx, attrs, "kernel_size", c->S, 1, ks)) return false;
    bool ok = true;
    for (int i = 0; i < c->S; i++) ok &= rel_unify_dim(cx, dim_const(ks[i]), wd[c->ax.w[2 + i]]);
    if (!ok) {
      StrBuf b = {0};
      for (int i = 0; i < c->S; i++) sb_printf(&b, "%s%lld", i ? ", " : "", (long long)ks[i]);
      rel_fail(cx, "%s: kernel_size=[%s] but weight has shape %s", cx->op_name, b.data,
               rel_tensor_shape_str(cx, c->w));
      sb_free(&b);
    }
  }
  return !cx->err[0];
}

/* output_padding (transposed): each value below its stride or dilation. */
static bool output_padding(RelCtx *cx, const Attrs *attrs, NnWindow *w) {
  if (!nn_spatial_ints(cx, attrs, "output_padding", w->S, 0, w->out_pad)) return false;
  for (int i = 0; i < w->S; i++)
    if (w->out_pad[i] >= w->stride[i] && w->out_pad[i] >= w->dil[i])
      return rel_fail(cx,
                      "%s: output_padding %lld must be smaller than the stride (%lld) or the "
                      "dilation (%lld)",
                      cx->op_name, (long long)w->out_pad[i], (long long)w->stride[i],
                      (long long)w->dil[i]),
             false;
  return true;
}

/* The relation of every convolution: layouts, channels, hints, window. */
static Type *conv_rel(RelCtx *cx, Type **args, const Attrs *attrs, int S, bool transpose) {
  Conv c = {.S = S, .transpose = transpose, .win = {.S = S}};
  c.x = rel_tensor(cx, args, 0);
  c.w = c.x ? rel_tensor(cx, args, 1) : NULL;
  if (!c.w || !nn_operand_dtypes(cx, attrs, c.x, c.w) || !conv_layouts(cx, attrs, &c)) return NULL;
  c.groups = rel_attr_int(cx, attrs, "groups");
  if (!cx->err[0] && c.groups < 1)
    rel_fail(cx, "%s: groups must be positive, got %lld", cx->op_name, (long long)c.groups);
  if (cx->err[0] || !(transpose ? transposed_channels(cx, &c) : conv_channels(cx, &c)) ||
      !conv_hints(cx, attrs, &c) || !nn_window_attrs(cx, attrs, &c.win) ||
      (transpose && !output_padding(cx, attrs, &c.win)))
    return NULL;
  const Dim *xd = c.x->u.tensor.dims, *wd = c.w->u.tensor.dims;
  const int *xa = c.ax.x, *wa = c.ax.w;
  Dim out[2 + NN_MAX_SPATIAL];
  out[xa[0]] = xd[xa[0]], out[xa[1]] = out_channels(cx, &c);
  for (int i = 0; i < S; i++) {
    Dim *o = &out[xa[2 + i]];
    *o = dim_any();
    if (wd[wa[2 + i]].kind != DIM_CONST) continue;
    c.win.k[i] = wd[wa[2 + i]].value;
    bool ok = transpose ? nn_window_out_transposed(cx, &c.win, i, xd[xa[2 + i]], o)
                        : nn_window_out(cx, &c.win, i, xd[xa[2 + i]], o);
    if (!ok) return NULL;
  }
  DType dt = rel_attr_dtype(cx, attrs, "out_dtype", c.x->u.tensor.dtype);
  return cx->err[0] ? NULL : type_tensor(cx->arena, dt, 2 + S, out, no_span);
}

#define CONV_REL(name, S, transpose)                                           \
  static Type *name(RelCtx *cx, int nargs, Type **args, const Tensor **values, \
                    const Attrs *attrs) {                                      \
    return conv_rel(cx, args, attrs, S, transpose);                            \
  }
CONV_REL(rel_conv1d, 1, false)
CONV_REL(rel_conv2d, 2, false)
CONV_REL(rel_conv3d, 3, false)
CONV_REL(rel_conv1d_transpose, 1, true)
CONV_REL(rel_conv2d_transpose, 2, true)
CONV_REL(rel_conv3d_transpose, 3, true)

/* ───────────────────────── blocked layouts ───────────────────────── */

/* Digits then `letter` at *s: the number (> 0), *s moved past the letter;
 * 0 when s is not of that form. */
static int64_t block_factor(const char **s, char letter) {
  int64_t v = 0;
  const char *p = *s;
  while (*p >= '0' && *p <= '9' && v < (1 << 20)) v = v * 10 + (*p++ - '0');
  if (p == *s || *p != letter || v == 0) return 0;
  *s = p + 1;
  return v;
}

bool nn_layout_nchwc(const char *l, int64_t *c) {
  if (strncmp(l, "NCHW", 4) != 0) return false;
  l += 4;
  *c = block_factor(&l, 'c');
  return *c > 0 && !*l;
}

bool nn_layout_oihwio(const char *l, int64_t *i, int64_t *o) {
  if (strncmp(l, "OIHW", 4) != 0) return false;
  l += 4;
  *i = block_factor(&l, 'i');
  *o = *i ? block_factor(&l, 'o') : 0;
  return *o > 0 && !*l;
}

/* A blocked dim: its size must be the layout's factor. */
static bool block_dim(RelCtx *cx, Dim d, int64_t f, const char *what, const Type *t) {
  if (rel_unify_dim(cx, d, dim_const(f))) return true;
  rel_fail(cx, "%s: the %s block of %s must be %lld (the layout's)", cx->op_name, what,
           rel_tensor_shape_str(cx, t), (long long)f);
  return false;
}

typedef struct Nchwc {
  const Type *x, *w;
  int64_t cb, ib, ob, groups; /* data block, kernel input and output blocks */
} Nchwc;

/* Layouts and ranks of nn.contrib_conv2d_NCHWc: data NCHW{c}c, kernel
 * OIHW{i}i{o}o, out_layout empty or NCHW{o}c. */
static bool nchwc_layouts(RelCtx *cx, const Attrs *attrs, Nchwc *c) {
  const char *dl = rel_attr_str(cx, attrs, "data_layout");
  const char *kl = cx->err[0] ? "" : rel_attr_str(cx, attrs, "kernel_layout");
  const char *ol = cx->err[0] ? "" : rel_attr_str(cx, attrs, "out_layout");
  int64_t oc = 0;
  if (cx->err[0]) return false;
  if (!nn_layout_nchwc(dl, &c->cb))
    return rel_fail(cx, "%s: data_layout %s is not NCHW<n>c", cx->op_name, dl), false;
  if (!nn_layout_oihwio(kl, &c->ib, &c->ob))
    return rel_fail(cx, "%s: kernel_layout %s is not OIHW<n>i<m>o", cx->op_name, kl), false;
  if (ol[0] && (!nn_layout_nchwc(ol, &oc) || oc != c->ob))
    return rel_fail(cx, "%s: out_layout %s is not NCHW%lldc (the kernel's output block)",
                    cx->op_name, ol, (long long)c->ob),
           false;
  return rank_is(cx, c->x, 5, "data", dl) && rank_is(cx, c->w, 6, "weight", kl);
}

/* A grouped convolution's channels: the weight's input blocks times ib
 * are the channels of a group, C / groups, and the output channels (its
 * blocks times ob) are a multiple of groups. */
static bool nchwc_grouped(RelCtx *cx, const Nchwc *c, int64_t C) {
  const Dim *wd = c->w->u.tensor.dims;
  if (C < 0 || wd[0].kind != DIM_CONST || wd[1].kind != DIM_CONST) return true;
  if (c->groups > 0 && C % c->groups == 0 && wd[1].value * c->ib == C / c->groups &&
      (wd[0].value * c->ob) % c->groups == 0)
    return true;
  return rel_fail(cx,
                  "%s: groups=%lld needs data channels and output channels divisible by it and "
                  "a weight of C/groups input channels, got data %s and weight %s",
                  cx->op_name, (long long)c->groups, rel_tensor_shape_str(cx, c->x),
                  rel_tensor_shape_str(cx, c->w)),
         false;
}

/* Channels: groups 1 (the weight's input blocks times ib = the data's
 * channels), grouped (above) or depthwise (groups = the data's channels, weight (C/ob, 1,
 * kh, kw, 1, ob) with ob the data's block). */
static bool nchwc_channels(RelCtx *cx, const Nchwc *c) {
  const Dim *xd = c->x->u.tensor.dims, *wd = c->w->u.tensor.dims;
  if (!block_dim(cx, xd[4], c->cb, "channel", c->x) ||
      !block_dim(cx, wd[4], c->ib, "input channel", c->w) ||
      !block_dim(cx, wd[5], c->ob, "output channel", c->w))
    return false;
  int64_t C = xd[1].kind == DIM_CONST ? xd[1].value * c->cb : -1;
  if (c->groups == 1) {
    if (C < 0 || wd[1].kind != DIM_CONST || wd[1].value * c->ib == C) return true;
    return rel_fail(cx, "%s: data %s has %lld channels but weight %s expects %lld", cx->op_name,
                    rel_tensor_shape_str(cx, c->x), (long long)C, rel_tensor_shape_str(cx, c->w),
                    (long long)(wd[1].value * c->ib)),
           false;
  }
  if (C >= 0 && c->groups == C && c->ib == 1 && c->ob == c->cb &&
      rel_unify_dim(cx, wd[1], dim_const(1)) && rel_unify_dim(cx, wd[0], xd[1]))
    return true;
  return nchwc_grouped(cx, c, C);
}

/* nn.contrib_conv2d_NCHWc: data (N, C/c, H, W, c), weight (O/o, C/i, kh,
 * kw, i, o) → (N, O/o, OH, OW, o). */
static Type *rel_conv2d_nchwc(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                              const Attrs *attrs) {
  Nchwc c = {0};
  c.x = rel_tensor(cx, args, 0);
  c.w = c.x ? rel_tensor(cx, args, 1) : NULL;
  if (!c.w) return NULL;
  if (c.x->u.tensor.dtype != c.w->u.tensor.dtype)
    return rel_fail(cx, "%s: dtypes %s and %s differ", cx->op_name, dtype_name(c.x->u.tensor.dtype),
                    dtype_name(c.w->u.tensor.dtype));
  c.groups = rel_attr_int(cx, attrs, "groups");
  if (cx->err[0] || !nchwc_layouts(cx, attrs, &c) || !nchwc_channels(cx, &c)) return NULL;
  const Dim *xd = c.x->u.tensor.dims, *wd = c.w->u.tensor.dims;
  if (!rel_attr_is_none(cx, attrs, "channels")) {
    int64_t ch = rel_attr_int(cx, attrs, "channels");
    if (!cx->err[0] && wd[0].kind == DIM_CONST && wd[0].value * c.ob != ch)
      return rel_fail(cx, "%s: channels=%lld but the weight %s gives %lld output channels",
                      cx->op_name, (long long)ch, rel_tensor_shape_str(cx, c.w),
                      (long long)(wd[0].value * c.ob));
  }
  NnWindow win = {.S = 2};
  if (!nn_window_attrs(cx, attrs, &win)) return NULL;
  Dim out[5] = {xd[0], wd[0], dim_any(), dim_any(), dim_const(c.ob)};
  for (int i = 0; i < 2; i++) {
    if (wd[2 + i].kind != DIM_CONST) continue;
    win.k[i] = wd[2 + i].value;
    if (!nn_window_out(cx, &win, i, xd[2 + i], &out[2 + i])) return NULL;
  }
  DType dt = rel_attr_dtype(cx, attrs, "out_dtype", c.x->u.tensor.dtype);
  return cx->err[0] ? NULL : type_tensor(cx->arena, dt, 5, out, no_span);
}

/* ───────────────────────────── table ───────────────────────────── */

/* clang-format off */
#define CONV_TAIL(dl, kl)                                                     \
  {"groups", AV_INT, "1"}, {"channels", AV_NONE, "None"},                     \
  {"kernel_size", AV_LIST, "None"}, {"data_layout", AV_STR, dl},              \
  {"kernel_layout", AV_STR, kl}, {"out_layout", AV_STR, "\"\""},              \
  {"out_dtype", AV_STR, "\"\""}
static const OpAttrSpec conv1d_attrs[] = {
    {"strides", AV_LIST, "[1]"}, {"padding", AV_LIST, "[0, 0]"}, {"dilation", AV_LIST, "[1]"},
    CONV_TAIL("\"NCW\"", "\"OIW\""), {0}};
const OpAttrSpec nn_conv2d_attrs[] = {
    {"strides", AV_LIST, "[1, 1]"}, {"padding", AV_LIST, "[0, 0]"},
    {"dilation", AV_LIST, "[1, 1]"}, CONV_TAIL("\"NCHW\"", "\"OIHW\""), {0}};
static const OpAttrSpec conv3d_attrs[] = {
    {"strides", AV_LIST, "[1, 1, 1]"}, {"padding", AV_LIST, "[0, 0, 0]"},
    {"dilation", AV_LIST, "[1, 1, 1]"}, CONV_TAIL("\"NCDHW\"", "\"OIDHW\""), {0}};
#define TRANSPOSE_ATTRS(one, zero, dl, kl)                                    \
  {"channels", AV_NONE, "None"}, {"kernel_size", AV_LIST, "None"},            \
  {"strides", AV_LIST, one}, {"output_padding", AV_LIST, zero},               \
  {"padding", AV_LIST, zero}, {"dilation", AV_LIST, one},                     \
  {"groups", AV_INT, "1"}, {"data_layout", AV_STR, dl},                       \
  {"kernel_layout", AV_STR, kl}, {"out_layout", AV_STR, "\"\""},              \
  {"out_dtype", AV_STR, "\"\""}
static const OpAttrSpec conv1d_transpose_attrs[] = {
    TRANSPOSE_ATTRS("[1]", "[0]", "\"NCW\"", "\"OIW\""), {0}};
static const OpAttrSpec conv2d_transpose_attrs[] = {
    TRANSPOSE_ATTRS("[1, 1]", "[0, 0]", "\"NCHW\"", "\"OIHW\""), {0}};
static const OpAttrSpec conv3d_transpose_attrs[] = {
    TRANSPOSE_ATTRS("[1, 1, 1]", "[0, 0, 0]", "\"NCDHW\"", "\"OIDHW\""), {0}};
static const OpAttrSpec conv2d_nchwc_attrs[] = {
    {"strides", AV_LIST, "[1, 1]"}, {"padding", AV_LIST, "[0, 0]"},
    {"dilation", AV_LIST, "[1, 1]"}, CONV_TAIL("\"NCHW16c\"", "\"OIHW16i16o\""), {0}};
/* clang-format on */

const OpDef ops_family_nn_conv[] = {
    {"nn.conv1d", 2, 2, OPAT_OUT_EWISE_FUSABLE, conv1d_attrs, rel_conv1d,
     "1-D convolution, NCW data and OIW weight", false, .args = "data, weight",
     .rule = "(N, O, W') in data's dtype (or out_dtype): W' = (W + pad_l + pad_r - dilation*(KW-1) "
             "- 1) / stride + 1; weight is (O, C/groups, KW)",
     .example = "nn.conv1d(ones(shape=[1, 1, 5]), ones(shape=[2, 1, 3]), padding=[1, 1])"},
    {"nn.conv2d", 2, 2, OPAT_OUT_EWISE_FUSABLE, nn_conv2d_attrs, rel_conv2d,
     "2-D convolution, NCHW data and OIHW weight or NHWC and HWIO / OHWI / HWOI (groups, "
     "dilation, padding)",
     false, .cost = OPCOST_CONV2D, .args = "data, weight",
     .rule = "(N, O, H', W') in data's dtype (or out_dtype): H' = (H + pad_top + pad_bottom - "
             "dilation*(KH-1) - 1) / stride + 1; weight is (O, C/groups, KH, KW)",
     .example = "nn.conv2d(ones(shape=[1, 1, 4, 4]), ones(shape=[2, 1, 3, 3]), padding=[1, 1])"},
    {"nn.conv3d", 2, 2, OPAT_OUT_EWISE_FUSABLE, conv3d_attrs, rel_conv3d,
     "3-D convolution, NCDHW data and OIDHW weight", false, .args = "data, weight",
     .rule = "(N, O, D', H', W') in data's dtype (or out_dtype), each D' = (D + pads - "
             "dilation*(KD-1) - 1) / stride + 1; weight is (O, C/groups, KD, KH, KW)",
     .example = "nn.conv3d(ones(shape=[1, 1, 3, 3, 3]), ones(shape=[1, 1, 2, 2, 2]))"},
    {"nn.conv1d_transpose", 2, 2, OPAT_OUT_EWISE_FUSABLE, conv1d_transpose_attrs,
     rel_conv1d_transpose, "1-D transposed convolution, NCW data, weight (C, O/groups, k)", false,
     .args = "data, weight",
     .rule = "(N, O, W') in data's dtype (or out_dtype): W' = (W-1)*stride - pad_l - pad_r + "
             "dilation*(KW-1) + 1 + output_padding; weight is (C, O/groups, KW)",
     .example = "nn.conv1d_transpose(ones(shape=[1, 1, 3]), ones(shape=[1, 2, 2]), strides=[2])"},
    {"nn.conv2d_transpose", 2, 2, OPAT_OUT_EWISE_FUSABLE, conv2d_transpose_attrs,
     rel_conv2d_transpose, "2-D transposed convolution, NCHW data, IOHW or OIHW weight", false,
     .args = "data, weight",
     .rule = "(N, O, H', W') in data's dtype (or out_dtype): H' = (H-1)*stride - pads + "
             "dilation*(KH-1) + 1 + output_padding; weight is (C, O/groups, KH, KW)",
     .example =
         "nn.conv2d_transpose(ones(shape=[1, 1, 2, 2]), ones(shape=[1, 1, 2, 2]), strides=[2, 2])"},
    {"nn.conv3d_transpose", 2, 2, OPAT_OUT_EWISE_FUSABLE, conv3d_transpose_attrs,
     rel_conv3d_transpose, "3-D transposed convolution, NCDHW data, IODHW or OIDHW weight", false,
     .args = "data, weight",
     .rule = "(N, O, D', H', W') in data's dtype (or out_dtype), each D' = (D-1)*stride - pads + "
             "dilation*(KD-1) + 1 + output_padding; weight is (C, O/groups, KD, KH, KW)",
     .example = "nn.conv3d_transpose(ones(shape=[1, 1, 2, 2, 2]), ones(shape=[1, 1, 2, 2, 2]), "
                "strides=[2, 2, 2], kernel_layout=\"IODHW\")"},
    {"nn.contrib_conv2d_NCHWc", 2, 2, OPAT_OUT_EWISE_FUSABLE, conv2d_nchwc_attrs, rel_conv2d_nchwc,
     "2-D convolution in blocked layouts: data NCHW<c>c, weight OIHW<i>i<o>o, result NCHW<o>c "
     "(any groups)",
     false, .cost = OPCOST_CONV2D, .args = "data, weight",
     .rule = "(N, O/oc, H', W', oc) in data's dtype (or out_dtype), H' and W' as nn.conv2d; data "
             "(N, C/ic, H, W, ic), weight (O/oc, C/groups/ic, KH, KW, ic, oc)",
     .example = "nn.contrib_conv2d_NCHWc(ones(shape=[1, 1, 4, 4, 2]), ones(shape=[1, 1, 3, 3, 2, "
                "2]), data_layout=\"NCHW2c\", kernel_layout=\"OIHW2i2o\")"},
    {0},
};
