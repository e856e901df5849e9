/* exporters: the node exporters agents and dashboards already scrape (Kepler 0.7, Kepler 0.12,
 * NVIDIA's dcgm-exporter, AMD's ROCm device-metrics-exporter), served per node by `hwemu serve`
 * and computed on request from the telemetry snapshot (see exporters.c). */
#ifndef HWEMU_EXPORTERS_H
#define HWEMU_EXPORTERS_H
#include <stddef.h>

struct engine;
struct telemetry;

enum exporter { EXP_KEPLER_07 = 0, EXP_KEPLER_012, EXP_DCGM, EXP_ROCM, EXP_COUNT };

/* Parses a SIM_EXPORTERS list ("kepler-0.7,dcgm-exporter"; "" or "none": none) into a bit mask
 * (1u << enum exporter). 0, or -1 with a message naming the bad entry in err. */
int exporters_parse(const char *list, unsigned *mask, char *err, size_t errlen);

/* Answers GET `path` (the URL after "/exporters/") for the snapshot t, which the caller holds
 * under rcu_read_lock. node_arg is the ?node= argument (may be NULL). Returns the HTTP status
 * with a malloc'd body (*body, *len; NULL on out of memory) and its Content-Type (*type). */
unsigned exporters_http(const struct engine *e, const struct telemetry *t, const char *path, const char *node_arg,
                        char **body, size_t *len, const char **type);

#endif
