/* Unit tests of engine/kube: the kubeconfig parser (kube_config.c), the in-cluster config,
 * base64 (RFC 4648's test vectors, section 10), resource paths, watch-line decoding and the
 * queue (kube_queue.c). Watch lines are the API server's format (k8s.io/apimachinery
 * pkg/apis/meta/v1 WatchEvent: {"type": ..., "object": ...}; an expired version is an ERROR
 * whose object is a Status with code 410, as kube-apiserver 1.34 sends it). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "kube_client.h"
#include "kube_config.h"
#include "kube_queue.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const char two_contexts[] =
    "apiVersion: v1\n"
    "kind: Config\n"
    "current-context: emu\n"
    "clusters:\n"
    "- name: other\n"
    "  cluster: {server: https://10.0.0.9:6443}\n"
    "- name: local\n"
    "  cluster:\n"
    "    server: https://127.0.0.1:6443/\n"
    "    certificate-authority-data: Zm9vYmFy\n"
    "users:\n"
    "- name: admin\n"
    "  user:\n"
    "    token: \"abc123\"\n"
    "contexts:\n"
    "- name: other\n"
    "  context: {cluster: other, user: admin}\n"
    "- name: emu\n"
    "  context: {cluster: local, user: admin, namespace: sim}\n";

static void test_kubeconfig_current_context(void **st)
{
    (void)st;
    struct kube_config c;
    char err[512] = "";
    assert_int_equal(kube_config_parse(&c, two_contexts, strlen(two_contexts), "/etc/k/config", err, sizeof err), 0);
    assert_string_equal(c.server, "https://127.0.0.1:6443"); /* the trailing '/' dropped */
    assert_string_equal(c.context, "emu");
    assert_string_equal(c.namespace, "sim");
    assert_string_equal(c.token, "abc123");
    assert_non_null(c.ca_pem);
    assert_int_equal(c.ca_pem_len, 6);
    assert_memory_equal(c.ca_pem, "foobar", 6);
    assert_false(c.insecure);
    assert_null(c.ca_file);
    assert_string_equal(kube_config_auth_kind(&c), "token");
    kube_config_free(&c);
}

static void test_kubeconfig_files_relative(void **st)
{
    (void)st;
    static const char text[] =
        "current-context: c\n"
        "clusters: [{name: k, cluster: {server: 'https://[::1]:7443', certificate-authority: pki/ca.crt,\n"
        "            insecure-skip-tls-verify: true}}]\n"
        "users: [{name: u, user: {client-certificate: /abs/client.crt, client-key: client.key,\n"
        "                         tokenFile: tok}}]\n"
        "contexts: [{name: c, context: {cluster: k, user: u}}]\n";
    struct kube_config c;
    char err[512] = "";
    assert_int_equal(kube_config_parse(&c, text, strlen(text), "/home/me/.kube/config", err, sizeof err), 0);
    assert_string_equal(c.server, "https://[::1]:7443");
    assert_string_equal(c.ca_file, "/home/me/.kube/pki/ca.crt"); /* relative to the kubeconfig, as kubectl */
    assert_string_equal(c.cert_file, "/abs/client.crt");
    assert_string_equal(c.key_file, "/home/me/.kube/client.key");
    assert_string_equal(c.token_file, "/home/me/.kube/tok");
    assert_true(c.insecure);
    assert_string_equal(c.namespace, "default");
    assert_string_equal(kube_config_auth_kind(&c), "token file");
    kube_config_free(&c);
}

static void test_kubeconfig_cert_data(void **st)
{
    (void)st;
    /* "-----BEGIN X" and "k" base64-encoded, the second one with no padding and a line break */
    static const char text[] =
        "current-context: c\n"
        "clusters: [{name: k, cluster: {server: http://127.0.0.1:8080}}]\n"
        "users: [{name: u, user: {client-certificate-data: LS0tLS1CRUdJTiBY, client-key-data: \"aw\\n\"}}]\n"
        "contexts: [{name: c, context: {cluster: k, user: u}}]\n";
    struct kube_config c;
    char err[512] = "";
    assert_int_equal(kube_config_parse(&c, text, strlen(text), "kc", err, sizeof err), 0);
    assert_int_equal(c.cert_pem_len, 12);
    assert_memory_equal(c.cert_pem, "-----BEGIN X", 12);
    assert_int_equal(c.key_pem_len, 1);
    assert_memory_equal(c.key_pem, "k", 1);
    assert_string_equal(kube_config_auth_kind(&c), "client certificate");
    kube_config_free(&c);
}

/* Each broken kubeconfig and the words its message must hold. */
static void test_kubeconfig_errors(void **st)
{
    (void)st;
    static const struct {
        const char *text, *want1, *want2;
    } cases[] = {
        {"clusters: []\ncontexts: [{name: a, context: {cluster: x}}]\n", "no current-context", "contexts: a"},
        {"current-context: b\ncontexts: [{name: a, context: {cluster: x}}]\n", "current-context \"b\"",
         "contexts: a"},
        {"current-context: a\ncontexts: [{name: a, context: {cluster: x}}]\nclusters: [{name: y, cluster: {server: "
         "https://h}}]\n",
         "cluster \"x\"", "clusters: y"},
        {"current-context: a\ncontexts: [{name: a, context: {cluster: x}}]\nclusters: [{name: x, cluster: {}}]\n",
         "no server", "https://HOST:PORT"},
        {"current-context: a\ncontexts: [{name: a, context: {cluster: x, user: u}}]\nclusters: [{name: x, cluster: "
         "{server: https://h}}]\nusers: [{name: u, user: {exec: {command: aws}}}]\n",
         "plugin", "token"},
        {"current-context: a\ncontexts: [{name: a, context: {cluster: x, user: u}}]\nclusters: [{name: x, cluster: "
         "{server: https://h}}]\nusers: [{name: u, user: {client-certificate: c.crt}}]\n",
         "no client key", "user \"u\""},
        {"current-context: a\ncontexts: [{name: a, context: {cluster: x}}]\nclusters: [{name: x, cluster: "
         "{server: https://h, certificate-authority-data: \"%%%\"}}]\n",
         "certificate-authority-data is not base64", "cluster \"x\""},
        {"current-context: a\nclusters: [\n", "kc:", "not YAML"},
        {"- just\n- a list\n", "not a kubeconfig", "current-context"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct kube_config c;
        char err[512] = "";
        assert_int_equal(kube_config_parse(&c, cases[i].text, strlen(cases[i].text), "kc", err, sizeof err), -1);
        if (!strstr(err, cases[i].want1) || !strstr(err, cases[i].want2))
            fail_msg("case %zu: \"%s\" lacks \"%s\" or \"%s\"", i, err, cases[i].want1, cases[i].want2);
        assert_true(strncmp(err, "kc", 2) == 0); /* every message names the file */
        kube_config_free(&c);
    }
    struct kube_config c;
    char err[512] = "";
    assert_int_equal(kube_config_load(&c, "/nonexistent/kubeconfig", err, sizeof err), -1);
    assert_non_null(strstr(err, "/nonexistent/kubeconfig: cannot read the kubeconfig"));
    kube_config_free(&c);
}

static void test_incluster(void **st)
{
    (void)st;
    char dir[] = "/tmp/kube-sa-XXXXXX", path[256], err[512] = "";
    assert_non_null(mkdtemp(dir));
    struct kube_config c;
    unsetenv("KUBERNETES_SERVICE_HOST");
    assert_int_equal(kube_config_incluster(&c, dir, err, sizeof err), -1);
    assert_non_null(strstr(err, "KUBERNETES_SERVICE_HOST"));
    kube_config_free(&c);
    setenv("KUBERNETES_SERVICE_HOST", "fd00::1", 1);
    setenv("KUBERNETES_SERVICE_PORT", "443", 1);
    assert_int_equal(kube_config_incluster(&c, dir, err, sizeof err), -1);
    assert_non_null(strstr(err, "service account token"));
    kube_config_free(&c);
    const char *files[][2] = {{"token", "tok\n"}, {"ca.crt", "PEM"}, {"namespace", "hwemu\n"}};
    for (int i = 0; i < 3; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, files[i][0]);
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        fputs(files[i][1], f);
        fclose(f);
    }
    assert_int_equal(kube_config_incluster(&c, dir, err, sizeof err), 0);
    assert_string_equal(c.server, "https://[fd00::1]:443");
    assert_string_equal(c.namespace, "hwemu");
    snprintf(path, sizeof path, "%s/token", dir);
    assert_string_equal(c.token_file, path);
    snprintf(path, sizeof path, "%s/ca.crt", dir);
    assert_string_equal(c.ca_file, path);
    kube_config_free(&c);
    for (int i = 0; i < 3; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, files[i][0]);
        unlink(path);
    }
    rmdir(dir);
    unsetenv("KUBERNETES_SERVICE_HOST");
    unsetenv("KUBERNETES_SERVICE_PORT");
}

static void test_base64(void **st)
{
    (void)st;
    static const char *const vec[][2] = {{"", ""},         {"Zg==", "f"},         {"Zm8=", "fo"},
                                         {"Zm9v", "foo"},  {"Zm9vYg==", "foob"},  {"Zm9vYmE=", "fooba"},
                                         {"Zm9vYmFy", "foobar"}, {"Zm9vYg", "foob"}, {"Zm9v\nYmFy", "foobar"}};
    for (size_t i = 0; i < sizeof vec / sizeof vec[0]; i++) {
        size_t n = 99;
        char *d = kube_base64_decode(vec[i][0], &n);
        assert_non_null(d);
        assert_int_equal(n, strlen(vec[i][1]));
        assert_memory_equal(d, vec[i][1], n);
        free(d);
    }
    size_t n;
    assert_null(kube_base64_decode("Zm9v!", &n));
    assert_null(kube_base64_decode("Zg==Zg", &n));
    assert_null(kube_base64_decode("Z", &n));
}

static void test_paths(void **st)
{
    (void)st;
    char *p = kube_path("v1", NULL, "nodes", "gpu-0");
    assert_string_equal(p, "/api/v1/nodes/gpu-0");
    free(p);
    p = kube_path("batch/v1", "sim runs", "jobs", NULL);
    assert_string_equal(p, "/apis/batch/v1/namespaces/sim%20runs/jobs");
    free(p);
    p = kube_escape("spec.nodeName=a,status.phase!=Failed");
    assert_string_equal(p, "spec.nodeName%3Da%2Cstatus.phase%21%3DFailed");
    free(p);
}

static void test_decode_events(void **st)
{
    (void)st;
    struct kube_event ev;
    char err[256];
    const char *added = "{\"type\":\"ADDED\",\"object\":{\"kind\":\"Node\",\"apiVersion\":\"v1\",\"metadata\":"
                        "{\"name\":\"intel-0\",\"resourceVersion\":\"1234\",\"labels\":{\"a\":\"b\"}}}}";
    assert_int_equal(kube_event_decode(added, strlen(added), &ev, err, sizeof err), 0);
    assert_int_equal(ev.type, KUBE_EV_ADDED);
    assert_string_equal(kube_object_name(ev.object), "intel-0");
    assert_string_equal(kube_object_rv(ev.object), "1234");
    cJSON_Delete(ev.object);

    const char *bm = "{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"Node\",\"apiVersion\":\"v1\",\"metadata\":"
                     "{\"resourceVersion\":\"2001\",\"annotations\":{\"k8s.io/initial-events-end\":\"true\"}}}}";
    assert_int_equal(kube_event_decode(bm, strlen(bm), &ev, err, sizeof err), 0);
    assert_int_equal(ev.type, KUBE_EV_BOOKMARK);
    assert_string_equal(kube_object_rv(ev.object), "2001");
    cJSON_Delete(ev.object);

    const char *gone = "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},"
                       "\"status\":\"Failure\",\"message\":\"too old resource version: 1 (2512)\",\"reason\":"
                       "\"Expired\",\"code\":410}}";
    assert_int_equal(kube_event_decode(gone, strlen(gone), &ev, err, sizeof err), 0);
    assert_int_equal(ev.type, KUBE_EV_ERROR);
    assert_int_equal(ev.code, 410);
    assert_string_equal(ev.message, "too old resource version: 1 (2512)");
    cJSON_Delete(ev.object);
    free(ev.message);

    const char *del = "{\"type\":\"DELETED\",\"object\":{\"metadata\":{\"name\":\"x\",\"resourceVersion\":\"9\"}}}";
    /* a line handed with its length: what follows is not read */
    char buf[256];
    snprintf(buf, sizeof buf, "%sGARBAGE", del);
    assert_int_equal(kube_event_decode(buf, strlen(del), &ev, err, sizeof err), 0);
    assert_int_equal(ev.type, KUBE_EV_DELETED);
    cJSON_Delete(ev.object);

    static const char *const bad[][2] = {
        {"not json", "not a JSON object"},
        {"[1,2]", "not a JSON object"},
        {"{\"type\":\"RENAMED\",\"object\":{}}", "no known type"},
        {"{\"type\":\"ADDED\"}", "without an object"},
        {"{\"type\":\"ADDED\",\"object\":\"x\"}", "without an object"},
        {"{\"type\":\"BOOKMARK\",\"object\":{\"metadata\":{}}}", "BOOKMARK without"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err[0] = 0;
        assert_int_equal(kube_event_decode(bad[i][0], strlen(bad[i][0]), &ev, err, sizeof err), -1);
        if (!strstr(err, bad[i][1]))
            fail_msg("\"%s\": \"%s\" lacks \"%s\"", bad[i][0], err, bad[i][1]);
        assert_null(ev.object);
    }
}

static int64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void test_queue(void **st)
{
    (void)st;
    struct kube_queue *q = kube_queue_new();
    assert_null(kube_queue_pop(q));
    for (int i = 0; i < 3; i++) {
        struct kube_event *e = calloc(1, sizeof *e);
        e->type = KUBE_EV_MODIFIED;
        e->code = i;
        kube_queue_push(q, e);
    }
    assert_int_equal(kube_queue_len(q), 3);
    for (int i = 0; i < 2; i++) {
        struct kube_event *e = kube_queue_wait(q, 1000);
        assert_non_null(e);
        assert_int_equal(e->code, i); /* first in, first out */
        kube_event_free(e);
    }
    int64_t t0 = mono_ms();
    kube_queue_wake(q);
    struct kube_event *e = kube_queue_wait(q, 5000); /* an event is there: no wait */
    assert_non_null(e);
    kube_event_free(e);
    assert_null(kube_queue_wait(q, 0)); /* the wake was used up by the call before or is spent now */
    t0 = mono_ms();
    assert_null(kube_queue_wait(q, 150));
    assert_true(mono_ms() - t0 >= 140);
    /* an event left in the queue is freed with it (the sanitizer build checks) */
    e = calloc(1, sizeof *e);
    e->message = strdup("left");
    kube_queue_push(q, e);
    kube_queue_free(q);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kubeconfig_current_context), cmocka_unit_test(test_kubeconfig_files_relative),
        cmocka_unit_test(test_kubeconfig_cert_data),       cmocka_unit_test(test_kubeconfig_errors),
        cmocka_unit_test(test_incluster),                  cmocka_unit_test(test_base64),
        cmocka_unit_test(test_paths),                      cmocka_unit_test(test_decode_events),
        cmocka_unit_test(test_queue),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
