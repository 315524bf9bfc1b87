/* tir.c — the TIR name tables: operator text and precedence, intrinsic
 * names and arities, loop and statement kind names.  Every table is
 * generated from the X-macros in ir/tir.h, so adding an operator or an
 * intrinsic there is the only edit needed here.  (The TIR printer lives
 * with the other printers in ir/print.c, equality in ir/equal.c.)  Only
 * libc: the JIT's code generator module is built with this file too. */
#include "ir/tir.h"

#include <string.h>

static const struct {
  const char *text;
  int prec;
} binops[] = {
#define X(e, s, p) {s, p},
    PRIM_BINOPS(X)
#undef X
};

static const struct {
  const char *name;
  int arity;
} intrinsics[] = {
#define X(e, s, n, k) {s, n},
    PRIM_INTRINSICS(X)
#undef X
};

static const char *const loop_names[] = {
#define X(e, n) n,
    LOOP_KINDS(X)
#undef X
};

static const char *const stmt_names[] = {
#define X(e, n) n,
    STMT_KINDS(X)
#undef X
};

const char *prim_binop_text(PrimBinOp op) { return binops[op].text; }
int prim_binop_prec(PrimBinOp op) { return binops[op].prec; }
const char *prim_intrinsic_name(PrimIntrinsic fn) { return intrinsics[fn].name; }
int prim_intrinsic_arity(PrimIntrinsic fn) { return intrinsics[fn].arity; }
const char *loop_kind_name(LoopKind k) { return loop_names[k]; }
const char *stmt_kind_name(StmtKind k) { return stmt_names[k]; }

int prim_intrinsic_lookup(const char *name) {
  for (int i = 0; i < PI_COUNT; i++)
    if (strcmp(intrinsics[i].name, name) == 0) return i;
  return -1;
}
