/* kube_client: libcurl requests to the API server; see kube_client.h.
 * One easy handle per request (a thread never shares one), one share handle for the client so
 * that connections, TLS sessions and DNS answers are reused across threads. */
#include "kube_client.h"

#include "kube_config.h"

#include <cjson/cJSON.h>
#include <curl/curl.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REQUEST_TIMEOUT_S 30L
#define CONNECT_TIMEOUT_S 10L
#define MAX_BODY (256u << 20) /* a list of many nodes is big; nothing the API sends us is this big */

struct kube_client {
    struct kube_config cfg; /* owned copies of the strings */
    CURLSH *share;
    pthread_mutex_t locks[CURL_LOCK_DATA_LAST];
    atomic_bool aborted;
};

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static void curl_init_once(void)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
}

static char *dup_or_null(const char *s)
{
    char *d = s ? strdup(s) : NULL;
    if (s && !d)
        abort();
    return d;
}

static char *dup_mem(const char *p, size_t n)
{
    if (!p)
        return NULL;
    char *d = malloc(n + 1);
    if (!d)
        abort();
    memcpy(d, p, n);
    d[n] = 0;
    return d;
}

static void share_lock(CURL *h, curl_lock_data data, curl_lock_access access, void *u)
{
    (void)h, (void)access;
    struct kube_client *c = u;
    pthread_mutex_lock(&c->locks[data]);
}

static void share_unlock(CURL *h, curl_lock_data data, void *u)
{
    (void)h;
    struct kube_client *c = u;
    pthread_mutex_unlock(&c->locks[data]);
}

struct kube_client *kube_client_new(const struct kube_config *cfg, char *err, size_t errlen)
{
    pthread_once(&curl_once, curl_init_once);
    const char *files[] = {cfg->ca_file, cfg->cert_file, cfg->key_file, cfg->token_file};
    const char *what[] = {"certificate-authority", "client-certificate", "client-key", "tokenFile"};
    for (int i = 0; i < 4; i++) {
        FILE *f = files[i] ? fopen(files[i], "rb") : NULL;
        if (files[i] && !f) {
            snprintf(err, errlen, "%s: %s %s cannot be read: %s", cfg->source ? cfg->source : "kubeconfig", what[i],
                     files[i], strerror(errno));
            return NULL;
        }
        if (f)
            fclose(f);
    }
    struct kube_client *c = calloc(1, sizeof *c);
    if (!c)
        abort();
    c->cfg = (struct kube_config){
        .source = dup_or_null(cfg->source), .server = dup_or_null(cfg->server), .context = dup_or_null(cfg->context),
        .namespace = dup_or_null(cfg->namespace ? cfg->namespace : "default"), .ca_file = dup_or_null(cfg->ca_file),
        .ca_pem = dup_mem(cfg->ca_pem, cfg->ca_pem_len), .ca_pem_len = cfg->ca_pem_len, .insecure = cfg->insecure,
        .token = dup_or_null(cfg->token), .token_file = dup_or_null(cfg->token_file),
        .cert_file = dup_or_null(cfg->cert_file), .key_file = dup_or_null(cfg->key_file),
        .cert_pem = dup_mem(cfg->cert_pem, cfg->cert_pem_len), .cert_pem_len = cfg->cert_pem_len,
        .key_pem = dup_mem(cfg->key_pem, cfg->key_pem_len), .key_pem_len = cfg->key_pem_len,
        .username = dup_or_null(cfg->username), .password = dup_or_null(cfg->password)};
    for (int i = 0; i < CURL_LOCK_DATA_LAST; i++)
        pthread_mutex_init(&c->locks[i], NULL);
    c->share = curl_share_init();
    if (!c->share)
        abort();
    curl_share_setopt(c->share, CURLSHOPT_LOCKFUNC, share_lock);
    curl_share_setopt(c->share, CURLSHOPT_UNLOCKFUNC, share_unlock);
    curl_share_setopt(c->share, CURLSHOPT_USERDATA, c);
    curl_share_setopt(c->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_CONNECT);
    curl_share_setopt(c->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION);
    curl_share_setopt(c->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
    return c;
}

void kube_client_free(struct kube_client *c)
{
    if (!c)
        return;
    curl_share_cleanup(c->share);
    for (int i = 0; i < CURL_LOCK_DATA_LAST; i++)
        pthread_mutex_destroy(&c->locks[i]);
    kube_config_free(&c->cfg);
    free(c);
}

void kube_client_abort(struct kube_client *c)
{
    atomic_store(&c->aborted, true);
}

bool kube_client_aborted(const struct kube_client *c)
{
    return atomic_load(&c->aborted);
}

const char *kube_client_server(const struct kube_client *c)
{
    return c->cfg.server;
}

const char *kube_client_namespace(const struct kube_client *c)
{
    return c->cfg.namespace;
}

char *kube_escape(const char *s)
{
    char *e = curl_easy_escape(NULL, s, 0), *d = dup_or_null(e);
    curl_free(e);
    return d;
}

char *kube_path(const char *api, const char *namespace, const char *resource, const char *name)
{
    char *ns = namespace ? kube_escape(namespace) : NULL, *nm = name ? kube_escape(name) : NULL;
    size_t n = strlen(api) + strlen(resource) + (ns ? strlen(ns) : 0) + (nm ? strlen(nm) : 0) + 32;
    char *p = malloc(n);
    if (!p)
        abort();
    snprintf(p, n, "/%s/%s%s%s/%s%s%s", strcmp(api, "v1") ? "apis" : "api", api, ns ? "/namespaces/" : "",
             ns ? ns : "", resource, nm ? "/" : "", nm ? nm : "");
    free(ns);
    free(nm);
    return p;
}

static const char *reason(long status)
{
    switch (status) {
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 409: return "Conflict";
    case 410: return "Gone";
    case 415: return "Unsupported Media Type";
    case 422: return "Unprocessable Entity";
    case 429: return "Too Many Requests";
    case 500: return "Internal Server Error";
    case 502: return "Bad Gateway";
    case 503: return "Service Unavailable";
    case 504: return "Gateway Timeout";
    default: return "";
    }
}

/* What the user should try for a status that says more about the setup than the request. */
static const char *hint(long status)
{
    switch (status) {
    case 401: return " (the credentials were refused: check the kubeconfig's user or the token)";
    case 403: return " (the user lacks the RBAC rights for this: see docs/kubernetes.md \"RBAC\")";
    default: return "";
    }
}

struct body {
    char *p;
    size_t len, cap;
    bool too_big;
};

static size_t collect(char *data, size_t size, size_t n, void *u)
{
    struct body *b = u;
    size_t add = size * n;
    if (b->len + add + 1 > MAX_BODY) {
        b->too_big = true;
        return 0;
    }
    if (b->len + add + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 8192;
        while (cap < b->len + add + 1)
            cap *= 2;
        char *p = realloc(b->p, cap);
        if (!p)
            abort();
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->len, data, add);
    b->len += add;
    b->p[b->len] = 0;
    return add;
}

/* Who may end a transfer early: the client's abort, and a stream's own cancel flag. */
struct stop_by {
    const struct kube_client *c;
    const atomic_bool *cancel;
};

static int progress(void *u, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un)
{
    (void)dt, (void)dn, (void)ut, (void)un;
    const struct stop_by *s = u;
    return atomic_load(&s->c->aborted) || (s->cancel && atomic_load(s->cancel)) ? 1 : 0;
}

static char *read_token(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char buf[16384];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    while (n && (buf[n - 1] == '\n' || buf[n - 1] == '\r' || buf[n - 1] == ' '))
        buf[--n] = 0;
    return dup_or_null(buf);
}

/* A handle for method and path with the client's TLS and credentials; headers to free after. */
static CURL *handle(struct kube_client *c, const char *method, const char *path, const char *content_type,
                    const char *body, struct stop_by *stop, struct curl_slist **headers, char *url, size_t urllen,
                    char *errbuf)
{
    CURL *h = curl_easy_init();
    if (!h)
        abort();
    snprintf(url, urllen, "%s%s", c->cfg.server, path);
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_SHARE, c->share);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    /* HTTP/1.1: each request or watch on a connection of its own from the shared cache; HTTP/2's
     * multiplexing would need one multi handle for every thread */
    curl_easy_setopt(h, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, CONNECT_TIMEOUT_S);
    curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, progress);
    curl_easy_setopt(h, CURLOPT_XFERINFODATA, stop);
    curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, ""); /* gzip when the server offers it */
    curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
    if (!strcmp(method, "HEAD"))
        curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
    if (body)
        curl_easy_setopt(h, CURLOPT_COPYPOSTFIELDS, body);
    if (c->cfg.insecure) {
        curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L);
        curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
    } else if (c->cfg.ca_pem) {
        struct curl_blob b = {.data = c->cfg.ca_pem, .len = c->cfg.ca_pem_len, .flags = CURL_BLOB_COPY};
        curl_easy_setopt(h, CURLOPT_CAINFO_BLOB, &b);
    } else if (c->cfg.ca_file) {
        curl_easy_setopt(h, CURLOPT_CAINFO, c->cfg.ca_file);
    }
    if (c->cfg.cert_pem) {
        struct curl_blob b = {.data = c->cfg.cert_pem, .len = c->cfg.cert_pem_len, .flags = CURL_BLOB_COPY};
        curl_easy_setopt(h, CURLOPT_SSLCERT_BLOB, &b);
    } else if (c->cfg.cert_file) {
        curl_easy_setopt(h, CURLOPT_SSLCERT, c->cfg.cert_file);
    }
    if (c->cfg.key_pem) {
        struct curl_blob b = {.data = c->cfg.key_pem, .len = c->cfg.key_pem_len, .flags = CURL_BLOB_COPY};
        curl_easy_setopt(h, CURLOPT_SSLKEY_BLOB, &b);
    } else if (c->cfg.key_file) {
        curl_easy_setopt(h, CURLOPT_SSLKEY, c->cfg.key_file);
    }
    if (c->cfg.username) {
        curl_easy_setopt(h, CURLOPT_USERNAME, c->cfg.username);
        curl_easy_setopt(h, CURLOPT_PASSWORD, c->cfg.password ? c->cfg.password : "");
    }
    struct curl_slist *hd = curl_slist_append(NULL, "Accept: application/json");
    if (content_type) {
        char line[128];
        snprintf(line, sizeof line, "Content-Type: %s", content_type);
        hd = curl_slist_append(hd, line);
    }
    char *tok = c->cfg.token ? dup_or_null(c->cfg.token) : c->cfg.token_file ? read_token(c->cfg.token_file) : NULL;
    if (tok) {
        size_t n = strlen(tok) + 32;
        char *line = malloc(n);
        if (!line)
            abort();
        snprintf(line, n, "Authorization: Bearer %s", tok);
        hd = curl_slist_append(hd, line);
        free(line);
        free(tok);
    }
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hd);
    *headers = hd;
    return h;
}

/* err for a status outside 2xx: the API's Status message when the body is one. */
static void status_error(const char *method, const char *url, long status, const char *body, char *err,
                         size_t errlen)
{
    cJSON *j = body ? cJSON_Parse(body) : NULL;
    const cJSON *msg = cJSON_GetObjectItemCaseSensitive(j, "message");
    if (cJSON_IsString(msg))
        snprintf(err, errlen, "%s %s: %ld %s: %s%s", method, url, status, reason(status), msg->valuestring,
                 hint(status));
    else
        snprintf(err, errlen, "%s %s: %ld %s: %.200s%s", method, url, status, reason(status),
                 body && *body ? body : "(no message)", hint(status));
    cJSON_Delete(j);
}

static void transport_error(const struct kube_client *c, const char *method, const char *url, CURLcode rc,
                            const char *errbuf, char *err, size_t errlen)
{
    if (rc == CURLE_ABORTED_BY_CALLBACK || atomic_load(&c->aborted))
        snprintf(err, errlen, "%s %s: aborted (the client is stopping)", method, url);
    else
        snprintf(err, errlen, "%s %s: %s%s", method, url, *errbuf ? errbuf : curl_easy_strerror(rc),
                 rc == CURLE_COULDNT_CONNECT ? " (is the API server running at this address?)"
                 : rc == CURLE_PEER_FAILED_VERIFICATION || rc == CURLE_SSL_CACERT_BADFILE
                     ? " (the server's certificate does not match the kubeconfig's certificate-authority)"
                     : "");
}

long kube_request(struct kube_client *c, const char *method, const char *path, const char *content_type,
                  const char *body, cJSON **out, char *err, size_t errlen)
{
    if (out)
        *out = NULL;
    char url[4096], errbuf[CURL_ERROR_SIZE] = "";
    struct curl_slist *hd;
    if (atomic_load(&c->aborted)) {
        snprintf(err, errlen, "%s %s%s: aborted (the client is stopping)", method, c->cfg.server, path);
        return 0;
    }
    struct stop_by stop = {.c = c};
    CURL *h = handle(c, method, path, content_type, body, &stop, &hd, url, sizeof url, errbuf);
    struct body b = {0};
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, collect);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &b);
    curl_easy_setopt(h, CURLOPT_TIMEOUT, REQUEST_TIMEOUT_S);
    CURLcode rc = curl_easy_perform(h);
    long status = 0;
    if (rc == CURLE_OK)
        curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
    else if (b.too_big)
        snprintf(err, errlen, "%s %s: the answer is larger than %u MiB", method, url, MAX_BODY >> 20);
    else
        transport_error(c, method, url, rc, errbuf, err, errlen);
    if (status && (status < 200 || status > 299)) {
        status_error(method, url, status, b.p, err, errlen);
    } else if (status && out && b.len) {
        *out = cJSON_ParseWithLength(b.p, b.len);
        if (!*out) {
            snprintf(err, errlen, "%s %s: %ld but the answer is not JSON: %.120s", method, url, status, b.p);
            status = 0;
        }
    }
    free(b.p);
    curl_slist_free_all(hd);
    curl_easy_cleanup(h);
    return status;
}

static long ok_or_status(long status)
{
    return status >= 200 && status <= 299 ? 0 : status ? status : -1;
}

long kube_get(struct kube_client *c, const char *path, cJSON **out, char *err, size_t errlen)
{
    return ok_or_status(kube_request(c, "GET", path, NULL, NULL, out, err, errlen));
}

static long with_body(struct kube_client *c, const char *method, const char *path, const char *ctype,
                      const cJSON *obj, cJSON **out, char *err, size_t errlen)
{
    char *text = cJSON_PrintUnformatted(obj);
    if (!text)
        abort();
    long st = kube_request(c, method, path, ctype, text, out, err, errlen);
    free(text);
    return ok_or_status(st);
}

long kube_create(struct kube_client *c, const char *path, const cJSON *obj, cJSON **out, char *err, size_t errlen)
{
    return with_body(c, "POST", path, "application/json", obj, out, err, errlen);
}

long kube_replace(struct kube_client *c, const char *path, const cJSON *obj, cJSON **out, char *err, size_t errlen)
{
    return with_body(c, "PUT", path, "application/json", obj, out, err, errlen);
}

long kube_patch(struct kube_client *c, const char *path, enum kube_patch kind, const cJSON *patch, cJSON **out,
                char *err, size_t errlen)
{
    static const char *const types[] = {"application/merge-patch+json", "application/strategic-merge-patch+json",
                                        "application/json-patch+json"};
    return with_body(c, "PATCH", path, types[kind], patch, out, err, errlen);
}

long kube_delete(struct kube_client *c, const char *path, char *err, size_t errlen)
{
    return ok_or_status(kube_request(c, "DELETE", path, NULL, NULL, NULL, err, errlen));
}

/* The streamed body: complete lines go to the callback, a partial one waits for the rest. An
 * answer outside 2xx is collected whole for its Status message instead. */
struct stream {
    CURL *h;
    long status;
    struct body pending;
    int (*line)(void *ctx, const char *text, size_t len);
    void *ctx;
    bool stopped;
};

static size_t stream_write(char *data, size_t size, size_t n, void *u)
{
    struct stream *s = u;
    size_t add = size * n;
    if (!s->status)
        curl_easy_getinfo(s->h, CURLINFO_RESPONSE_CODE, &s->status);
    if (collect(data, 1, add, &s->pending) != add)
        return 0;
    if (s->status < 200 || s->status > 299)
        return add;
    size_t start = 0;
    for (size_t i = 0; i < s->pending.len; i++) {
        if (s->pending.p[i] != '\n')
            continue;
        s->pending.p[i] = 0;
        if (i > start && s->line(s->ctx, s->pending.p + start, i - start)) {
            s->stopped = true;
            return 0;
        }
        start = i + 1;
    }
    memmove(s->pending.p, s->pending.p + start, s->pending.len - start);
    s->pending.len -= start;
    if (s->pending.p)
        s->pending.p[s->pending.len] = 0;
    return add;
}

long kube_stream(struct kube_client *c, const char *path, int (*line)(void *ctx, const char *text, size_t len),
                 void *ctx, long idle_s, const atomic_bool *cancel, char *err, size_t errlen)
{
    char url[4096], errbuf[CURL_ERROR_SIZE] = "";
    struct curl_slist *hd;
    if (atomic_load(&c->aborted)) {
        snprintf(err, errlen, "GET %s%s: aborted (the client is stopping)", c->cfg.server, path);
        return 0;
    }
    struct stop_by stop = {.c = c, .cancel = cancel};
    CURL *h = handle(c, "GET", path, NULL, NULL, &stop, &hd, url, sizeof url, errbuf);
    struct stream s = {.h = h, .line = line, .ctx = ctx};
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, stream_write);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &s);
    /* a watch that hears nothing (not even a bookmark) for idle_s is taken as dead */
    curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, 1L);
    curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME, idle_s > 0 ? idle_s : 120L);
    curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
    curl_easy_setopt(h, CURLOPT_TCP_KEEPIDLE, 30L);
    curl_easy_setopt(h, CURLOPT_TCP_KEEPINTVL, 10L);
    CURLcode rc = curl_easy_perform(h);
    long status = s.status;
    if (!status)
        curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
    if (status && (status < 200 || status > 299)) {
        status_error("GET", url, status, s.pending.p, err, errlen);
    } else if (rc == CURLE_ABORTED_BY_CALLBACK && cancel && atomic_load(cancel) && !atomic_load(&c->aborted)) {
        snprintf(err, errlen, "GET %s: cancelled", url);
        status = 0;
    } else if (rc != CURLE_OK && !(rc == CURLE_WRITE_ERROR && s.stopped)) {
        transport_error(c, "GET", url, rc, errbuf, err, errlen);
        status = 0;
    }
    free(s.pending.p);
    curl_slist_free_all(hd);
    curl_easy_cleanup(h);
    return status;
}
