/* tir_verify.c — (being written) */
typedef int rly_placeholder_tir_verify;
