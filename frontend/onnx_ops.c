/* onnx_ops.c — the ONNX ops the importer supports: one row per op, the
 * single source of truth.  A row gives the domain ("" is ai.onnx), the op,
 * how many inputs it takes, its converter (onnx_math.c, onnx_nn.c,
 * onnx_shape.c, onnx_rnn.c, onnx_elem.c, onnx_control.c, onnx_index.c, onnx_reduce.c,
 * onnx_layers.c, onnx_training.c), and every Relay op that converter may emit
 * (TVM's names); the importer checks those against the registry before
 * converting a model, and the builder refuses any op a row does not list.
 *
 * Versions: a row's last field is the first opset of its domain whose
 * semantics it implements (left out: 0, since opset 1), as TVM's
 * converters have _impl_vN.  An op whose meaning changed may have several
 * rows: a model gets the row with the largest `since` not past its opset
 * (onnx_op_find), so Add has a row from opset 1 (broadcasting only with
 * broadcast=1, aligned at `axis`) and one from 7 (numpy's broadcasting),
 * and an op first defined at opset N (Erf at 9) has one row since N: a
 * model of an earlier opset using it is refused, naming op, domain and
 * version.  Smaller changes are read by the converter from cx->opset
 * (Softmax at 13, axes as inputs at 13 and 18, Clip's bounds at 11, Pad's
 * attributes before 11, BatchNormalization's is_test and spatial, ...). */
#include <stdio.h>
#include <string.h>

#include "frontend/onnx_int.h"

#define BINARY "add subtract multiply divide power maximum minimum cast"
#define COMPARE "equal less greater less_equal greater_equal not_equal cast"
#define BINARY_V1 BINARY " reshape"
#define COMPARE_V1 COMPARE " reshape"
#define REDUCE "mean sum max min prod dyn.mean dyn.sum dyn.max dyn.min dyn.prod"
#define WINDOW "arange cast subtract multiply divide cos add"
#define RNN                                                                             \
  "nn.dense add subtract multiply sigmoid tanh nn.relu strided_slice take expand_dims " \
  "concatenate reshape transpose shape_of equal zeros zeros_like split squeeze less where cast"
#define RESIZE                                                            \
  "image.resize1d image.resize2d image.resize3d dyn.image.resize2d take " \
  "cast multiply floor dyn.broadcast_to"

/* Rows of every version leave `since` out (0: since opset 1). */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#define POSITION "squeeze cast less add where check not_equal equal"
#define LOOP                                                                                       \
  "add subtract less logical_and squeeze cast take expand_dims concatenate zeros check not_equal " \
  "equal"

#define QMATMUL "cast subtract reshape nn.matmul nn.batch_matmul broadcast_to"
#define QCONV "cast subtract reshape nn.conv1d nn.conv2d nn.conv3d"
#define OPTIMIZER "add subtract multiply divide sqrt greater where cast"

/* clang-format off */
static const OnnxOpDef table[] = {
    /* elementwise arithmetic (onnx_math.c) */
    {"", "Add", 2, 2, onnx_convert_binary_v1, BINARY_V1},
    {"", "Add", 2, 2, onnx_convert_binary, BINARY, 7},
    {"", "Sub", 2, 2, onnx_convert_binary_v1, BINARY_V1},
    {"", "Sub", 2, 2, onnx_convert_binary, BINARY, 7},
    {"", "Mul", 2, 2, onnx_convert_binary_v1, BINARY_V1},
    {"", "Mul", 2, 2, onnx_convert_binary, BINARY, 7},
    {"", "Div", 2, 2, onnx_convert_binary_v1, BINARY_V1},
    {"", "Div", 2, 2, onnx_convert_binary, BINARY, 7},
    {"", "Pow", 2, 2, onnx_convert_pow_v1, "power cast reshape"},
    {"", "Pow", 2, 2, onnx_convert_pow, "power cast", 7},
    {"", "Max", 1, -1, onnx_convert_variadic, "maximum cast"},
    {"", "Min", 1, -1, onnx_convert_variadic, "minimum cast"},
    {"", "Sum", 1, -1, onnx_convert_variadic, "add cast"},
    {"", "Mean", 1, -1, onnx_convert_mean, "add divide"},
    {"", "Sqrt", 1, 1, onnx_convert_unary, "sqrt"},
    {"", "Exp", 1, 1, onnx_convert_unary, "exp"},
    {"", "Log", 1, 1, onnx_convert_unary, "log"},
    {"", "Erf", 1, 1, onnx_convert_unary, "erf", 9},
    {"", "Tanh", 1, 1, onnx_convert_unary, "tanh"},
    {"", "Sigmoid", 1, 1, onnx_convert_unary, "sigmoid"},
    {"", "Sin", 1, 1, onnx_convert_unary, "sin", 7},
    {"", "Cos", 1, 1, onnx_convert_unary, "cos", 7},
    {"", "Neg", 1, 1, onnx_convert_unary, "negative"},
    {"", "Abs", 1, 1, onnx_convert_unary, "abs"},
    {"", "Floor", 1, 1, onnx_convert_unary, "floor"},
    {"", "Ceil", 1, 1, onnx_convert_unary, "ceil"},
    {"", "Sign", 1, 1, onnx_convert_unary, "sign", 9},
    {"", "Round", 1, 1, onnx_convert_round,
     "floor subtract mod not_equal equal greater logical_and logical_or add where", 11},
    {"", "Reciprocal", 1, 1, onnx_convert_reciprocal, "divide"},
    /* activations */
    {"", "Relu", 1, 1, onnx_convert_relu, "nn.relu"},
    {"", "LeakyRelu", 1, 1, onnx_convert_leaky_relu, "nn.leaky_relu"},
    {"", "PRelu", 2, 2, onnx_convert_prelu, "nn.prelu reshape less multiply where"},
    {"", "Clip", 1, 3, onnx_convert_clip, "clip maximum minimum cast"},
    {"", "HardSigmoid", 1, 1, onnx_convert_hard_sigmoid, "multiply add clip"},
    {"", "HardSwish", 1, 1, onnx_convert_hard_swish, "multiply add clip", 14},
    {"", "Elu", 1, 1, onnx_convert_elu, "exp subtract multiply greater where"},
    {"", "Softplus", 1, 1, onnx_convert_softplus, "exp add log"},
    /* comparisons and logic */
    {"", "Equal", 2, 2, onnx_convert_compare_v1, COMPARE_V1},
    {"", "Equal", 2, 2, onnx_convert_compare, COMPARE, 7},
    {"", "Less", 2, 2, onnx_convert_compare_v1, COMPARE_V1},
    {"", "Less", 2, 2, onnx_convert_compare, COMPARE, 7},
    {"", "Greater", 2, 2, onnx_convert_compare_v1, COMPARE_V1},
    {"", "Greater", 2, 2, onnx_convert_compare, COMPARE, 7},
    {"", "LessOrEqual", 2, 2, onnx_convert_compare, COMPARE, 12},
    {"", "GreaterOrEqual", 2, 2, onnx_convert_compare, COMPARE, 12},
    {"", "Not", 1, 1, onnx_convert_not, "logical_not"},
    {"", "And", 2, 2, onnx_convert_logic_v1, "logical_and logical_or logical_xor reshape"},
    {"", "And", 2, 2, onnx_convert_logic, "logical_and logical_or logical_xor", 7},
    {"", "Or", 2, 2, onnx_convert_logic_v1, "logical_and logical_or logical_xor reshape"},
    {"", "Or", 2, 2, onnx_convert_logic, "logical_and logical_or logical_xor", 7},
    {"", "Xor", 2, 2, onnx_convert_logic_v1, "logical_xor reshape"},
    {"", "Xor", 2, 2, onnx_convert_logic, "logical_xor", 7},
    {"", "Where", 3, 3, onnx_convert_where, "where cast", 9},
    /* dtype, identity, constants */
    {"", "Cast", 1, 1, onnx_convert_cast, "cast"},
    {"", "Identity", 1, 1, onnx_convert_identity, ""},
    {"", "Dropout", 1, 3, onnx_convert_dropout,
     "ones_like cast check logical_and greater"},
    {"", "Constant", 0, 0, onnx_convert_constant, ""},
    /* reductions and softmax */
    {"", "ReduceMean", 1, 2, onnx_convert_reduce, REDUCE},
    {"", "ReduceSum", 1, 2, onnx_convert_reduce, REDUCE},
    {"", "ReduceMax", 1, 2, onnx_convert_reduce, REDUCE},
    {"", "ReduceMin", 1, 2, onnx_convert_reduce, REDUCE},
    {"", "ReduceProd", 1, 2, onnx_convert_reduce, REDUCE},
    {"", "ArgMax", 1, 1, onnx_convert_argreduce, "argmax cast"},
    {"", "ArgMin", 1, 1, onnx_convert_argreduce, "argmin cast"},
    {"", "Softmax", 1, 1, onnx_convert_softmax, "nn.softmax reshape"},
    {"", "LogSoftmax", 1, 1, onnx_convert_softmax, "nn.log_softmax reshape"},
    /* neural network layers (onnx_nn.c) */
    {"", "Conv", 2, 3, onnx_convert_conv, "nn.conv1d nn.conv2d nn.conv3d nn.bias_add"},
    {"", "ConvTranspose", 2, 3, onnx_convert_conv_transpose, "nn.conv1d_transpose nn.conv2d_transpose nn.conv3d_transpose nn.bias_add"},
    {"", "Gemm", 2, 3, onnx_convert_gemm, "nn.dense transpose multiply add"},
    {"", "MatMul", 2, 2, onnx_convert_matmul,
     "nn.matmul nn.batch_matmul reshape broadcast_to"},
    {"", "BatchNormalization", 5, 5, onnx_convert_batch_norm,
     "nn.batch_norm mean subtract multiply add divide sqrt"},
    {"", "InstanceNormalization", 3, 3, onnx_convert_instance_norm, "nn.instance_norm"},
    {"", "LayerNormalization", 2, 3, onnx_convert_layer_norm,
     "nn.layer_norm mean subtract multiply add divide sqrt zeros_like", 17},
    {"", "MaxPool", 1, 1, onnx_convert_pool,
     "nn.max_pool1d nn.max_pool2d nn.max_pool3d concatenate strided_slice equal where"},
    {"", "AveragePool", 1, 1, onnx_convert_pool, "nn.avg_pool1d nn.avg_pool2d nn.avg_pool3d"},
    {"", "GlobalAveragePool", 1, 1, onnx_convert_global_pool, "nn.global_avg_pool2d mean"},
    {"", "GlobalMaxPool", 1, 1, onnx_convert_global_pool, "nn.global_max_pool2d max"},
    /* recurrent layers, a loop over time of any length (onnx_rnn.c) */
    {"", "LSTM", 3, 8, onnx_convert_lstm, RNN},
    {"", "GRU", 3, 6, onnx_convert_gru, RNN},
    {"", "RNN", 3, 6, onnx_convert_rnn, RNN},
    /* shapes and data movement (onnx_shape.c) */
    {"", "Flatten", 1, 1, onnx_convert_flatten, "nn.batch_flatten reshape"},
    {"", "Reshape", 1, 1, onnx_convert_reshape_v1, "reshape"},
    {"", "Reshape", 2, 2, onnx_convert_reshape, "reshape dyn.reshape", 5},
    {"", "Transpose", 1, 1, onnx_convert_transpose, "transpose"},
    {"", "Squeeze", 1, 2, onnx_convert_squeeze, "squeeze dyn.squeeze reshape cast"},
    {"", "Unsqueeze", 1, 2, onnx_convert_unsqueeze, "expand_dims dyn.expand_dims reshape cast"},
    {"", "Concat", 1, -1, onnx_convert_concat, "concatenate"},
    {"", "Split", 1, 2, onnx_convert_split, "split dyn.split cast"},
    {"", "Slice", 1, 5, onnx_convert_slice,
     "strided_slice dyn.strided_slice cast shape_of concatenate reshape scatter"},
    {"", "Gather", 2, 2, onnx_convert_gather, "take"},
    {"", "Expand", 2, 2, onnx_convert_expand,
     "broadcast_to dyn.broadcast_to shape_of concatenate maximum cast", 8},
    {"", "Tile", 3, 3, onnx_convert_tile_v1, "tile"},
    {"", "Tile", 2, 2, onnx_convert_tile, "tile dyn.tile cast", 6},
    {"", "Pad", 1, 4, onnx_convert_pad, "nn.pad dyn.nn.pad reshape transpose cast"},
    {"", "Shape", 1, 1, onnx_convert_shape, "shape_of strided_slice"},
    {"", "Size", 1, 1, onnx_convert_size, "ndarray_size"},
    {"", "ConstantOfShape", 1, 1, onnx_convert_constant_of_shape, "full dyn.full", 9},
    {"", "Range", 3, 3, onnx_convert_range, "arange", 11},
    /* elementwise, math and signal ops (onnx_elem.c) */
    {"", "Mod", 2, 2, onnx_convert_mod, "floor_mod trunc_mod", 10},
    {"", "BitShift", 2, 2, onnx_convert_bitshift, "left_shift right_shift", 11},
    {"", "CastLike", 2, 2, onnx_convert_cast_like, "cast", 15},
    {"", "IsInf", 1, 1, onnx_convert_isinf, "isinf greater less logical_and", 10},
    {"", "IsNaN", 1, 1, onnx_convert_math, "isnan", 9},
    {"", "Tan", 1, 1, onnx_convert_math, "tan", 7},
    {"", "Asin", 1, 1, onnx_convert_math, "asin", 7},
    {"", "Acos", 1, 1, onnx_convert_math, "acos", 7},
    {"", "Atan", 1, 1, onnx_convert_math, "atan", 7},
    {"", "Sinh", 1, 1, onnx_convert_math, "sinh", 9},
    {"", "Cosh", 1, 1, onnx_convert_math, "cosh", 9},
    {"", "Asinh", 1, 1, onnx_convert_math, "asinh", 9},
    {"", "Acosh", 1, 1, onnx_convert_math, "acosh", 9},
    {"", "Atanh", 1, 1, onnx_convert_math, "atanh", 9},
    {"", "Shrink", 1, 1, onnx_convert_shrink, "less greater add subtract where", 9},
    {"", "ThresholdedRelu", 1, 1, onnx_convert_thresholded_relu, "greater where", 10},
    {"", "Celu", 1, 1, onnx_convert_celu, "exp divide subtract multiply maximum minimum add", 12},
    {"", "Selu", 1, 1, onnx_convert_selu, "exp divide subtract multiply greater where"},
    {"", "Softsign", 1, 1, onnx_convert_softsign, "abs add divide"},
    {"", "Trilu", 1, 2, onnx_convert_trilu, "trilu", 14},
    {"", "EyeLike", 1, 1, onnx_convert_eye_like, "", 9},
    {"", "LRN", 1, 1, onnx_convert_lrn, "nn.lrn"},
    {"", "MeanVarianceNormalization", 1, 1, onnx_convert_mvn, "mean subtract multiply add sqrt divide", 9},
    {"", "HannWindow", 1, 1, onnx_convert_window, WINDOW, 17},
    {"", "HammingWindow", 1, 1, onnx_convert_window, WINDOW, 17},
    {"", "BlackmanWindow", 1, 1, onnx_convert_window, WINDOW, 17},
    {"", "Det", 1, 1, onnx_convert_det, "det", 11},
    {"", "DFT", 1, 2, onnx_convert_dft,
     "take transpose nn.dense add subtract negative expand_dims concatenate", 17},
    {"", "STFT", 2, 4, onnx_convert_stft, "signal.stft expand_dims dyn.ones", 17},
    {"", "MelWeightMatrix", 5, 5, onnx_convert_mel_weight_matrix, "signal.mel_weight_matrix", 17},
    {"", "Bernoulli", 1, 1, onnx_convert_random, "", 15},
    {"", "RandomUniformLike", 1, 1, onnx_convert_random, ""},
    /* sequences, optionals and control flow (onnx_control.c) */
    {"", "SequenceConstruct", 1, -1, onnx_convert_seq_construct, "", 11},
    {"", "SequenceEmpty", 0, 0, onnx_convert_seq_empty, "", 11},
    {"", "SequenceAt", 2, 2, onnx_convert_seq_at, POSITION, 11},
    {"", "SequenceInsert", 2, 3, onnx_convert_seq_insert, POSITION, 11},
    {"", "SequenceErase", 1, 2, onnx_convert_seq_erase, POSITION " subtract", 11},
    {"", "SequenceLength", 1, 1, onnx_convert_seq_length, "cast", 11},
    {"", "SplitToSequence", 1, 2, onnx_convert_split_to_seq,
     "split squeeze cast cumsum subtract strided_slice dyn.strided_slice", 11},
    {"", "ConcatFromSequence", 1, 1, onnx_convert_concat_from_seq, "expand_dims concatenate", 11},
    {"", "SequenceMap", 1, -1, onnx_convert_seq_map, LOOP, 17},
    {"", "Optional", 0, 1, onnx_convert_optional, "", 15},
    {"", "OptionalHasElement", 0, 1, onnx_convert_optional_has, "", 15},
    {"", "OptionalGetElement", 1, 1, onnx_convert_optional_get, "", 15},
    {"", "If", 1, 1, onnx_convert_if, "squeeze check not_equal equal"},
    {"", "Loop", 0, -1, onnx_convert_loop, LOOP},
    {"", "Scan", 0, -1, onnx_convert_scan8, LOOP, 8},
    {"", "Scan", 1, -1, onnx_convert_scan, LOOP, 9},
    /* indexing, resizing and vision (onnx_index.c) */
    {"", "GatherElements", 2, 2, onnx_convert_gather_elements, "gather", 11},
    {"", "GatherND", 2, 2, onnx_convert_gather_nd, "gather_nd transpose", 11},
    {"", "ScatterElements", 3, 3, onnx_convert_scatter_elements, "scatter scatter_add", 11},
    {"", "Scatter", 3, 3, onnx_convert_scatter_elements, "scatter scatter_add", 9},
    {"", "ScatterND", 3, 3, onnx_convert_scatter_nd, "scatter_nd transpose", 11},
    {"", "OneHot", 3, 3, onnx_convert_one_hot, "one_hot dyn.one_hot take cast reshape less add where", 9},
    {"", "DepthToSpace", 1, 1, onnx_convert_depth_to_space, "nn.depth_to_space"},
    {"", "SpaceToDepth", 1, 1, onnx_convert_depth_to_space, "nn.space_to_depth"},
    {"", "ReverseSequence", 2, 2, onnx_convert_reverse_sequence, "reverse_sequence", 10},
    {"", "NonZero", 1, 1, onnx_convert_non_zero, "argwhere cast transpose", 9},
    {"", "Compress", 2, 2, onnx_convert_compress, "argwhere reshape take", 9},
    {"", "Unique", 1, 1, onnx_convert_unique, "reshape transpose unique cast dyn.strided_slice", 11},
    {"", "NonMaxSuppression", 2, 5, onnx_convert_nms,
     "vision.all_class_non_max_suppression reshape cast dyn.strided_slice", 10},
    {"", "TfIdfVectorizer", 1, 1, onnx_convert_tfidf, "tfidf_vectorizer", 9},
    {"", "MaxUnpool", 2, 3, onnx_convert_max_unpool,
     "zeros reshape scatter cast subtract maximum concatenate dyn.nn.pad "
     "dyn.broadcast_to", 9},
    {"", "GridSample", 2, 2, onnx_convert_grid_sample, "transpose image.grid_sample", 16},
    {"", "RoiAlign", 3, 3, onnx_convert_roi_align, "cast expand_dims concatenate vision.roi_align", 10},
    {"", "Resize", 1, 4, onnx_convert_resize, RESIZE, 10},
    {"", "Upsample", 1, 2, onnx_convert_resize, RESIZE, 9},
    /* losses, more reductions, scans and selections (onnx_reduce.c) */
    {"", "NegativeLogLikelihoodLoss", 2, 3, onnx_convert_nll_loss, "nn.nll_loss", 12},
    {"", "SoftmaxCrossEntropyLoss", 2, 3, onnx_convert_sce_loss, "nn.log_softmax nn.nll_loss", 12},
    {"", "ReduceL1", 1, 2, onnx_convert_reduce_ext, "abs sum dyn.sum cast reshape"},
    {"", "ReduceL2", 1, 2, onnx_convert_reduce_ext, "multiply sum dyn.sum sqrt cast reshape"},
    {"", "ReduceSumSquare", 1, 2, onnx_convert_reduce_ext, "multiply sum dyn.sum cast reshape"},
    {"", "ReduceLogSum", 1, 2, onnx_convert_reduce_ext, "sum dyn.sum log cast reshape"},
    {"", "ReduceLogSumExp", 1, 2, onnx_convert_reduce_ext, "logsumexp dyn.logsumexp cast reshape"},
    {"", "CumSum", 2, 2, onnx_convert_cumsum, "cumsum reverse dyn.cumsum cast reshape", 11},
    {"", "Hardmax", 1, 1, onnx_convert_hardmax, "argmax one_hot reshape"},
    {"", "TopK", 1, 2, onnx_convert_topk, "topk dyn.topk cast"},
    {"", "Einsum", 1, -1, onnx_convert_einsum, "einsum", 12},
    /* quantization (onnx_layers.c) */
    {"", "QuantizeLinear", 2, 3, onnx_convert_quantize_linear, "qnn.quantize reshape cast", 10},
    {"", "DequantizeLinear", 2, 3, onnx_convert_dequantize_linear, "qnn.dequantize reshape cast", 10},
    {"", "DynamicQuantizeLinear", 1, 1, onnx_convert_dynamic_quantize_linear,
     "min max minimum maximum subtract divide negative qnn.quantize reshape cast", 11},
    {"", "MatMulInteger", 2, 4, onnx_convert_matmul_integer, QMATMUL, 10},
    {"", "QLinearMatMul", 8, 8, onnx_convert_qlinear_matmul, QMATMUL " multiply divide qnn.quantize", 10},
    {"", "ConvInteger", 2, 4, onnx_convert_conv_integer, QCONV, 10},
    {"", "QLinearConv", 8, 9, onnx_convert_qlinear_conv,
     QCONV " nn.bias_add multiply divide qnn.quantize", 10},
    /* the optimizers of ai.onnx.preview.training (onnx_training.c) */
    {"ai.onnx.preview.training", "Adagrad", 5, -1, onnx_convert_adagrad, OPTIMIZER},
    {"ai.onnx.preview.training", "Adam", 6, -1, onnx_convert_adam, OPTIMIZER " power"},
    {"ai.onnx.preview.training", "Momentum", 5, -1, onnx_convert_momentum, OPTIMIZER},
    /* Gradient of ai.onnx.preview.training (onnx_training.c): a call of the Gradient pass's result */
    {"ai.onnx.preview.training", "Gradient", 1, -1, onnx_convert_gradient, ""},
};
/* clang-format on */
#pragma GCC diagnostic pop

enum { NTABLE = sizeof table / sizeof table[0] };

int onnx_op_count(void) { return NTABLE; }
const OnnxOpDef *onnx_op_get(int i) { return i >= 0 && i < NTABLE ? &table[i] : NULL; }

/* The first opset of a row (0, left out, is opset 1). */
static int row_since(const OnnxOpDef *r) { return r->since > 1 ? r->since : 1; }

const OnnxOpDef *onnx_op_find(const char *domain, const char *op_type, int64_t opset, int *first) {
  const OnnxOpDef *best = NULL;
  int low = -1;
  for (int i = 0; i < NTABLE; i++) {
    const OnnxOpDef *r = &table[i];
    if (strcmp(r->domain, domain) != 0 || strcmp(r->op_type, op_type) != 0) continue;
    if (low < 0 || row_since(r) < low) low = row_since(r);
    if (row_since(r) <= opset && (!best || row_since(r) > row_since(best))) best = r;
  }
  if (first) *first = low;
  return best;
}

bool onnx_row_allows(const OnnxOpDef *row, const char *op) {
  size_t n = strlen(op);
  for (const char *p = row->relay_ops; (p = strstr(p, op)); p += n)
    if ((p == row->relay_ops || p[-1] == ' ') && (p[n] == ' ' || !p[n])) return true;
  return false;
}

const char *onnx_supported_ops(void) {
  static char buf[8192];
  if (buf[0]) return buf;
  size_t k = 0;
  for (int i = 0; i < NTABLE && k + 64 < sizeof buf; i++) {
    if (i && !strcmp(table[i].op_type, table[i - 1].op_type) &&
        !strcmp(table[i].domain, table[i - 1].domain))
      continue; /* one op's rows for several versions are adjacent */
    k += (size_t)snprintf(buf + k, sizeof buf - k, "%s%s%s%s", i ? " " : "", table[i].domain,
                          *table[i].domain ? "." : "", table[i].op_type);
  }
  return buf;
}
