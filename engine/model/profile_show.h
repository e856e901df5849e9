/* profile_show: `hwemu profiles show NAME`: every fact of a merged profile with its source,
 * one per line in document order, then the sources the profile cites.
 *   <dotted.key> = <value>    [<provenance>]
 * Plain settings show "[plain]". Lists of values print as [a, b, c]. */
#ifndef HWEMU_PROFILE_SHOW_H
#define HWEMU_PROFILE_SHOW_H
#include <stdio.h>

struct profile;

void profile_show(FILE *out, const struct profile *p);

#endif
