/* report: `hwemu report`: one self-contained HTML report of one run or several side by side
 * (docs/runs.md "Reports"), from their run directories (summary.json, jobs.jsonl, course.jsonl),
 * with the page's chart library (uPlot, web_files) and report.js embedded in it: nothing is
 * fetched when it is viewed; and the same comparison table as CSV.
 * Owns: reading the run directories, the table against the first run (the baseline), the HTML
 * and CSV. Never: a running engine (it reads files only). */
#ifndef HWEMU_REPORT_H
#define HWEMU_REPORT_H
#include <stdbool.h>
#include <stddef.h>

/* Writes the report of dirs[0..n) (dirs[0] the baseline) to html (and the table to csv, unless
 * NULL). 0, or -1 with what went wrong, where, and what to do in err. */
int report_write(const char *const *dirs, int n, const char *html, const char *csv, char *err, size_t errlen);
/* The same report's HTML (the bytes report_write writes), malloc'd, its length in len; NULL with
 * what went wrong in err. For GET /runs/<runId>/report (http_runs.c), made on request. */
char *report_html(const char *const *dirs, int n, size_t *len, char *err, size_t errlen);
/* Whether this binary has the chart library the report embeds (built with the web page). */
bool report_available(void);

#endif
