/* tir.c — (being written) */
typedef int rly_placeholder_tir;
