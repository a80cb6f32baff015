/*
 * dlist: an intrusive, circular doubly-linked list, as the Linux kernel's
 * list.h: a struct dlist node is embedded in each element and a separate
 * struct dlist is the list head, so insertion and removal are O(1) without
 * allocation and without the NULL-head special cases of a hand-written
 * prev/next pair.
 *
 * An initialised node points to itself: that is both the empty list and
 * an element on no list, so removing twice, or removing an element that
 * was never inserted, is harmless. Owns nothing; header-only; pure.
 */
#ifndef BASE_DLIST_H
#define BASE_DLIST_H

#include <stdbool.h>
#include <stddef.h>

struct dlist {
	struct dlist *prev; /* the head's prev is the last element */
	struct dlist *next; /* the head's next is the first element */
};

/* A head or node initialised where it is defined: DLIST_INIT(name). */
#define DLIST_INIT(name) { &(name), &(name) }

/* Makes n an empty list (or an element on no list). */
static inline void dlist_init(struct dlist *n)
{
	n->prev = n->next = n;
}

/* True when head has no element (or the node n is on no list). */
static inline bool dlist_empty(const struct dlist *head)
{
	return head->next == head;
}

/* Links n (on no list) right after at: at the front when at is a head. */
static inline void dlist_insert_after(struct dlist *at, struct dlist *n)
{
	n->prev = at;
	n->next = at->next;
	at->next->prev = n;
	at->next = n;
}

/* Links n (on no list) right before at: at the back when at is a head. */
static inline void dlist_insert_before(struct dlist *at, struct dlist *n)
{
	dlist_insert_after(at->prev, n);
}

/* Unlinks n from its list, if any; n is left on no list. */
static inline void dlist_remove(struct dlist *n)
{
	n->prev->next = n->next;
	n->next->prev = n->prev;
	dlist_init(n);
}

/* The first element of head, or NULL when it is empty. */
static inline struct dlist *dlist_first(const struct dlist *head)
{
	return dlist_empty(head) ? NULL : head->next;
}

/* The element that holds node ptr: DLIST_ENTRY(n, struct conn, link). */
#define DLIST_ENTRY(ptr, type, member) \
	((type *)(void *)((char *)(ptr) - offsetof(type, member)))

/* Visits every node of head in order; the loop body must not remove pos
 * (use DLIST_FOREACH_SAFE for that). */
#define DLIST_FOREACH(pos, head) \
	for ((pos) = (head)->next; (pos) != (head); (pos) = (pos)->next)

/* The same, allowing the body to remove (and free) pos; tmp is a second
 * struct dlist * that holds the next node. */
#define DLIST_FOREACH_SAFE(pos, tmp, head) \
	for ((pos) = (head)->next, (tmp) = (pos)->next; (pos) != (head); \
	     (pos) = (tmp), (tmp) = (pos)->next)

#endif
