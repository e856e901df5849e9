/* redfish: a DMTF Redfish service over the engine's HTTP, read from the telemetry snapshot: one
 * chassis per node (redfish.c lists the resources and fields). */
#ifndef HWEMU_REDFISH_H
#define HWEMU_REDFISH_H
#include <stddef.h>

struct telemetry;

/* Answers GET `url` (starting "/redfish") for the snapshot t, which the caller holds under
 * rcu_read_lock. Returns the HTTP status with a malloc'd JSON body (*body, *len; NULL on out of
 * memory), or 0 with no body: the node's BMC does not answer (a node that lost its power),
 * the connection is to close without a response. */
unsigned redfish_http(const struct telemetry *t, const char *url, char **body, size_t *len, int *retry_after);

#endif
