/* main.c — the rly command line (placeholder until the CLI lands). */
#include <stdio.h>
int main(void) { puts("rly"); return 0; }
