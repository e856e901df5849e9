/* kube_config: where a Kubernetes API server is and how to authenticate to it.
 * Owns: reading a kubeconfig file (the current context's cluster and user: server,
 * certificate-authority[-data], insecure-skip-tls-verify, token, tokenFile,
 * client-certificate[-data], client-key[-data], username/password) and the in-cluster config of
 * a pod (KUBERNETES_SERVICE_HOST/PORT and the service account's token and ca.crt). Relative paths
 * in a kubeconfig are taken from the kubeconfig's directory, as kubectl does. Every problem is
 * reported with the file and what to do; nothing here talks to a server. */
#ifndef HWEMU_KUBE_CONFIG_H
#define HWEMU_KUBE_CONFIG_H
#include <stdbool.h>
#include <stddef.h>

#define KUBE_SA_DIR "/var/run/secrets/kubernetes.io/serviceaccount"

struct kube_config {
    char *source;               /* the kubeconfig's path, or "in-cluster config" (messages) */
    char *server;               /* https://host:port, without a trailing '/' */
    char *context, *namespace;  /* namespace: the context's (or the pod's), default "default" */
    char *ca_file;              /* PEM file of the CA bundle */
    char *ca_pem;               /* or the bundle itself (certificate-authority-data, decoded) */
    size_t ca_pem_len;
    bool insecure;              /* insecure-skip-tls-verify */
    char *token;                /* a bearer token */
    char *token_file;           /* or a file read again at every request (rotated tokens) */
    char *cert_file, *key_file; /* client certificate and key, PEM files */
    char *cert_pem, *key_pem;   /* or the PEM texts (client-*-data, decoded) */
    size_t cert_pem_len, key_pem_len;
    char *username, *password;  /* basic auth (old clusters) */
};

/* Reads the kubeconfig at path: 0, or -1 with err "path: what is wrong (what to do)". */
int kube_config_load(struct kube_config *c, const char *path, char *err, size_t errlen);
/* The same from the text of a kubeconfig; path names it in messages and anchors relative paths. */
int kube_config_parse(struct kube_config *c, const char *text, size_t len, const char *path, char *err,
                      size_t errlen);
/* A pod's own config: the API server from KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT,
 * the token, ca.crt and namespace of sa_dir (NULL: KUBE_SA_DIR). 0, or -1 with err. */
int kube_config_incluster(struct kube_config *c, const char *sa_dir, char *err, size_t errlen);
/* Which kind of credential the config holds, for a start-up line: "token", "token file",
 * "client certificate", "basic auth" or "no credentials". */
const char *kube_config_auth_kind(const struct kube_config *c);
void kube_config_free(struct kube_config *c);
/* Base64 (RFC 4648, padding optional, whitespace skipped) into a new buffer; NULL when invalid. */
char *kube_base64_decode(const char *in, size_t *outlen);

#endif
