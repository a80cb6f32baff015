/*
 * Transitional: the allocation policy moved to base/alloc.h. This header
 * only forwards there until tools-renames.sh rewrites every include and
 * deletes it (the rename: commit); nothing new may include it.
 */
#ifndef MODEL_ALLOC_H
#define MODEL_ALLOC_H

#include "base/alloc.h"

#endif
