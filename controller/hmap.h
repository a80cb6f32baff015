/*
 * Transitional: the hash map moved to base/hmap.h. This header only
 * forwards there until tools-renames.sh rewrites every include and deletes
 * it (the rename: commit); nothing new may include it.
 */
#ifndef CONTROLLER_HMAP_H
#define CONTROLLER_HMAP_H

#include "base/hmap.h"

#endif
