/* op_doc.c — an op's signature as :doc, `rly --list-ops` and the arity and
 * attribute errors write it, from its row: the argument names (OpDef.args),
 * then each attribute (OpAttrSpec) with its kind and default.  A row
 * without argument names gets x, y (or x1, x2, ...) by its arity. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/ops.h"

const char *ops_attr_kind_name(AttrKind k) {
  switch (k) {
    case AV_INT:
      return "int";
    case AV_FLOAT:
      return "float";
    case AV_BOOL:
      return "bool";
    case AV_STR:
      return "string";
    case AV_LIST:
      return "ints";
    case AV_NONE:
      return "int or None";
    default:
      return "value";
  }
}

/* The argument names written for a row without OpDef.args. */
static void default_args(const OpDef *op, StrBuf *b) {
  int n = op->max_args < 0 ? op->min_args : op->max_args;
  for (int i = 0; i < n; i++) {
    if (n <= 2)
      sb_printf(b, "%s%s", i ? ", " : "", i ? "y" : "x");
    else
      sb_printf(b, "%sx%d", i ? ", " : "", i + 1);
  }
  if (op->max_args < 0) sb_puts(b, n ? ", ..." : "...");
}

/* Whether `name` is one of the comma-separated words of list. */
static bool in_list(const char *list, const char *name) {
  size_t n = strlen(name);
  for (const char *p = list; p && *p;) {
    while (*p == ' ' || *p == ',' || *p == '[' || *p == ']') p++;
    size_t k = strcspn(p, ",]");
    if (k == n && strncmp(p, name, n) == 0) return true;
    p += k;
  }
  return false;
}

const char *ops_arg_name(const OpDef *op, int i, char *buf, size_t cap) {
  StrBuf b = {0};
  if (op->args)
    sb_puts(&b, op->args);
  else
    default_args(op, &b);
  const char *p = b.data ? b.data : "";
  for (int k = 0; k < i && *p; k++) p += strcspn(p, ","), p += *p == ',';
  while (*p == ' ' || *p == '[') p++;
  size_t n = strcspn(p, ",]");
  snprintf(buf, cap, "%.*s", (int)n, strcmp(p, "...") == 0 ? "" : p);
  sb_free(&b);
  return buf;
}

char *ops_signature(const OpDef *op) {
  StrBuf b = {0};
  sb_printf(&b, "%s(", op->name);
  size_t start = b.len;
  if (op->args)
    sb_puts(&b, op->args);
  else
    default_args(op, &b);
  for (const OpAttrSpec *s = op->attrs; s && s->name; s++) {
    if (in_list(op->args, s->name)) continue;
    sb_printf(&b, "%s%s: %s", b.len > start ? ", " : "", s->name, ops_attr_kind_name(s->kind));
    if (s->def) sb_printf(&b, " = %s", s->def);
  }
  sb_putc(&b, ')');
  return b.data;
}
