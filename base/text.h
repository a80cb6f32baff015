/*
 * text: the one comparison of optional C strings every layer needs, and
 * the value of a hex digit. Header-only; pure.
 */
#ifndef BASE_TEXT_H
#define BASE_TEXT_H

#include <stdbool.h>
#include <string.h>

/* True when a and b are both NULL or both hold the same text. */
static inline bool text_same(const char *a, const char *b)
{
	return a && b ? !strcmp(a, b) : a == b;
}

/* The value of the hex digit c (either case), or -1. */
static inline int text_hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

#endif
