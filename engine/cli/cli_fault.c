/* cli_fault: `hwemu fault`, a running engine's fault schedule from the shell (docs/faults.md),
 * over its HTTP API (POST /faults, GET /faults, DELETE /faults/<id>):
 *   hwemu fault add --kind KIND [--node N]... [--pool P]... [--label K=V]... [--fraction F]
 *                   [--seed S] [--device D] [--at SEC] [--duration SEC] [--param K=V]... [--id ID]
 *   hwemu fault list
 *   hwemu fault clear ID
 * --addr HOST:PORT (SIM_ADDR; default 127.0.0.1:18080) names the engine. Prints the engine's
 * JSON answer; exit 1 with its error when it refuses. */
#include "cli.h"

#include <cjson/cJSON.h>
#include <curl/curl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char help[] =
    "Usage: hwemu fault add --kind KIND [selection] [--device D] [--at SEC] [--duration SEC] [--param K=V]...\n"
    "       hwemu fault list\n"
    "       hwemu fault clear ID\n"
    "\n"
    "Schedules, lists and clears a running engine's hardware faults (docs/faults.md). A fault\n"
    "without --at starts at the engine's next tick; without --duration it lasts until cleared\n"
    "(`hwemu fault clear ID`, the reset). Kinds: gpu-lost, gpu-power-brake, bmc-timeout, bmc-slow,\n"
    "redfish-unavailable, hwmon-error, write-refused, limit-ignored, inlet-temp, fan-failure,\n"
    "rapl-freeze, rapl-jump, limit-locked, psu-loss, power-loss, freq-stuck, gpu-xid,\n"
    "gpu-ecc-corrected, gpu-ecc-uncorrected.\n"
    "\n"
    "Options:\n"
    "  --addr HOST:PORT   the engine's HTTP address (SIM_ADDR); default 127.0.0.1:18080\n"
    "  --kind KIND        what fails\n"
    "  --node NAME        a node it strikes (repeatable); --pool NAME, --label KEY=VALUE likewise\n"
    "  --fraction F       of the selected nodes (0..1), picked by --seed N\n"
    "  --device D         node, package<N>, dram, gpu, gpu<N>, bmc, cooling (default: the kind's)\n"
    "  --at SEC           emulated seconds after the engine's first tick\n"
    "  --duration SEC     how long it lasts\n"
    "  --param KEY=VALUE  a parameter of the kind (watts, delayMs, retryAfterSec, errno, deltaC, xid, count)\n"
    "  --id ID            its id (default request-<n>)\n";

static size_t collect(char *p, size_t size, size_t n, void *ctx)
{
    struct {
        char *p;
        size_t len;
    } *b = ctx;
    char *q = realloc(b->p, b->len + size * n + 1);
    if (!q)
        return 0;
    memcpy(q + b->len, p, size * n);
    b->len += size * n;
    q[b->len] = 0;
    b->p = q;
    return size * n;
}

/* One request; prints the answer. */
static int request(const char *addr, const char *method, const char *path, const char *body)
{
    char url[512];
    snprintf(url, sizeof url, "%s%s%s", strstr(addr, "://") ? "" : "http://", addr, path);
    CURL *c = curl_easy_init();
    if (!c) {
        fprintf(stderr, "hwemu fault: cannot start an HTTP client\n");
        return EXIT_INVALID;
    }
    struct {
        char *p;
        size_t len;
    } b = {0};
    struct curl_slist *h = curl_slist_append(NULL, "Content-Type: application/json");
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, collect);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &b);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, 30L);
    if (body)
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
    CURLcode rc = curl_easy_perform(c);
    long code = 0;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
    curl_slist_free_all(h);
    curl_easy_cleanup(c);
    if (rc != CURLE_OK) {
        fprintf(stderr, "hwemu fault: %s: %s (is `hwemu serve` running there? --addr or SIM_ADDR names it)\n", url,
                curl_easy_strerror(rc));
        free(b.p);
        return EXIT_INVALID;
    }
    cJSON *o = b.p ? cJSON_Parse(b.p) : NULL;
    int ret = code >= 200 && code < 300 ? EXIT_OK : EXIT_INVALID;
    if (ret == EXIT_OK) {
        char *s = o ? cJSON_Print(o) : NULL;
        printf("%s\n", s ? s : b.p ? b.p : "");
        free(s);
    } else {
        const cJSON *e = cJSON_GetObjectItemCaseSensitive(o, "error");
        fprintf(stderr, "hwemu fault: %s (HTTP %ld)\n", cJSON_IsString(e) ? e->valuestring : b.p ? b.p : "", code);
        const cJSON *p;
        cJSON_ArrayForEach(p, cJSON_GetObjectItemCaseSensitive(o, "problems"))
            if (cJSON_IsString(p))
                fprintf(stderr, "  %s\n", p->valuestring);
    }
    cJSON_Delete(o);
    free(b.p);
    return ret;
}

/* "K=V" into o[K]: a number when V is one, else the text. */
static bool put_kv(cJSON *o, const char *kv)
{
    const char *eq = strchr(kv, '=');
    if (!eq || eq == kv)
        return false;
    char key[256];
    snprintf(key, sizeof key, "%.*s", (int)(eq - kv), kv);
    char *end;
    double v = strtod(eq + 1, &end);
    cJSON_DeleteItemFromObjectCaseSensitive(o, key);
    if (eq[1] && !*end)
        cJSON_AddNumberToObject(o, key, v);
    else
        cJSON_AddStringToObject(o, key, eq + 1);
    return true;
}

/* A number option's text as a JSON number (validated by the engine, which says where). */
static bool put_num(cJSON *o, const char *key, const char *text)
{
    char *end;
    double v = strtod(text, &end);
    if (!*text || *end)
        return false;
    cJSON_AddNumberToObject(o, key, v);
    return true;
}

int cmd_fault(int argc, char **argv)
{
    static const struct option opts[] = {
        {"addr", required_argument, 0, 'a'},  {"kind", required_argument, 0, 'k'},
        {"node", required_argument, 0, 'n'},  {"pool", required_argument, 0, 'p'},
        {"label", required_argument, 0, 'l'}, {"fraction", required_argument, 0, 'f'},
        {"seed", required_argument, 0, 's'},  {"device", required_argument, 0, 'd'},
        {"at", required_argument, 0, 't'},    {"duration", required_argument, 0, 'u'},
        {"param", required_argument, 0, 'P'}, {"id", required_argument, 0, 'i'},
        {"help", no_argument, 0, 'h'},        {0, 0, 0, 0},
    };
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        fputs(help, argc < 2 ? stderr : stdout);
        return argc < 2 ? EXIT_USAGE : EXIT_OK;
    }
    const char *verb = argv[1];
    if (strcmp(verb, "add") && strcmp(verb, "list") && strcmp(verb, "clear"))
        return cli_usage_error("fault", "unknown subcommand \"%s\" (expected add, list or clear)", verb);
    const char *addr = cli_env("SIM_ADDR");
    cJSON *f = cJSON_CreateObject();
    cJSON *nodes = cJSON_CreateArray(), *pools = cJSON_CreateArray(), *labels = cJSON_CreateObject(),
          *params = cJSON_CreateObject();
    int c, rc = EXIT_OK;
    opterr = 0;
    optind = 2;
    while (rc == EXIT_OK && (c = getopt_long_only(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'a': addr = optarg; break;
        case 'k': cJSON_AddStringToObject(f, "kind", optarg); break;
        case 'n': cJSON_AddItemToArray(nodes, cJSON_CreateString(optarg)); break;
        case 'p': cJSON_AddItemToArray(pools, cJSON_CreateString(optarg)); break;
        case 'd': cJSON_AddStringToObject(f, "device", optarg); break;
        case 'i': cJSON_AddStringToObject(f, "id", optarg); break;
        case 'l': {
            const char *eq = strchr(optarg, '=');
            if (!eq || eq == optarg) {
                rc = cli_usage_error("fault", "--label %s: expected KEY=VALUE", optarg);
                break;
            }
            char key[320];
            snprintf(key, sizeof key, "%.*s", (int)(eq - optarg), optarg);
            cJSON_DeleteItemFromObjectCaseSensitive(labels, key);
            cJSON_AddStringToObject(labels, key, eq + 1); /* labels are text */
            break;
        }
        case 'P':
            if (!put_kv(params, optarg))
                rc = cli_usage_error("fault", "--param %s: expected KEY=VALUE", optarg);
            break;
        case 'f':
        case 's':
        case 't':
        case 'u': {
            const char *key = c == 'f' ? "fraction" : c == 's' ? "seed" : c == 't' ? "atSec" : "durationSec";
            const char *opt = c == 'f' ? "fraction" : c == 's' ? "seed" : c == 't' ? "at" : "duration";
            if (!put_num(f, key, optarg))
                rc = cli_usage_error("fault", "--%s %s: expected a number", opt, optarg);
            break;
        }
        case 'h': fputs(help, stdout); rc = -1; break;
        default: rc = cli_bad_option("fault", argv, opts); break;
        }
    }
    if (rc == EXIT_OK && !addr)
        addr = "127.0.0.1:18080";
    if (rc == EXIT_OK && !strcmp(verb, "add")) {
        if (optind < argc)
            rc = cli_usage_error("fault", "add takes no argument \"%s\" (options only)", argv[optind]);
        else if (!cJSON_GetObjectItemCaseSensitive(f, "kind"))
            rc = cli_usage_error("fault", "add needs --kind (see hwemu fault --help)");
    } else if (rc == EXIT_OK && !strcmp(verb, "clear") && optind != argc - 1) {
        rc = cli_usage_error("fault", "clear takes one fault id (hwemu fault list shows them)");
    } else if (rc == EXIT_OK && !strcmp(verb, "list") && optind < argc) {
        rc = cli_usage_error("fault", "list takes no argument \"%s\"", argv[optind]);
    }
    if (rc == EXIT_OK) {
        if (!strcmp(verb, "add")) {
            if (cJSON_GetArraySize(nodes))
                cJSON_AddItemToObject(f, "nodes", cJSON_Duplicate(nodes, true));
            if (cJSON_GetArraySize(pools))
                cJSON_AddItemToObject(f, "pools", cJSON_Duplicate(pools, true));
            if (cJSON_GetArraySize(labels))
                cJSON_AddItemToObject(f, "labels", cJSON_Duplicate(labels, true));
            if (cJSON_GetArraySize(params))
                cJSON_AddItemToObject(f, "params", cJSON_Duplicate(params, true));
            char *body = cJSON_PrintUnformatted(f);
            rc = request(addr, "POST", "/faults", body);
            free(body);
        } else if (!strcmp(verb, "list")) {
            rc = request(addr, "GET", "/faults", NULL);
        } else {
            char path[600];
            char *id = curl_easy_escape(NULL, argv[optind], 0);
            snprintf(path, sizeof path, "/faults/%s", id ? id : "");
            curl_free(id);
            rc = request(addr, "DELETE", path, NULL);
        }
    }
    cJSON_Delete(f);
    cJSON_Delete(nodes);
    cJSON_Delete(pools);
    cJSON_Delete(labels);
    cJSON_Delete(params);
    return rc < 0 ? EXIT_OK : rc;
}
