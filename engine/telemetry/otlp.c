/* otlp: the exporter thread, its configuration, queues, HTTP and retries; see otlp.h.
 * One thread does everything that may wait: building the bodies (otlp_json.c) and POSTing them
 * with libcurl, one keep-alive handle per signal. Each signal (metrics, logs) has a queue of at
 * most OTLP_MAX_PENDING bodies; a new batch on a full queue drops the oldest, and the drops are
 * counted (joulie_sim_otlp_dropped_batches_total) and reported on stderr at most once a minute.
 * The head of a queue is sent until the collector takes it (2xx) or refuses it for good (any
 * other status than 429/502/503/504): a retryable failure waits Retry-After when the answer has
 * one, else an exponential backoff with jitter (0.5 s doubling up to 30 s), and is resent with
 * the same body, so a batch is delivered once unless an answer is lost on the way back.
 *
 * The thread runs at nice 19 (setpriority on its own thread id: Linux's nice is per thread):
 * building a batch of 1,000 nodes and sending it costs CPU time that must not come out of the
 * tick. At nice 19 it weighs 15 against a tick worker's 1024, so a worker sharing a CPU with it
 * loses about 1.5 %, and a waking worker preempts it. SCHED_IDLE (weight 3) cost the tick the
 * same but starved the exporter when no CPU was idle (about half the batches, or none of a large
 * cluster's, under busy loops: bench/README.md); nice 19 still gets its small share. Nothing the
 * tick path touches is ever held by this thread: the event sink pushes records onto a lock-free
 * list (the thread takes the whole list with one exchange) and wakes it through an eventfd, so
 * the low-priority thread, preempted at any instant, delays no worker. */
#include "otlp.h"

#include "engine.h"
#include "events.h"

#include <cjson/cJSON.h>
#include <curl/curl.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

/* The value of an environment variable, or NULL when unset or empty. */
static const char *env_value(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}

#define MAX_RECORDS 4096       /* log records waiting for a batch; more are dropped and counted */
#define RECORDS_PER_BATCH 1024 /* a logs batch is cut early when this many are waiting */
#define BACKOFF_MIN_MS 500
#define BACKOFF_MAX_MS 30000
#define REPORT_MS 60000
#define MAX_RESPONSE (4 << 20)

struct batch {
    char *body;
    uint64_t records; /* log records in it (0 for metrics) */
};

struct signal {
    const char *what; /* "metrics", "logs" */
    char *url;
    long timeout_ms;
    struct curl_slist *headers;
    CURL *curl;
    struct batch q[OTLP_MAX_PENDING];
    int head, n;
    int64_t retry_at;     /* CLOCK_MONOTONIC ms; the head waits until then */
    int attempts;         /* failed attempts of the head */
    bool answered;        /* the collector answered the last request (a final flush is worth it) */
    int64_t retry_after;  /* ms from the last answer's Retry-After, -1 none */
    size_t response_size; /* bytes of the last answer's body */
    uint64_t sent, rejected;
    char last_error[CURL_ERROR_SIZE + 64];
};

/* A pending log record on the sink's list (newest first). */
struct rec {
    struct rec *next;
    struct otlp_log log;
};

struct otlp {
    struct telemetry **snapshot;
    int64_t start_wall_ns;
    int64_t interval_ms, logs_delay_ms;
    char *service_name;
    struct otlp_kv *attrs;
    int nattrs;
    struct otlp_resource res;
    bool metrics_on, logs_on;
    struct signal metrics, logs;
    uint64_t last_tick;
    pthread_t thread;
    bool started;
    int wake_fd; /* eventfd: stop, or records waiting */
    atomic_bool stop;
    _Atomic(struct rec *) recs; /* pushed by the sink, taken whole by the exporter */
    atomic_int nrecs;           /* records pushed (or being pushed) and not taken yet */
    _Atomic uint64_t dropped, dropped_records;
    uint64_t reported_drops, reported_rejects;
    int64_t last_report;
    unsigned rng;
};

static int64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* --- configuration --- */

static int env_ms(const char *name, int64_t *out, bool positive, char *err, size_t errlen)
{
    const char *v = env_value(name);
    if (!v)
        return 0;
    char *end;
    errno = 0;
    long long ms = strtoll(v, &end, 10);
    if (errno || *end || end == v || ms < 0 || (positive && !ms) || ms > 86400000LL) {
        snprintf(err, errlen, "%s=\"%s\" is not a number of milliseconds%s", name, v,
                 positive ? " above 0" : "");
        return -1;
    }
    *out = ms;
    return 0;
}

/* The per-signal variable if set, else the general one (with suffix appended for the endpoint). */
static char *signal_url(const char *signal_var, const char *suffix)
{
    const char *v = env_value(signal_var), *base = env_value("OTEL_EXPORTER_OTLP_ENDPOINT");
    if (v)
        return strdup(v);
    if (!base)
        return NULL;
    size_t n = strlen(base);
    while (n && base[n - 1] == '/')
        n--;
    char *url = malloc(n + strlen(suffix) + 1);
    if (!url)
        abort();
    memcpy(url, base, n);
    strcpy(url + n, suffix);
    return url;
}

static int signal_config(struct signal *s, const char *what, const char *upper, const char *suffix, char *err,
                         size_t errlen)
{
    char var[96];
    s->what = what;
    s->retry_after = -1;
    snprintf(var, sizeof var, "OTEL_EXPORTER_OTLP_%s_ENDPOINT", upper);
    s->url = signal_url(var, suffix);
    if (!s->url)
        return 0;
    int64_t timeout = 10000;
    snprintf(var, sizeof var, "OTEL_EXPORTER_OTLP_%s_TIMEOUT", upper);
    if (env_ms("OTEL_EXPORTER_OTLP_TIMEOUT", &timeout, true, err, errlen) ||
        env_ms(var, &timeout, true, err, errlen))
        return -1;
    s->timeout_ms = (long)timeout;
    /* headers: the general list, then the signal's, which wins for the same key */
    struct otlp_kv *kv = NULL;
    int n = 0;
    snprintf(var, sizeof var, "OTEL_EXPORTER_OTLP_%s_HEADERS", upper);
    const char *names[2] = {"OTEL_EXPORTER_OTLP_HEADERS", var};
    for (int i = 0; i < 2; i++) {
        if (otlp_parse_kv_list(env_value(names[i]), &kv, &n)) {
            snprintf(err, errlen, "%s=\"%s\" is not a list of key=value pairs separated by commas", names[i],
                     env_value(names[i]));
            otlp_free_kv(kv, n);
            return -1;
        }
    }
    s->headers = curl_slist_append(NULL, "Content-Type: application/json");
    s->headers = curl_slist_append(s->headers, "Expect:");
    for (int i = 0; i < n; i++) {
        bool later = false;
        for (int j = i + 1; j < n; j++)
            later |= !strcasecmp(kv[i].key, kv[j].key);
        if (later || !strcasecmp(kv[i].key, "content-type"))
            continue;
        char *line;
        if (asprintf(&line, "%s: %s", kv[i].key, kv[i].value) < 0)
            abort();
        s->headers = curl_slist_append(s->headers, line);
        free(line);
    }
    otlp_free_kv(kv, n);
    snprintf(var, sizeof var, "OTEL_EXPORTER_OTLP_%s_PROTOCOL", upper);
    const char *proto = env_value(var) ? env_value(var) : env_value("OTEL_EXPORTER_OTLP_PROTOCOL");
    if (proto && strcmp(proto, "http/json"))
        fprintf(stderr, "hwemu serve: OTLP %s: protocol \"%s\" is not supported; sending http/json\n", what, proto);
    return 1;
}

static int resource_config(struct otlp *o, char *err, size_t errlen)
{
    const char *ra = env_value("OTEL_RESOURCE_ATTRIBUTES");
    if (otlp_parse_kv_list(ra, &o->attrs, &o->nattrs)) {
        snprintf(err, errlen, "OTEL_RESOURCE_ATTRIBUTES=\"%s\" is not a list of key=value pairs separated by commas",
                 ra);
        return -1;
    }
    const char *name = env_value("OTEL_SERVICE_NAME");
    for (int i = 0; !name && i < o->nattrs; i++)
        if (!strcmp(o->attrs[i].key, "service.name"))
            name = o->attrs[i].value;
    o->service_name = strdup(name ? name : "hwemu");
    o->res = (struct otlp_resource){.service_name = o->service_name, .extra = o->attrs, .nextra = o->nattrs};
    return 0;
}

/* --- queues and HTTP --- */

static void enqueue(struct otlp *o, struct signal *s, char *body, uint64_t records)
{
    if (s->n == OTLP_MAX_PENDING) { /* the collector is behind: the oldest goes */
        free(s->q[s->head].body);
        s->head = (s->head + 1) % OTLP_MAX_PENDING;
        s->n--;
        s->attempts = 0;
        atomic_fetch_add(&o->dropped, 1);
    }
    s->q[(s->head + s->n) % OTLP_MAX_PENDING] = (struct batch){.body = body, .records = records};
    s->n++;
}

static void pop(struct signal *s)
{
    free(s->q[s->head].body);
    s->head = (s->head + 1) % OTLP_MAX_PENDING;
    s->n--;
    s->attempts = 0;
}

static size_t on_header(char *buf, size_t size, size_t nitems, void *arg)
{
    struct signal *s = arg;
    size_t len = size * nitems;
    if (len > 12 && !strncasecmp(buf, "Retry-After:", 12)) {
        char v[128];
        size_t n = len - 12 < sizeof v - 1 ? len - 12 : sizeof v - 1;
        memcpy(v, buf + 12, n);
        v[n] = 0;
        char *p = v + strspn(v, " \t"), *end;
        p[strcspn(p, "\r\n")] = 0;
        long secs = strtol(p, &end, 10);
        if (end != p && !*end && secs >= 0) {
            s->retry_after = secs * 1000;
        } else {
            time_t when = curl_getdate(p, NULL);
            if (when != -1)
                s->retry_after = when > time(NULL) ? (int64_t)(when - time(NULL)) * 1000 : 0;
        }
    }
    return len;
}

static size_t on_body(char *buf, size_t size, size_t nmemb, void *arg)
{
    struct signal *s = arg;
    s->response_size += size * nmemb;
    return s->response_size > MAX_RESPONSE ? 0 : size * nmemb;
}

static int on_progress(void *arg, curl_off_t a, curl_off_t b, curl_off_t c, curl_off_t d)
{
    struct otlp *o = arg;
    return atomic_load(&o->stop) ? 1 : 0; /* abort a transfer when the engine stops */
}

enum outcome { SENT, RETRY, REFUSED };

static enum outcome post(struct otlp *o, struct signal *s, const char *body, long timeout_ms)
{
    if (!s->curl) {
        s->curl = curl_easy_init();
        if (!s->curl) {
            snprintf(s->last_error, sizeof s->last_error, "cannot create a libcurl handle");
            return RETRY;
        }
    }
    char errbuf[CURL_ERROR_SIZE] = "";
    CURL *c = s->curl;
    curl_easy_setopt(c, CURLOPT_URL, s->url);
    curl_easy_setopt(c, CURLOPT_POST, 1L);
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(body));
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, s->headers);
    curl_easy_setopt(c, CURLOPT_USERAGENT, "hwemu-OTLP-Exporter-C/0.1.0");
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, timeout_ms);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, s);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, s);
    curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
    curl_easy_setopt(c, CURLOPT_XFERINFODATA, o);
    s->retry_after = -1;
    s->response_size = 0;
    CURLcode rc = curl_easy_perform(c);
    long status = 0;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    if (rc != CURLE_OK && !(rc == CURLE_WRITE_ERROR && status)) {
        s->answered = false;
        snprintf(s->last_error, sizeof s->last_error, "%s: %s", s->url, *errbuf ? errbuf : curl_easy_strerror(rc));
        return RETRY;
    }
    s->answered = true;
    if (status >= 200 && status < 300)
        return SENT;
    snprintf(s->last_error, sizeof s->last_error, "%s: HTTP %ld", s->url, status);
    return status == 429 || status == 502 || status == 503 || status == 504 ? RETRY : REFUSED;
}

/* Sends the head of the queue while it is due; returns after a retryable failure. */
static void send_due(struct otlp *o, struct signal *s)
{
    while (s->n && mono_ms() >= s->retry_at && !atomic_load(&o->stop)) {
        enum outcome r = post(o, s, s->q[s->head].body, s->timeout_ms);
        if (atomic_load(&o->stop))
            return;
        if (r == SENT) {
            s->sent++;
            pop(s);
        } else if (r == REFUSED) {
            s->rejected++;
            pop(s);
        } else {
            int shift = s->attempts < 6 ? s->attempts : 6;
            int64_t backoff = (int64_t)BACKOFF_MIN_MS << shift;
            if (backoff > BACKOFF_MAX_MS)
                backoff = BACKOFF_MAX_MS;
            backoff = backoff / 2 + rand_r(&o->rng) % (backoff / 2 + 1); /* jitter: half to all of it */
            s->attempts++;
            s->retry_at = mono_ms() + (s->retry_after >= 0 ? s->retry_after : backoff);
            return;
        }
    }
}

static void report(struct otlp *o, int64_t now)
{
    uint64_t drops = atomic_load(&o->dropped), lost = atomic_load(&o->dropped_records);
    uint64_t rejects = o->metrics.rejected + o->logs.rejected;
    if ((drops + lost == o->reported_drops && rejects == o->reported_rejects) ||
        (o->last_report && now - o->last_report < REPORT_MS))
        return;
    const struct signal *s = o->metrics.last_error[0] ? &o->metrics : &o->logs;
    fprintf(stderr, "hwemu serve: OTLP: %llu batches dropped (collector behind or down), %llu log records lost, "
            "%llu batches refused by the collector so far; last error: %s\n", (unsigned long long)drops,
            (unsigned long long)lost, (unsigned long long)rejects, s->last_error[0] ? s->last_error : "none");
    o->reported_drops = drops + lost;
    o->reported_rejects = rejects;
    o->last_report = now;
}

static void collect_metrics(struct otlp *o)
{
    rcu_read_lock();
    const struct telemetry *t = rcu_dereference(*o->snapshot);
    char *body = NULL;
    if (t && t->tick != o->last_tick) {
        o->last_tick = t->tick;
        body = otlp_metrics_json(t, &o->res, o->start_wall_ns);
    }
    rcu_read_unlock();
    if (body)
        enqueue(o, &o->metrics, body, 0);
}

static void free_logs(struct otlp_log *l, int n)
{
    for (int i = 0; i < n; i++) {
        free(l[i].node);
        cJSON_Delete(l[i].record);
    }
    free(l);
}

/* Takes every record the sink pushed, oldest first, into one batch. */
static void collect_logs(struct otlp *o)
{
    struct rec *r = atomic_exchange(&o->recs, NULL);
    int n = 0;
    for (struct rec *p = r; p; p = p->next)
        n++;
    if (!n)
        return;
    struct otlp_log *l = malloc(sizeof *l * (size_t)n);
    if (!l)
        abort();
    for (int i = n - 1; i >= 0; i--) {
        struct rec *next = r->next;
        l[i] = r->log;
        free(r);
        r = next;
    }
    atomic_fetch_sub(&o->nrecs, n);
    enqueue(o, &o->logs, otlp_logs_json(l, n, &o->res), (uint64_t)n);
    free_logs(l, n);
}

static void wake(struct otlp *o)
{
    uint64_t one = 1;
    ssize_t rc = write(o->wake_fd, &one, sizeof one);
    (void)rc; /* EAGAIN: a wake-up is pending anyway */
}

/* Sleeps until the CLOCK_MONOTONIC ms `until`, or a wake-up. */
static void sleep_until(struct otlp *o, int64_t until)
{
    int64_t ms = until - mono_ms();
    struct pollfd p = {.fd = o->wake_fd, .events = POLLIN};
    if (ms > 0 && poll(&p, 1, ms > INT32_MAX ? INT32_MAX : (int)ms) > 0) {
        uint64_t v;
        ssize_t rc = read(o->wake_fd, &v, sizeof v);
        (void)rc; /* only resets the eventfd */
    }
}

static void *exporter(void *arg)
{
    struct otlp *o = arg;
    pthread_setname_np(pthread_self(), "hwemu-otlp"); /* for top -H, perf */
    if (setpriority(PRIO_PROCESS, (id_t)gettid(), 19))
        fprintf(stderr, "hwemu serve: OTLP: cannot run the exporter at nice 19; it competes with the tick\n");
    int64_t next_metrics = mono_ms() + o->interval_ms, next_logs = mono_ms() + o->logs_delay_ms;
    while (!atomic_load(&o->stop)) {
        int64_t now = mono_ms();
        if (o->metrics_on && now >= next_metrics) {
            collect_metrics(o);
            next_metrics += o->interval_ms;
            if (next_metrics <= now)
                next_metrics = now + o->interval_ms;
        }
        int waiting = atomic_load(&o->nrecs);
        if (o->logs_on && waiting && (now >= next_logs || waiting >= RECORDS_PER_BATCH)) {
            collect_logs(o);
            next_logs = now + o->logs_delay_ms;
        }
        send_due(o, &o->metrics);
        send_due(o, &o->logs);
        report(o, mono_ms());
        int64_t until = o->metrics_on ? next_metrics : INT64_MAX;
        waiting = atomic_load(&o->nrecs);
        if (waiting && next_logs < until)
            until = next_logs;
        if (o->metrics.n && o->metrics.retry_at < until)
            until = o->metrics.retry_at;
        if (o->logs.n && o->logs.retry_at < until)
            until = o->logs.retry_at;
        if (until == INT64_MAX)
            until = mono_ms() + REPORT_MS;
        if (waiting < RECORDS_PER_BATCH && !atomic_load(&o->stop))
            sleep_until(o, until);
    }
    return NULL;
}

/* --- public --- */

struct otlp *otlp_start(struct telemetry **snapshot, int64_t start_wall_ns, char *err, size_t errlen)
{
    err[0] = 0;
    struct otlp *o = calloc(1, sizeof *o);
    if (!o)
        abort();
    o->snapshot = snapshot;
    o->start_wall_ns = start_wall_ns;
    o->interval_ms = 60000;
    o->logs_delay_ms = 1000;
    o->rng = (unsigned)start_wall_ns ^ (unsigned)(start_wall_ns >> 32);
    o->wake_fd = -1;
    int m = signal_config(&o->metrics, "metrics", "METRICS", "/v1/metrics", err, errlen);
    int l = m < 0 ? -1 : signal_config(&o->logs, "logs", "LOGS", "/v1/logs", err, errlen);
    if (m < 0 || l < 0 || env_ms("OTEL_METRIC_EXPORT_INTERVAL", &o->interval_ms, true, err, errlen) ||
        env_ms("OTEL_BLRP_SCHEDULE_DELAY", &o->logs_delay_ms, true, err, errlen) || resource_config(o, err, errlen) ||
        (!m && !l)) {
        otlp_stop(o);
        return NULL;
    }
    o->metrics_on = m > 0;
    o->logs_on = l > 0;
    curl_global_init(CURL_GLOBAL_DEFAULT);
    o->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (o->wake_fd < 0 || pthread_create(&o->thread, NULL, exporter, o)) {
        snprintf(err, errlen, "cannot start the OTLP exporter thread");
        otlp_stop(o);
        return NULL;
    }
    o->started = true;
    return o;
}

bool otlp_logs_enabled(const struct otlp *o)
{
    return o && o->logs_on;
}

void otlp_event(void *arg, int64_t wall_ns, const char *node, const char *name, const cJSON *attrs)
{
    struct otlp *o = arg;
    int waiting = atomic_fetch_add(&o->nrecs, 1);
    if (waiting >= MAX_RECORDS) {
        atomic_fetch_sub(&o->nrecs, 1);
        atomic_fetch_add(&o->dropped_records, 1);
        return;
    }
    struct rec *r = malloc(sizeof *r);
    char *n = strdup(node);
    if (!r || !n)
        abort();
    r->log = (struct otlp_log){.node = n, .wall_ns = wall_ns, .record = otlp_log_record(wall_ns, name, attrs)};
    r->next = atomic_load(&o->recs);
    while (!atomic_compare_exchange_weak(&o->recs, &r->next, r))
        ;
    /* the first record wakes the exporter to schedule its batch; a full batch goes at once */
    if (waiting == 0 || waiting + 1 == RECORDS_PER_BATCH)
        wake(o);
}

uint64_t otlp_dropped_batches(const struct otlp *o)
{
    return o ? atomic_load(&o->dropped) : 0;
}

static void free_signal(struct signal *s)
{
    while (s->n)
        pop(s);
    if (s->curl)
        curl_easy_cleanup(s->curl);
    curl_slist_free_all(s->headers);
    free(s->url);
}

void otlp_stop(struct otlp *o)
{
    if (!o)
        return;
    if (o->started) {
        atomic_store(&o->stop, true);
        wake(o);
        pthread_join(o->thread, NULL);
        /* A last attempt at what is pending, once each, when the collector was answering. */
        atomic_store(&o->stop, false);
        collect_logs(o);
        struct signal *sigs[2] = {&o->metrics, &o->logs};
        for (int i = 0; i < 2; i++)
            while (sigs[i]->n && sigs[i]->answered && !sigs[i]->attempts) {
                if (post(o, sigs[i], sigs[i]->q[sigs[i]->head].body, 2000) == RETRY)
                    break;
                pop(sigs[i]);
            }
        curl_global_cleanup();
    }
    free_signal(&o->metrics);
    free_signal(&o->logs);
    otlp_free_kv(o->attrs, o->nattrs);
    free(o->service_name);
    if (o->wake_fd >= 0)
        close(o->wake_fd);
    free(o);
}

struct otlp *otlp_attach(struct engine *e, char *err, size_t errlen)
{
    struct otlp *o = otlp_start(&e->telemetry, e->tick_wall, err, errlen);
    if (otlp_logs_enabled(o))
        events_set_sink(e->events, otlp_event, o);
    return o;
}

void otlp_detach(struct engine *e, struct otlp *o)
{
    events_set_sink(e->events, NULL, NULL); /* nothing emits any more */
    otlp_stop(o);
}
