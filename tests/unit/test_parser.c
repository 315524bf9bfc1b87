/* test_parser.c — unit tests (being written). */
#include "tests/unit/check.h"
int main(void) { CHECK(1); return check_report("test_parser"); }
