/* compute_knobs.h — the knobs of the compute rules: the block sizes and
 * choices a rule hard-codes by default (register tile widths, tile rows,
 * panel widths, which loop is parallel), each with the values a tuner may
 * try.  KNOBS below is the one table; a rule reads a knob with lc_knob
 * (lower/compute/compute.h), which gives the row's default unless the
 * lowering was handed a setting (LowerKnobs) that overrides it.  Every
 * value of a row is correct (the rule computes the same result, within
 * float rounding); only its speed differs.  Value 0 of a knob whose
 * default is 0 means "the rule's own choice" (by shape and target).
 *
 * Settings have a text form, "conv2d.tile=7 product.mr=4" (knobs at
 * their default left out), which the tuning database keeps. */
#ifndef RLY_COMPUTE_KNOBS_H
#define RLY_COMPUTE_KNOBS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* X(id, rule, name, default, what, values...): values are the candidates,
 * the default among them. */
/* clang-format off */
#define KNOBS(X)                                                                                   \
  X(CONV2D_TILE, "conv2d", "tile", 0, "output columns per register tile (0: by width and target)", \
    0, 4, 6, 7, 8, 12, 14, 16, 28)                                                                 \
  X(CONV2D_WINOGRAD, "conv2d", "winograd", 1, "a 3x3 convolution may use Winograd F(2x2, 3x3)",   \
    1, 0)                                                                                          \
  X(CONV2D_OC_REGS, "conv2d", "oc_regs", 1,                                                        \
    "output channels per block, in vector registers (NCHW convolutions)", 1, 2)                    \
  X(CONV2D_PW_ROWS, "conv2d", "pw_rows", 0,                                                       \
    "output channels per tile of a 1x1 NCHW convolution, at most (0: by row width and target)",    \
    0, 4, 6, 8, 12, 16, 24)                                                                         \
  X(CONV2D_GROUP_CB, "conv2d", "group_cb", 16,                                                    \
    "input channels per packed block of a grouped convolution, at most", 16, 4, 8, 32)              \
  X(CONV2D_GROUP_TILE, "conv2d", "group_tile", 0,                                                  \
    "output columns per register tile of a grouped convolution (0: the blocked one's)",            \
    0, 4, 6, 7, 8, 12, 14)                                                                         \
  X(CONV2D_ROTATE_MAX, "conv2d", "rotate_max", 8,                                                  \
    "widest group whose inputs rotate in registers (0: never; block-diagonal weights)", 8, 0, 4,   \
    16)                                                                                            \
  X(CONV2D_ROTATE_TILE, "conv2d", "rotate_tile", 4, "output columns per rotated tile", 4, 2, 3,    \
    5, 6, 7)                                                                                       \
  X(PRODUCT_MR, "product", "mr", 0, "rows per register tile (0: by row count and target)",         \
    0, 2, 3, 4, 5, 6, 8)                                                                           \
  X(PRODUCT_NR_REGS, "product", "nr_regs", 2,                                                      \
    "columns per panel, in vector registers (weights packed per call)", 2, 1, 3)                   \
  X(PRODUCT_SPLIT, "product", "split", 0,                                                          \
    "the parallel loop: 0 by panel count, 1 row blocks, 2 column panels", 0, 1, 2)
/* clang-format on */

typedef enum KnobId {
#define X(id, ...) KNOB_##id,
  KNOBS(X)
#undef X
      KNOB_COUNT
} KnobId;

enum { KNOB_MAX_VALUES = 16 };

typedef struct KnobDef {
  const char *rule, *name, *what;
  int dflt;
  int nvalues;
  int values[KNOB_MAX_VALUES];
} KnobDef;

/* A setting: the knobs it sets (bit id of `set`) and their values. */
typedef struct LowerKnobs {
  uint32_t set;
  int value[KNOB_COUNT];
} LowerKnobs;

const KnobDef *knob_def(KnobId id);
/* "conv2d.tile" → its id, or -1. */
int knob_find(const char *rule_dot_name);
/* The value of knob id under k (k may be NULL): k's, else the default. */
int knob_value(const LowerKnobs *k, KnobId id);
/* k with knob id at v (v the default: unset). */
void knob_set(LowerKnobs *k, KnobId id, int v);
/* "conv2d.tile=7 product.mr=4" (the knobs set, in table order; "" when
 * none); the buffer's text. */
const char *knob_text(const LowerKnobs *k, char *buf, size_t n);
/* Parses knob_text's form (words separated by spaces or commas) into k; false (k partly set) on an
 * unknown knob or a value that is not one of its row's. */
bool knob_parse(const char *text, LowerKnobs *k);

#endif
