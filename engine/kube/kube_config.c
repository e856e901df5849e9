/* kube_config: a kubeconfig or a pod's in-cluster config; see kube_config.h.
 * The kubeconfig's YAML is loaded with libyaml's document API and turned into a cJSON tree
 * (every scalar a string), so the lookups below read like the file's structure. */
#include "kube_config.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

static void fail(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void fail(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

static char *xstrdup(const char *s)
{
    if (!s)
        return NULL;
    char *d = strdup(s);
    if (!d)
        abort();
    return d;
}

static char *read_file(const char *path, size_t *len, int *eno)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        *eno = errno;
        return NULL;
    }
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    if (!buf)
        abort();
    for (;;) {
        if (n + 1 >= cap && !(buf = realloc(buf, cap *= 2)))
            abort();
        size_t got = fread(buf + n, 1, cap - n - 1, f);
        if (!got)
            break;
        n += got;
        if (n > (64u << 20)) { /* no kubeconfig or token is this big */
            fclose(f);
            free(buf);
            *eno = EFBIG;
            return NULL;
        }
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        free(buf);
        *eno = EIO;
        return NULL;
    }
    buf[n] = 0;
    *len = n;
    return buf;
}

/* YAML document -> cJSON; depth-limited against alias bombs and deep nesting. */
static cJSON *yaml_to_json(yaml_document_t *doc, yaml_node_t *n, int depth)
{
    if (!n || depth > 64)
        return NULL;
    switch (n->type) {
    case YAML_SCALAR_NODE: {
        char *s = malloc(n->data.scalar.length + 1);
        if (!s)
            abort();
        memcpy(s, n->data.scalar.value, n->data.scalar.length);
        s[n->data.scalar.length] = 0;
        cJSON *j = cJSON_CreateString(s);
        free(s);
        return j;
    }
    case YAML_SEQUENCE_NODE: {
        cJSON *a = cJSON_CreateArray();
        for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top; it++) {
            cJSON *v = yaml_to_json(doc, yaml_document_get_node(doc, *it), depth + 1);
            if (!v) {
                cJSON_Delete(a);
                return NULL;
            }
            cJSON_AddItemToArray(a, v);
        }
        return a;
    }
    case YAML_MAPPING_NODE: {
        cJSON *o = cJSON_CreateObject();
        for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
            yaml_node_t *k = yaml_document_get_node(doc, p->key);
            cJSON *v = yaml_to_json(doc, yaml_document_get_node(doc, p->value), depth + 1);
            if (!k || k->type != YAML_SCALAR_NODE || !v) {
                cJSON_Delete(v);
                cJSON_Delete(o);
                return NULL;
            }
            char *key = strndup((const char *)k->data.scalar.value, k->data.scalar.length);
            if (!key)
                abort();
            cJSON_DeleteItemFromObjectCaseSensitive(o, key); /* a repeated key: the last wins */
            cJSON_AddItemToObject(o, key, v);
            free(key);
        }
        return o;
    }
    default:
        return NULL;
    }
}

static const char *str_at(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) && *v->valuestring ? v->valuestring : NULL;
}

/* The entry of a named list (clusters, users, contexts) called name; its inner object (what). */
static const cJSON *named(const cJSON *root, const char *list, const char *name, const char *what)
{
    const cJSON *l = cJSON_GetObjectItemCaseSensitive(root, list), *e;
    cJSON_ArrayForEach(e, l)
    {
        const char *n = str_at(e, "name");
        if (n && !strcmp(n, name)) {
            const cJSON *in = cJSON_GetObjectItemCaseSensitive(e, what);
            return cJSON_IsObject(in) ? in : NULL;
        }
    }
    return NULL;
}

static void names_of(const cJSON *root, const char *list, char *out, size_t len)
{
    size_t used = 0;
    out[0] = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(root, list))
    {
        const char *n = str_at(e, "name");
        if (n && used < len)
            used += (size_t)snprintf(out + used, len - used, "%s%s", used ? ", " : "", n);
    }
    if (!out[0])
        snprintf(out, len, "none");
}

/* A path from the kubeconfig: absolute as is, relative to the kubeconfig's directory. */
static char *resolve(const char *kubeconfig, const char *p)
{
    if (!p)
        return NULL;
    if (p[0] == '/' || !kubeconfig || !strchr(kubeconfig, '/'))
        return xstrdup(p);
    const char *slash = strrchr(kubeconfig, '/');
    size_t dl = (size_t)(slash - kubeconfig);
    char *out = malloc(dl + strlen(p) + 2);
    if (!out)
        abort();
    snprintf(out, dl + strlen(p) + 2, "%.*s/%s", (int)dl, kubeconfig, p);
    return out;
}

static int b64v(int ch)
{
    if (ch >= 'A' && ch <= 'Z')
        return ch - 'A';
    if (ch >= 'a' && ch <= 'z')
        return ch - 'a' + 26;
    if (ch >= '0' && ch <= '9')
        return ch - '0' + 52;
    if (ch == '+' || ch == '-')
        return 62;
    if (ch == '/' || ch == '_')
        return 63;
    return -1;
}

char *kube_base64_decode(const char *in, size_t *outlen)
{
    size_t n = strlen(in);
    char *out = malloc(n / 4 * 3 + 4);
    if (!out)
        abort();
    unsigned acc = 0;
    int bits = 0, pad = 0;
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)in[i];
        if (ch == ' ' || ch == '\n' || ch == '\r' || ch == '\t')
            continue;
        if (ch == '=') {
            pad++;
            continue;
        }
        int v = b64v(ch);
        if (v < 0 || pad) { /* a character that is not base64, or data after the padding */
            free(out);
            return NULL;
        }
        acc = (acc << 6) | (unsigned)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[o++] = (char)((acc >> bits) & 0xff);
        }
    }
    if (bits >= 6 || pad > 2) { /* a lone sextet cannot end a quantum */
        free(out);
        return NULL;
    }
    out[o] = 0;
    *outlen = o;
    return out;
}

static int decode_field(const cJSON *o, const char *key, char **out, size_t *outlen, const char *path,
                        const char *owner, char *err, size_t errlen)
{
    const char *v = str_at(o, key);
    if (!v)
        return 0;
    *out = kube_base64_decode(v, outlen);
    if (!*out) {
        fail(err, errlen, "%s: %s: %s is not base64 (it holds the PEM text base64-encoded, as kubectl "
             "config set --set-raw-bytes writes it)", path, owner, key);
        return -1;
    }
    return 0;
}

static bool truthy(const char *s)
{
    return s && (!strcmp(s, "true") || !strcmp(s, "True") || !strcmp(s, "TRUE") || !strcmp(s, "yes"));
}

static int from_tree(struct kube_config *c, const cJSON *root, const char *path, char *err, size_t errlen)
{
    char list[512];
    const char *ctx_name = str_at(root, "current-context");
    if (!ctx_name) {
        names_of(root, "contexts", list, sizeof list);
        fail(err, errlen, "%s: no current-context (contexts: %s); set one with kubectl config use-context NAME "
             "--kubeconfig %s", path, list, path);
        return -1;
    }
    const cJSON *ctx = named(root, "contexts", ctx_name, "context");
    if (!ctx) {
        names_of(root, "contexts", list, sizeof list);
        fail(err, errlen, "%s: current-context \"%s\" names no context of the file (contexts: %s)", path, ctx_name,
             list);
        return -1;
    }
    c->context = xstrdup(ctx_name);
    c->namespace = xstrdup(str_at(ctx, "namespace") ? str_at(ctx, "namespace") : "default");
    const char *cl_name = str_at(ctx, "cluster"), *user_name = str_at(ctx, "user");
    if (!cl_name) {
        fail(err, errlen, "%s: context \"%s\" names no cluster", path, ctx_name);
        return -1;
    }
    const cJSON *cl = named(root, "clusters", cl_name, "cluster");
    if (!cl) {
        names_of(root, "clusters", list, sizeof list);
        fail(err, errlen, "%s: context \"%s\" names cluster \"%s\", which the file does not define (clusters: %s)",
             path, ctx_name, cl_name, list);
        return -1;
    }
    const char *server = str_at(cl, "server");
    if (!server || (strncmp(server, "https://", 8) && strncmp(server, "http://", 7))) {
        fail(err, errlen, "%s: cluster \"%s\" has %s%s%s (expected server: https://HOST:PORT)", path, cl_name,
             server ? "server \"" : "no server", server ? server : "", server ? "\"" : "");
        return -1;
    }
    c->server = xstrdup(server);
    for (size_t n = strlen(c->server); n > 0 && c->server[n - 1] == '/'; n--)
        c->server[n - 1] = 0;
    c->insecure = truthy(str_at(cl, "insecure-skip-tls-verify"));
    c->ca_file = resolve(path, str_at(cl, "certificate-authority"));
    char owner[300];
    snprintf(owner, sizeof owner, "cluster \"%s\"", cl_name);
    if (decode_field(cl, "certificate-authority-data", &c->ca_pem, &c->ca_pem_len, path, owner, err, errlen))
        return -1;
    if (!user_name)
        return 0; /* no user: anonymous requests (an apiserver may allow them) */
    const cJSON *u = named(root, "users", user_name, "user");
    if (!u) {
        names_of(root, "users", list, sizeof list);
        fail(err, errlen, "%s: context \"%s\" names user \"%s\", which the file does not define (users: %s)", path,
             ctx_name, user_name, list);
        return -1;
    }
    snprintf(owner, sizeof owner, "user \"%s\"", user_name);
    if (cJSON_GetObjectItemCaseSensitive(u, "exec") || cJSON_GetObjectItemCaseSensitive(u, "auth-provider")) {
        if (!str_at(u, "token") && !str_at(u, "tokenFile") && !str_at(u, "client-certificate") &&
            !str_at(u, "client-certificate-data")) {
            fail(err, errlen, "%s: %s gets its credentials from a plugin (exec or auth-provider), which hwemu does "
                 "not run: give the user a token, tokenFile or client certificate (for example a service "
                 "account's token: kubectl create token NAME)", path, owner);
            return -1;
        }
    }
    c->token = xstrdup(str_at(u, "token"));
    c->token_file = resolve(path, str_at(u, "tokenFile"));
    c->cert_file = resolve(path, str_at(u, "client-certificate"));
    c->key_file = resolve(path, str_at(u, "client-key"));
    if (decode_field(u, "client-certificate-data", &c->cert_pem, &c->cert_pem_len, path, owner, err, errlen) ||
        decode_field(u, "client-key-data", &c->key_pem, &c->key_pem_len, path, owner, err, errlen))
        return -1;
    bool has_cert = c->cert_file || c->cert_pem, has_key = c->key_file || c->key_pem;
    if (has_cert != has_key) {
        fail(err, errlen, "%s: %s has a client %s but no client %s: give both", path, owner,
             has_cert ? "certificate" : "key", has_cert ? "key" : "certificate");
        return -1;
    }
    c->username = xstrdup(str_at(u, "username"));
    c->password = xstrdup(str_at(u, "password"));
    return 0;
}

int kube_config_parse(struct kube_config *c, const char *text, size_t len, const char *path, char *err,
                      size_t errlen)
{
    memset(c, 0, sizeof *c);
    c->source = xstrdup(path);
    yaml_parser_t p;
    yaml_document_t doc;
    if (!yaml_parser_initialize(&p))
        abort();
    yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
    if (!yaml_parser_load(&p, &doc)) {
        fail(err, errlen, "%s:%zu:%zu: not YAML: %s", path, p.problem_mark.line + 1, p.problem_mark.column + 1,
             p.problem ? p.problem : "parse error");
        yaml_parser_delete(&p);
        return -1;
    }
    yaml_node_t *top = yaml_document_get_root_node(&doc);
    cJSON *root = top ? yaml_to_json(&doc, top, 0) : NULL;
    yaml_document_delete(&doc);
    yaml_parser_delete(&p);
    int rc = -1;
    if (!cJSON_IsObject(root))
        fail(err, errlen, "%s: not a kubeconfig (expected a mapping with clusters, users, contexts and "
             "current-context)", path);
    else
        rc = from_tree(c, root, path, err, errlen);
    cJSON_Delete(root);
    return rc;
}

int kube_config_load(struct kube_config *c, const char *path, char *err, size_t errlen)
{
    size_t len;
    int eno = 0;
    char *text = read_file(path, &len, &eno);
    if (!text) {
        memset(c, 0, sizeof *c);
        fail(err, errlen, "%s: cannot read the kubeconfig: %s", path, strerror(eno));
        return -1;
    }
    int rc = kube_config_parse(c, text, len, path, err, errlen);
    free(text);
    return rc;
}

int kube_config_incluster(struct kube_config *c, const char *sa_dir, char *err, size_t errlen)
{
    memset(c, 0, sizeof *c);
    if (!sa_dir)
        sa_dir = KUBE_SA_DIR;
    c->source = xstrdup("in-cluster config");
    const char *host = getenv("KUBERNETES_SERVICE_HOST"), *port = getenv("KUBERNETES_SERVICE_PORT");
    if (!host || !*host || !port || !*port) {
        fail(err, errlen, "in-cluster config: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not both set "
             "(they are in a pod; outside one, give --kubeconfig FILE)");
        return -1;
    }
    size_t n = strlen(host) + strlen(port) + 16;
    c->server = malloc(n);
    if (!c->server)
        abort();
    bool v6 = strchr(host, ':') != NULL;
    snprintf(c->server, n, "https://%s%s%s:%s", v6 ? "[" : "", host, v6 ? "]" : "", port);
    size_t pl = strlen(sa_dir) + 16;
    c->token_file = malloc(pl);
    c->ca_file = malloc(pl);
    char *nsfile = malloc(pl);
    if (!c->token_file || !c->ca_file || !nsfile)
        abort();
    snprintf(c->token_file, pl, "%s/token", sa_dir);
    snprintf(c->ca_file, pl, "%s/ca.crt", sa_dir);
    snprintf(nsfile, pl, "%s/namespace", sa_dir);
    size_t len;
    int eno = 0;
    char *tok = read_file(c->token_file, &len, &eno);
    if (!tok) {
        fail(err, errlen, "in-cluster config: cannot read the service account token %s: %s (is "
             "automountServiceAccountToken off for the pod?)", c->token_file, strerror(eno));
        free(nsfile);
        return -1;
    }
    free(tok);
    char *ns = read_file(nsfile, &len, &eno);
    free(nsfile);
    if (ns) {
        while (len && (ns[len - 1] == '\n' || ns[len - 1] == ' '))
            ns[--len] = 0;
    }
    c->namespace = ns && *ns ? ns : xstrdup("default");
    if (ns && !*ns)
        free(ns);
    c->context = xstrdup("in-cluster");
    return 0;
}

const char *kube_config_auth_kind(const struct kube_config *c)
{
    if (c->token)
        return "token";
    if (c->token_file)
        return "token file";
    if (c->cert_file || c->cert_pem)
        return "client certificate";
    if (c->username)
        return "basic auth";
    return "no credentials";
}

void kube_config_free(struct kube_config *c)
{
    free(c->source);
    free(c->server);
    free(c->context);
    free(c->namespace);
    free(c->ca_file);
    free(c->ca_pem);
    free(c->token);
    free(c->token_file);
    free(c->cert_file);
    free(c->key_file);
    free(c->cert_pem);
    free(c->key_pem);
    free(c->username);
    free(c->password);
    memset(c, 0, sizeof *c);
}
