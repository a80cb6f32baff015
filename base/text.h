/*
 * text: the one comparison of optional C strings every layer needs.
 * Header-only; pure.
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

#endif
