/* k8s: the Kubernetes syntax rules hwemu checks before it emits a Node: label keys and
 * values, and resource quantities ("500m", "4Gi"). Pure functions, no allocation. */
#ifndef HWEMU_K8S_H
#define HWEMU_K8S_H
#include <stdbool.h>

/* NULL when acceptable to the API server, else the reason ("is longer than 63 characters"). */
const char *k8s_label_key_problem(const char *key);
const char *k8s_label_value_problem(const char *value);
/* A quantity in milli-units (milli) or plain units (bytes); false when unparsable or negative. */
bool k8s_quantity(const char *s, bool milli, long double *out);

#endif
