/* equal.c — (being written) */
typedef int rly_placeholder_equal;
