/* compute_image_crop.c — the compute rule (lower/compute/compute.h) of
 * image.crop_and_resize (materialized).
 *
 * Output element (b, c, y, x) of box b samples image box_indices[b] at the
 * crop coordinates of the box's corners (fractions of the image), as the
 * reference kernel (kernels/kernels_image.c, crop_coord) computes them in
 * float32: m = H - 1, then y0 * m + (m * (y1 - y0) / (crop_h - 1)) * y (a
 * crop of one pixel: 0.5 * (y0 + y1) * m); the taps and the resampling are
 * resize's (lower/compute/compute_image.h), and a coordinate outside the image gives
 * extrapolation_value.  So both modes agree bit for bit (without the JIT's
 * contraction).
 *
 * The kernel checks every box index against the batch before it samples;
 * the rule first reads the data at each box's index (element 0 of its
 * image), so an index outside the batch fails the bounds check in compiled
 * code too, whether or not the box samples the image.  The image's
 * channels and spatial dims must be positive constants (the coordinate
 * constants depend on H and W; element 0 must exist). */
#include "lower/compute/compute_image.h"

typedef struct Crop {
  ResizeSpec s;
  const LTensor *x, *boxes, *ix;
} Crop;

static PrimExpr *f32(LowerCx *L, PrimExpr *e) { return lc_cast(L, DT_FLOAT32, e); }
static PrimExpr *lit(LowerCx *L, double v) { return lc_lit(L, DT_FLOAT32, v); }

/* Box b's image: box_indices[b] as int64. */
static PrimExpr *box_image(LowerCx *L, const Crop *k, PrimExpr *b) {
  return lc_cast(L, DT_INT64, lc_at(L, k->ix, &b));
}

/* The crop coordinate on spatial axis i (0: height, 1: width) of output
 * index o of box b, for an axis of `in` pixels cropped to `out`. */
static PrimExpr *crop_coord(LowerCx *L, const Crop *k, int i, PrimExpr *b, PrimExpr *o, int64_t in,
                            int64_t out) {
  PrimExpr *i0[2] = {b, lc_int(L, i)}, *i1[2] = {b, lc_int(L, 2 + i)};
  PrimExpr *b0 = f32(L, lc_at(L, k->boxes, i0)), *b1 = f32(L, lc_at(L, k->boxes, i1));
  PrimExpr *m = lit(L, (double)(in - 1));
  if (out <= 1)
    return lc_bin(L, PB_MUL, lc_bin(L, PB_MUL, lit(L, 0.5), lc_bin(L, PB_ADD, b0, b1)), m);
  PrimExpr *scale =
      lc_bin(L, PB_DIV, lc_bin(L, PB_MUL, m, lc_bin(L, PB_SUB, b1, b0)), lit(L, (double)(out - 1)));
  return lc_bin(L, PB_ADD, lc_bin(L, PB_MUL, b0, m), lc_bin(L, PB_MUL, scale, f32(L, o)));
}

/* aux[0]: the Crop (arena allocated). */
static PrimExpr *at_crop(LowerCx *L, const LTensor *t, PrimExpr **idx) {
  const Crop *k = (const Crop *)(intptr_t)t->aux[0];
  const ResizeSpec *s = &k->s;
  PrimExpr *b = idx[s->batch_axis], *sub[4], *outside = NULL;
  ETaps tp[2];
  for (int i = 0; i < 2; i++) {
    int ax = s->sp_axis[i];
    int64_t in = lc_const(k->x->shape[ax]), out = lc_const(t->shape[ax]);
    tp[i] = image_taps(L, s, crop_coord(L, k, i, b, idx[ax], in, out), in);
    outside = outside ? lc_bin(L, PB_OR, outside, tp[i].outside) : tp[i].outside;
  }
  for (int d = 0; d < 4; d++) sub[d] = idx[d];
  sub[s->batch_axis] = box_image(L, k, b);
  PrimExpr *v = image_resample(L, k->x, s, tp, sub);
  v = lc_call(L, PI_SELECT, outside, lit(L, s->extrapolation), v);
  return lc_cast(L, t->dtype, v);
}

/* for each box: a read of element 0 of its image (the batch check). */
static void check_boxes(LowerCx *L, const Crop *k) {
  PrimExpr *one = lc_int(L, 1), *zero = lc_int(L, 0), *B = k->ix->shape[0];
  Buffer *chk = lc_alloc(L, "chk", DT_FLOAT32, 1, &one);
  TirVar *b = lc_tvar(L, "b", B);
  PrimExpr *xi[4] = {zero, zero, zero, zero};
  xi[k->s.batch_axis] = box_image(L, k, lc_var(L, b));
  lc_open(L);
  lc_store(L, chk, 1, &zero, f32(L, lc_at(L, k->x, xi)));
  lc_for(L, LOOP_RANGE, b, B, lc_close(L));
}

static bool crop_ok(LowerCx *L, const Expr *call, LTensor **in, int nin, Crop *k) {
  RelCtx cx = {.arena = lc_arena(L), .op = ops_get(call->u.call.fn->u.op.index)};
  cx.op_name = cx.op->name;
  if (nin != 3 || in[0]->ndim != 4 || !image_crop_spec(&cx, call->u.call.attrs, &k->s))
    return lc_fail(L, "image.crop_and_resize: operands"), false;
  k->x = in[0], k->boxes = in[1], k->ix = in[2];
  DType dt = lc_result_type(call)->u.tensor.dtype;
  if (!image_dtypes_ok(k->x->dtype, dt) || !lc_dtype_ok(k->boxes->dtype) ||
      !dtype_is_int(k->ix->dtype))
    return lc_fail(L, "image.crop_and_resize of %s", dtype_name(k->x->dtype)), false;
  for (int d = 0; d < 4; d++)
    if (d != k->s.batch_axis && lc_const(k->x->shape[d]) <= 0)
      return lc_fail(L, "image.crop_and_resize of a dynamic or empty image"), false;
  return true;
}

static LTensor *compute_crop_and_resize(LowerCx *L, const Expr *call, LTensor **in, int nin) {
  Crop *k = ARENA_NEW(lc_arena(L), Crop);
  if (!crop_ok(L, call, in, nin, k)) return NULL;
  const Type *ty = lc_result_type(call);
  PrimExpr *shape[4];
  for (int d = 0; d < 4; d++) {
    Dim dm = ty->u.tensor.dims[d];
    if (dm.kind == DIM_ANY || (d != k->s.batch_axis && dm.kind != DIM_CONST))
      return lc_fail(L, "image.crop_and_resize: a result dim known only at run time");
    shape[d] = d == k->s.batch_axis ? k->ix->shape[0] : lc_int(L, dm.value);
  }
  Buffer *out = lc_result_buffer(L, call, ty->u.tensor.dtype, 4, shape);
  if (!out) return NULL;
  LTensor *t = lc_tensor(L, call, ty->u.tensor.dtype, 4, shape);
  t->in = in, t->nin = nin, t->at = at_crop, t->aux[0] = (int64_t)(intptr_t)k;
  check_boxes(L, k);
  lc_materialize(L, t, out);
  lc_mark_total(L, out); /* each element stored once */
  return lc_from_buffer(L, call, out);
}

/* The rules of this file by op name (compute_rule, lower/compute/compute.h). */
const ComputeDef compute_family_image_crop[] = {
    {"image.crop_and_resize", compute_crop_and_resize},
    {NULL, NULL},
};
