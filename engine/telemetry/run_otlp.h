/* run_otlp: a workload run's OTLP JSON Lines in <run dir>/otlp/ (docs/runs.md "Outputs"):
 * logs.jsonl, one ExportLogsServiceRequest per job event (the LogRecord encoding of the OTLP
 * push, otlp_json.c), and metrics.jsonl, one ExportMetricsServiceRequest of the run's job
 * metrics (joulie_sim_job_submitted_total, joulie_sim_job_completed_total,
 * joulie_sim_node_running_pods, joulie_sim_job_completion_seconds) every 60 ticks and at the
 * run's end. Never: the network (the push is otlp.c), run state. */
#ifndef HWEMU_RUN_OTLP_H
#define HWEMU_RUN_OTLP_H

struct runs;

/* Watches m's runs (runs_set_tap) for as long as m lives. */
void run_otlp_attach(struct runs *m);
/* Closes what is open; call after runs_detach. */
void run_otlp_close(void);

#endif
