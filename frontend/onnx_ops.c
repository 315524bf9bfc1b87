/* onnx_ops.c — the ONNX ops the importer supports: one row per op, the
 * single source of truth.  A row gives the domain ("" is ai.onnx), the op,
 * how many inputs it takes, its converter (onnx_math.c, onnx_nn.c,
 * onnx_shape.c, onnx_rnn.c, onnx_layers.c), and every Relay op that converter may emit
 * (TVM's names); the importer checks those against the registry before
 * converting a model, and the builder refuses any op a row does not list.
 * Converters read the opset (cx->opset) where an op's meaning changed
 * (Softmax at 13, axes as inputs at 13 and 18, Clip's bounds at 11, ...). */
#include <stdio.h>
#include <string.h>

#include "frontend/onnx_int.h"

#define BINARY "add subtract multiply divide power maximum minimum cast"
#define COMPARE "equal less greater less_equal greater_equal not_equal cast"
#define REDUCE "mean sum max min prod"
#define RNN                                                                             \
  "nn.dense add subtract multiply sigmoid tanh nn.relu strided_slice take expand_dims " \
  "concatenate reshape transpose shape_of equal zeros zeros_like split squeeze less where cast"

#define QMATMUL "cast subtract reshape nn.matmul nn.batch_matmul broadcast_to"
#define QCONV "cast subtract reshape nn.conv1d nn.conv2d nn.conv3d"

/* clang-format off */
static const OnnxOpDef table[] = {
    /* elementwise arithmetic (onnx_math.c) */
    {"", "Add", 2, 2, onnx_convert_binary, BINARY},
    {"", "Sub", 2, 2, onnx_convert_binary, BINARY},
    {"", "Mul", 2, 2, onnx_convert_binary, BINARY},
    {"", "Div", 2, 2, onnx_convert_binary, BINARY},
    {"", "Pow", 2, 2, onnx_convert_pow, "power cast"},
    {"", "Max", 1, -1, onnx_convert_variadic, "maximum cast"},
    {"", "Min", 1, -1, onnx_convert_variadic, "minimum cast"},
    {"", "Sum", 1, -1, onnx_convert_variadic, "add cast"},
    {"", "Mean", 1, -1, onnx_convert_mean, "add divide"},
    {"", "Sqrt", 1, 1, onnx_convert_unary, "sqrt"},
    {"", "Exp", 1, 1, onnx_convert_unary, "exp"},
    {"", "Log", 1, 1, onnx_convert_unary, "log"},
    {"", "Erf", 1, 1, onnx_convert_unary, "erf"},
    {"", "Tanh", 1, 1, onnx_convert_unary, "tanh"},
    {"", "Sigmoid", 1, 1, onnx_convert_unary, "sigmoid"},
    {"", "Sin", 1, 1, onnx_convert_unary, "sin"},
    {"", "Cos", 1, 1, onnx_convert_unary, "cos"},
    {"", "Neg", 1, 1, onnx_convert_unary, "negative"},
    {"", "Abs", 1, 1, onnx_convert_unary, "abs"},
    {"", "Floor", 1, 1, onnx_convert_unary, "floor"},
    {"", "Ceil", 1, 1, onnx_convert_unary, "ceil"},
    {"", "Sign", 1, 1, onnx_convert_unary, "sign"},
    {"", "Round", 1, 1, onnx_convert_round,
     "floor subtract mod not_equal equal greater logical_and logical_or add where"},
    {"", "Reciprocal", 1, 1, onnx_convert_reciprocal, "divide"},
    /* activations */
    {"", "Relu", 1, 1, onnx_convert_relu, "nn.relu"},
    {"", "LeakyRelu", 1, 1, onnx_convert_leaky_relu, "nn.leaky_relu"},
    {"", "PRelu", 2, 2, onnx_convert_prelu, "nn.prelu reshape less multiply where"},
    {"", "Clip", 1, 3, onnx_convert_clip, "clip maximum minimum cast"},
    {"", "HardSigmoid", 1, 1, onnx_convert_hard_sigmoid, "multiply add clip"},
    {"", "HardSwish", 1, 1, onnx_convert_hard_swish, "multiply add clip"},
    {"", "Elu", 1, 1, onnx_convert_elu, "exp subtract multiply greater where"},
    {"", "Softplus", 1, 1, onnx_convert_softplus, "exp add log"},
    /* comparisons and logic */
    {"", "Equal", 2, 2, onnx_convert_compare, COMPARE},
    {"", "Less", 2, 2, onnx_convert_compare, COMPARE},
    {"", "Greater", 2, 2, onnx_convert_compare, COMPARE},
    {"", "LessOrEqual", 2, 2, onnx_convert_compare, COMPARE},
    {"", "GreaterOrEqual", 2, 2, onnx_convert_compare, COMPARE},
    {"", "Not", 1, 1, onnx_convert_not, "logical_not"},
    {"", "And", 2, 2, onnx_convert_logic, "logical_and logical_or"},
    {"", "Or", 2, 2, onnx_convert_logic, "logical_and logical_or"},
    {"", "Where", 3, 3, onnx_convert_where, "where cast"},
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
     "nn.batch_norm mean subtract multiply add"},
    {"", "InstanceNormalization", 3, 3, onnx_convert_instance_norm, "nn.instance_norm"},
    {"", "LayerNormalization", 2, 3, onnx_convert_layer_norm,
     "nn.layer_norm mean subtract multiply add divide sqrt zeros_like"},
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
    {"", "Reshape", 2, 2, onnx_convert_reshape, "reshape dyn.reshape"},
    {"", "Transpose", 1, 1, onnx_convert_transpose, "transpose"},
    {"", "Squeeze", 1, 2, onnx_convert_squeeze, "squeeze"},
    {"", "Unsqueeze", 1, 2, onnx_convert_unsqueeze, "expand_dims"},
    {"", "Concat", 1, -1, onnx_convert_concat, "concatenate"},
    {"", "Split", 1, 2, onnx_convert_split, "split"},
    {"", "Slice", 1, 5, onnx_convert_slice,
     "strided_slice dyn.strided_slice cast shape_of concatenate"},
    {"", "Gather", 2, 2, onnx_convert_gather, "take"},
    {"", "Expand", 2, 2, onnx_convert_expand,
     "broadcast_to dyn.broadcast_to shape_of concatenate maximum cast"},
    {"", "Tile", 2, 2, onnx_convert_tile, "tile dyn.tile cast"},
    {"", "Pad", 1, 4, onnx_convert_pad, "nn.pad dyn.nn.pad reshape transpose cast"},
    {"", "Shape", 1, 1, onnx_convert_shape, "shape_of strided_slice"},
    {"", "Size", 1, 1, onnx_convert_size, "ndarray_size"},
    {"", "ConstantOfShape", 1, 1, onnx_convert_constant_of_shape, "full dyn.full"},
    {"", "Range", 3, 3, onnx_convert_range, "arange"},
    /* quantization (onnx_layers.c) */
    {"", "QuantizeLinear", 2, 3, onnx_convert_quantize_linear, "qnn.quantize reshape cast"},
    {"", "DequantizeLinear", 2, 3, onnx_convert_dequantize_linear, "qnn.dequantize reshape cast"},
    {"", "DynamicQuantizeLinear", 1, 1, onnx_convert_dynamic_quantize_linear,
     "min max minimum maximum subtract divide negative qnn.quantize reshape cast"},
    {"", "MatMulInteger", 2, 4, onnx_convert_matmul_integer, QMATMUL},
    {"", "QLinearMatMul", 8, 8, onnx_convert_qlinear_matmul, QMATMUL " multiply divide qnn.quantize"},
    {"", "ConvInteger", 2, 4, onnx_convert_conv_integer, QCONV},
    {"", "QLinearConv", 8, 9, onnx_convert_qlinear_conv,
     QCONV " nn.bias_add multiply divide qnn.quantize"},
};
/* clang-format on */

enum { NTABLE = sizeof table / sizeof table[0] };

int onnx_op_count(void) { return NTABLE; }
const OnnxOpDef *onnx_op_get(int i) { return i >= 0 && i < NTABLE ? &table[i] : NULL; }

const OnnxOpDef *onnx_op_find(const char *domain, const char *op_type) {
  for (int i = 0; i < NTABLE; i++)
    if (strcmp(table[i].domain, domain) == 0 && strcmp(table[i].op_type, op_type) == 0)
      return &table[i];
  return NULL;
}

bool onnx_row_allows(const OnnxOpDef *row, const char *op) {
  size_t n = strlen(op);
  for (const char *p = row->relay_ops; (p = strstr(p, op)); p += n)
    if ((p == row->relay_ops || p[-1] == ' ') && (p[n] == ' ' || !p[n])) return true;
  return false;
}

const char *onnx_supported_ops(void) {
  static char buf[4096];
  if (buf[0]) return buf;
  size_t k = 0;
  for (int i = 0; i < NTABLE && k + 64 < sizeof buf; i++)
    k += (size_t)snprintf(buf + k, sizeof buf - k, "%s%s%s%s", i ? " " : "", table[i].domain,
                          *table[i].domain ? "." : "", table[i].op_type);
  return buf;
}
