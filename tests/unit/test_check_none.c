/* test_check_none.c — check.h's own test: a unit test binary that ran no
 * CHECK fails (meson expects this one to fail: should_fail). */
#include "check.h"

int main(void) { return check_report("test_check_none"); }
