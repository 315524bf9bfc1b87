/* numeric.c — op family "numeric": linear algebra and signal processing
 * ops that no other family holds: det (the determinant of square matrices,
 * batched over leading axes), signal.stft (ONNX's short-time Fourier
 * transform, its frame step a run-time value) and signal.mel_weight_matrix
 * (ONNX's mel filter bank, every parameter a run-time value); the output
 * shapes of the signal ops follow their arguments' values, `?` when those
 * are known only at run time.  Their kernels are in
 * kernels/kernels_numeric.c; none has a compute rule, so both execution
 * modes run the reference kernel. */
#include "ops/families.h"

static const Span no_span;
static const OpAttrSpec no_attrs[] = {{0}};

/* det: x [..., n, n] of a float dtype → [...]. */
static Type *rel_det(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                     const Attrs *attrs) {
  const Type *x = rel_tensor(cx, args, 0);
  if (!x) return NULL;
  int n = x->u.tensor.ndim;
  if (!dtype_is_float(x->u.tensor.dtype) || n < 2)
    return rel_fail(cx, "det: x must be a float tensor of rank at least 2, got %s",
                    rel_type_str(cx, x));
  if (!rel_unify_dim(cx, x->u.tensor.dims[n - 2], x->u.tensor.dims[n - 1]))
    return rel_fail(cx, "det: the matrices must be square, got %s", rel_type_str(cx, x));
  return type_tensor(cx->arena, x->u.tensor.dtype, n - 2, x->u.tensor.dims, no_span);
}

/* A rank-0 tensor of class cls ('i' integer, 'f' float); its value as
 * int64 through *v (when known), else *known false. */
static bool scalar_of(RelCtx *cx, Type **args, const Tensor **values, int i, char cls,
                      const char *what, int64_t *v, bool *known) {
  const Type *t = rel_tensor(cx, args, i);
  if (!t) return false;
  bool ok = cls == 'i' ? dtype_is_int(t->u.tensor.dtype) : dtype_is_float(t->u.tensor.dtype);
  if (t->u.tensor.ndim != 0 || !ok)
    return rel_fail(cx, "%s: %s must be %s scalar, got %s", cx->op_name, what,
                    cls == 'i' ? "an integer" : "a float", rel_type_str(cx, t)),
           false;
  *known = values && values[i];
  if (*known && v) *v = tensor_get_i64(values[i], 0);
  return true;
}

/* The number of frames of length len, step apart, in n samples. */
static Dim frames(RelCtx *cx, Dim n, Dim len, int64_t step, bool known) {
  if (!known || n.kind != DIM_CONST || len.kind != DIM_CONST) return dim_any();
  if (step < 1)
    return rel_fail(cx, "signal.stft: frame_step must be positive, got %lld", (long long)step),
           dim_any();
  if (len.value < 1 || len.value > n.value)
    return rel_fail(cx, "signal.stft: the window's length %lld is not in [1, %lld]",
                    (long long)len.value, (long long)n.value),
           dim_any();
  return dim_const((n.value - len.value) / step + 1);
}

/* signal.stft(signal [B, T, 1 or 2], frame_step, window [L]) →
 * [B, (T - L) / frame_step + 1, L / 2 + 1 (onesided) or L, 2]. */
static Type *rel_stft(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                      const Attrs *attrs) {
  const Type *x = rel_tensor(cx, args, 0), *w = x ? rel_tensor(cx, args, 2) : NULL;
  int64_t step = 0;
  bool known, one = rel_attr_bool(cx, attrs, "onesided");
  if (!w || !scalar_of(cx, args, values, 1, 'i', "frame_step", &step, &known)) return NULL;
  const Dim *xd = x->u.tensor.dims;
  DType dt = x->u.tensor.dtype;
  if (!dtype_is_float(dt) || x->u.tensor.ndim != 3 || xd[2].kind != DIM_CONST || xd[2].value < 1 ||
      xd[2].value > 2)
    return rel_fail(cx,
                    "signal.stft: signal must be a float tensor [batch, length, 1 or 2], got %s",
                    rel_type_str(cx, x));
  if (w->u.tensor.ndim != 1 || w->u.tensor.dtype != dt)
    return rel_fail(cx, "signal.stft: window must be 1-D of the signal's dtype, got %s",
                    rel_type_str(cx, w));
  Dim len = w->u.tensor.dims[0];
  Dim out[4] = {xd[0], frames(cx, xd[1], len, step, known), dim_any(), dim_const(2)};
  if (len.kind == DIM_CONST) out[2] = dim_const(one ? len.value / 2 + 1 : len.value);
  return cx->err[0] ? NULL : type_tensor(cx->arena, dt, 4, out, no_span);
}

/* signal.mel_weight_matrix(num_mel_bins, dft_length, sample_rate,
 * lower_edge_hertz, upper_edge_hertz) → [dft_length / 2 + 1, num_mel_bins]
 * of `dtype`. */
static Type *rel_mel_weight_matrix(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                                   const Attrs *attrs) {
  static const char *const names[] = {"num_mel_bins", "dft_length", "sample_rate",
                                      "lower_edge_hertz", "upper_edge_hertz"};
  int64_t v[5] = {0};
  bool known[5];
  for (int i = 0; i < 5; i++)
    if (!scalar_of(cx, args, values, i, i < 3 ? 'i' : 'f', names[i], &v[i], &known[i])) return NULL;
  DType dt = rel_attr_dtype(cx, attrs, "dtype", DT_FLOAT32);
  if (cx->err[0]) return NULL;
  for (int i = 0; i < 3; i++)
    if (known[i] && v[i] < 1)
      return rel_fail(cx, "signal.mel_weight_matrix: %s must be positive, got %lld", names[i],
                      (long long)v[i]);
  Dim out[2] = {known[1] ? dim_const(v[1] / 2 + 1) : dim_any(),
                known[0] ? dim_const(v[0]) : dim_any()};
  return type_tensor(cx->arena, dt, 2, out, no_span);
}

static const OpAttrSpec stft_attrs[] = {{"onesided", AV_BOOL, "True"}, {0}};
static const OpAttrSpec mel_attrs[] = {{"dtype", AV_STR, "\"float32\""}, {0}};

const OpDef ops_family_numeric[] = {
    {"det", 1, 1, OPAT_OPAQUE, no_attrs, rel_det, "determinant of the last two axes' matrices",
     false, .args = "x",
     .rule = "x's dtype (a float), its shape without the last two axes, which must be equal",
     .example = "det([[1f, 2f], [3f, 4f]])"},
    {"signal.stft", 3, 3, OPAT_OPAQUE, stft_attrs, rel_stft,
     "short-time Fourier transform of windowed frames (ONNX's STFT)", false,
     .args = "signal, frame_step, window",
     .rule =
         "signal's dtype; [batch, frames, bins, 2] for a [batch, length, 1 or 2] signal: "
         "frames (length - L) / frame_step + 1, bins L / 2 + 1 (onesided) or L for a window of L",
     .example = "signal.stft(ones(shape=[1, 8, 1]), 2, ones(shape=[4]))"},
    {"signal.mel_weight_matrix", 5, 5, OPAT_OPAQUE, mel_attrs, rel_mel_weight_matrix,
     "triangular mel filter bank (ONNX's MelWeightMatrix)", false,
     .args = "num_mel_bins, dft_length, sample_rate, lower_edge_hertz, upper_edge_hertz",
     .rule = "`dtype`; [dft_length / 2 + 1, num_mel_bins]; the first three are integer "
             "scalars, the edges float scalars",
     .example = "signal.mel_weight_matrix(4, 16, 8192, 0f, 4096f)"},
    {0},
};
