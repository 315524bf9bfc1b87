/* check.h — a tiny unit-test harness: CHECK(cond) and CHECK_STREQ(a, b)
 * count and report failures with file:line; main returns non-zero if any
 * failed, or if none ran (a test that checks nothing proves nothing), and
 * prints "N passed, N failed". */
#ifndef RLY_CHECK_H
#define RLY_CHECK_H

#include <stdio.h>
#include <string.h>

static int check_passed, check_failed;

#define CHECK(c)                                                            \
  do {                                                                      \
    if (c)                                                                  \
      check_passed++;                                                       \
    else {                                                                  \
      check_failed++;                                                       \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #c); \
    }                                                                       \
  } while (0)

#define CHECK_STREQ(a, b)                                                                       \
  do {                                                                                          \
    const char *check_a_ = (a), *check_b_ = (b);                                                \
    if (check_a_ && check_b_ && strcmp(check_a_, check_b_) == 0)                                \
      check_passed++;                                                                           \
    else {                                                                                      \
      check_failed++;                                                                           \
      fprintf(stderr, "%s:%d: CHECK_STREQ failed:\n  got:      %s\n  expected: %s\n", __FILE__, \
              __LINE__, check_a_ ? check_a_ : "(null)", check_b_ ? check_b_ : "(null)");        \
    }                                                                                           \
  } while (0)

static inline int check_report(const char *suite) {
  printf("%s: %d passed, %d failed\n", suite, check_passed, check_failed);
  if (check_passed + check_failed == 0) fprintf(stderr, "%s: no CHECK ran\n", suite);
  return check_failed != 0 || check_passed + check_failed == 0;
}

#endif
