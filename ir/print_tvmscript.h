/* print_tvmscript.h — TVMScript out: prim functions as TVM's parser reads
 * them (`@T.prim_func def f(A: T.Buffer((1, 128), "float32")): ...`), one or
 * a module of them (`@I.ir_module class Module:`).  parser/tvmscript.c
 * reads the text back to the same functions. */
#ifndef RLY_PRINT_TVMSCRIPT_H
#define RLY_PRINT_TVMSCRIPT_H

#include "ir/ir.h"
#include "ir/tir.h"

/* f as `@T.prim_func def ...`, each line indented by ind spaces. */
void print_tvmscript_prim_to(StrBuf *b, const PrimFunc *f, int ind);
/* The imports and `@I.ir_module class Module:` holding the prim functions
 * of defs; the other definitions are named in a comment. */
void print_tvmscript_module_to(StrBuf *b, const Def *const *defs, int n);

#endif
