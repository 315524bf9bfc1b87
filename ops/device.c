/* device.c — op family "device": the annotations TVM's device planning
 * (PlanDevices) leaves in a program.
 *
 *   on_device(%x, virtual_device=meta[VirtualDevice][0], constrain_result=True)
 *   device_copy(%x, src_virtual_device=meta[VirtualDevice][0],
 *               dst_virtual_device=meta[VirtualDevice][1])
 *
 * rly has one device (the host CPU), so both are the identity on a value of
 * any type: the type of the result is the argument's, and the evaluator
 * returns the argument itself (OP_IDENTITY).  The device attributes are
 * kept as written (a meta reference into the `#[metadata]` section, which
 * the parser checks, or None) so the program prints back unchanged.
 *
 * The device's one fact the compilation stages ask: its vector register
 * width (target_vector_bytes, ops/ops.h), and whether it has AVX512-VNNI
 * (target_has_vnni). */
#include "ops/families.h"

static Type *rel_identity(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                          const Attrs *attrs) {
  (void)cx, (void)nargs, (void)values, (void)attrs;
  return args[0];
}

static const OpAttrSpec on_device_attrs[] = {{"virtual_device", AV_EXPR, "None"},
                                             {"constrain_result", AV_BOOL, "False"},
                                             {"constrain_body", AV_BOOL, "True"},
                                             {0}};

static const OpAttrSpec device_copy_attrs[] = {
    {"src_virtual_device", AV_EXPR, "None"}, {"dst_virtual_device", AV_EXPR, "None"}, {0}};

const OpDef ops_family_device[] = {
    {"on_device", 1, 1, OPAT_OPAQUE, on_device_attrs, rel_identity,
     "x, placed on a device (identity)", false, .flags = OP_IDENTITY, .args = "x",
     .rule = "the result has x's type", .example = "on_device([1f, 2f])"},
    {"device_copy", 1, 1, OPAT_OPAQUE, device_copy_attrs, rel_identity,
     "x copied between devices "
     "(identity)",
     false, .flags = OP_IDENTITY, .args = "x", .rule = "the result has x's type",
     .example = "device_copy([1f, 2f])"},
    {0},
};

int target_vector_bytes(void) {
#if defined(__x86_64__) && defined(__GNUC__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) return 64;
  if (__builtin_cpu_supports("avx2")) return 32;
#endif
  return 16;
}

bool target_has_vnni(void) {
#if defined(__x86_64__) && defined(__GNUC__)
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512vnni");
#else
  return false;
#endif
}
