/* redfish: the Redfish resources a BMC serves for power, one chassis per emulated node, from the
 * telemetry snapshot: PowerConsumedWatts and PowerWatts are the BMC's reading of /telemetry's
 * nodePowerWatts, the same reading DCMI answers (the truth, with the BMC sensor's noise unless the
 * spec wants exact sensors: docs/faults.md "Sensors"); the energy is the truth.
 * Schemas and property names from the DMTF Redfish schema bundle (DSP8010: ServiceRoot,
 * ChassisCollection, Chassis, Power, PowerSubsystem, EnvironmentMetrics); what CEEMS reads
 * (gofish v0.20.0: the Chassis collection, each chassis's Power link, PowerControl[] with
 * PowerConsumedWatts and PowerMetrics) is what this must get right.
 *   /redfish, /redfish/v1, /redfish/v1/                 ServiceRoot: RedfishVersion, Chassis link
 *   /redfish/v1/Chassis                                 ChassisCollection: every node
 *   /redfish/v1/Chassis/<node>                          Chassis: Id = Name = the node, ChassisType
 *                                                       RackMount, links Power, PowerSubsystem,
 *                                                       EnvironmentMetrics
 *   /redfish/v1/Chassis/<node>/Power                    PowerControl[0]: PowerConsumedWatts (the
 *                                                       BMC's node power reading, W), PowerMetrics {IntervalInMin,
 *                                                       Min/Max/AverageConsumedWatts} since the
 *                                                       engine opened the node (IntervalInMin: the
 *                                                       period in whole minutes, rounded up),
 *                                                       PowerLimit {LimitInWatts null: no BMC
 *                                                       power limit, as DCMI says}
 *   /redfish/v1/Chassis/<node>/EnvironmentMetrics       PowerWatts.Reading (W), EnergyJoules.Reading
 *                                                       and EnergykWh.Reading (node energy: psys +
 *                                                       GPUs, as pm_counters' energy)
 *   /redfish/v1/Chassis/<node>/PowerSubsystem           Status only (no power supplies emulated)
 * A node struck by a redfish-unavailable fault (docs/faults.md) answers every resource under its
 * chassis 503 with Retry-After. A trailing slash is accepted everywhere. Unknown resources: 404 with a Redfish error body
 * (Base.1.8.ResourceMissingAtURI). Not emulated: sessions and authentication (any request is
 * answered), Systems, Managers, Thermal, Sensors, PowerSupplies, writes (PATCH of a limit). */
#include "redfish.h"

#include "engine.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "/redfish/v1/Chassis/<node><suffix>", or "/redfish/v1<suffix>" without a node. */
static const char *uri(char *buf, size_t len, const char *node, const char *suffix)
{
    if (node)
        snprintf(buf, len, "/redfish/v1/Chassis/%s%s", node, suffix);
    else
        snprintf(buf, len, "/redfish/v1%s", suffix);
    return buf;
}

static cJSON *odata_link(const char *node, const char *suffix)
{
    char id[512];
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "@odata.id", uri(id, sizeof id, node, suffix));
    return o;
}

static cJSON *resource(const char *type, const char *node, const char *suffix, const char *id, const char *name)
{
    char oid[512];
    uri(oid, sizeof oid, node, suffix);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "@odata.id", oid);
    cJSON_AddStringToObject(o, "@odata.type", type);
    cJSON_AddStringToObject(o, "Id", id);
    cJSON_AddStringToObject(o, "Name", name);
    return o;
}

static cJSON *status_ok(void)
{
    cJSON *s = cJSON_CreateObject();
    cJSON_AddStringToObject(s, "State", "Enabled");
    cJSON_AddStringToObject(s, "Health", "OK");
    return s;
}

static double node_energy_j(const struct node_telemetry *n)
{
    double uj = (double)n->platform_energy_uj;
    for (int k = 0; k < n->ngpus; k++)
        uj += (double)n->gpu_energy_uj[k];
    return uj / 1e6;
}

static cJSON *service_root(void)
{
    cJSON *o = resource("#ServiceRoot.v1_5_0.ServiceRoot", NULL, "", "RootService", "hwemu Redfish service");
    cJSON_AddStringToObject(o, "RedfishVersion", "1.6.0");
    cJSON_AddItemToObject(o, "Chassis", odata_link(NULL, "/Chassis"));
    return o;
}

static cJSON *chassis_collection(const struct telemetry *t)
{
    cJSON *o = resource("#ChassisCollection.ChassisCollection", NULL, "/Chassis", "Chassis",
                        "Chassis Collection");
    cJSON_DeleteItemFromObject(o, "Id");
    cJSON *m = cJSON_AddArrayToObject(o, "Members");
    for (int i = 0; t && i < t->n; i++)
        cJSON_AddItemToArray(m, odata_link(t->nodes[i].name, ""));
    cJSON_AddNumberToObject(o, "Members@odata.count", t ? t->n : 0);
    return o;
}

static cJSON *chassis(const struct node_telemetry *n)
{
    cJSON *o = resource("#Chassis.v1_15_0.Chassis", n->name, "", n->name, n->name);
    cJSON_AddStringToObject(o, "ChassisType", "RackMount");
    cJSON_AddItemToObject(o, "Status", status_ok());
    cJSON_AddItemToObject(o, "Power", odata_link(n->name, "/Power"));
    cJSON_AddItemToObject(o, "PowerSubsystem", odata_link(n->name, "/PowerSubsystem"));
    cJSON_AddItemToObject(o, "EnvironmentMetrics", odata_link(n->name, "/EnvironmentMetrics"));
    return o;
}

static cJSON *power(const struct node_telemetry *n)
{
    cJSON *o = resource("#Power.v1_5_0.Power", n->name, "/Power", "Power", "Power");
    cJSON *pcs = cJSON_AddArrayToObject(o, "PowerControl");
    char id[512];
    uri(id, sizeof id, n->name, "/Power#/PowerControl/0");
    cJSON *pc = cJSON_CreateObject();
    cJSON_AddStringToObject(pc, "@odata.id", id);
    cJSON_AddStringToObject(pc, "MemberId", "0");
    cJSON_AddStringToObject(pc, "Name", "System Power Control");
    cJSON_AddNumberToObject(pc, "PowerConsumedWatts", n->node_power_reading_w);
    cJSON *m = cJSON_AddObjectToObject(pc, "PowerMetrics");
    cJSON_AddNumberToObject(m, "IntervalInMin", (double)((n->node_power_period_ms + 59999) / 60000));
    cJSON_AddNumberToObject(m, "MinConsumedWatts", n->node_power_min_w);
    cJSON_AddNumberToObject(m, "MaxConsumedWatts", n->node_power_max_w);
    cJSON_AddNumberToObject(m, "AverageConsumedWatts", n->node_power_avg_w);
    cJSON *l = cJSON_AddObjectToObject(pc, "PowerLimit");
    cJSON_AddNullToObject(l, "LimitInWatts");
    cJSON_AddStringToObject(l, "LimitException", "NoAction");
    cJSON_AddItemToObject(pc, "Status", status_ok());
    cJSON_AddItemToArray(pcs, pc);
    cJSON_AddNumberToObject(o, "PowerControl@odata.count", 1);
    return o;
}

static cJSON *reading(double v)
{
    cJSON *r = cJSON_CreateObject();
    cJSON_AddNumberToObject(r, "Reading", v);
    return r;
}

static cJSON *environment(const struct node_telemetry *n)
{
    cJSON *o = resource("#EnvironmentMetrics.v1_3_0.EnvironmentMetrics", n->name, "/EnvironmentMetrics", "EnvironmentMetrics", "Chassis Environment Metrics");
    double j = node_energy_j(n);
    cJSON_AddItemToObject(o, "PowerWatts", reading(n->node_power_reading_w));
    cJSON_AddItemToObject(o, "EnergyJoules", reading(j));
    cJSON_AddItemToObject(o, "EnergykWh", reading(j / 3.6e6));
    return o;
}

static cJSON *power_subsystem(const struct node_telemetry *n)
{
    cJSON *o = resource("#PowerSubsystem.v1_1_0.PowerSubsystem", n->name, "/PowerSubsystem", "PowerSubsystem", "Power Subsystem");
    cJSON_AddItemToObject(o, "Status", status_ok());
    return o;
}

static unsigned reply(cJSON *o, unsigned code, char **body, size_t *len)
{
    char *s = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    *body = s;
    *len = s ? strlen(s) : 0;
    return code;
}

static unsigned missing(const char *url, char **body, size_t *len)
{
    cJSON *o = cJSON_CreateObject();
    cJSON *e = cJSON_AddObjectToObject(o, "error");
    char msg[600];
    snprintf(msg, sizeof msg, "The resource at the URI %.500s was not found (nodes: /redfish/v1/Chassis).", url);
    cJSON_AddStringToObject(e, "code", "Base.1.8.ResourceMissingAtURI");
    cJSON_AddStringToObject(e, "message", msg);
    return reply(o, 404, body, len);
}

/* A node's BMC that is unavailable (docs/faults.md redfish-unavailable): 503 with Retry-After and
 * the Base registry's ServiceTemporarilyUnavailable as bmcweb sends it (faults.md §7.2, §7.3). */
static unsigned unavailable(int retry, char **body, size_t *len, int *retry_after)
{
    char msg[128], arg[16];
    snprintf(msg, sizeof msg, "The service is temporarily unavailable.  Retry in %d seconds.", retry);
    snprintf(arg, sizeof arg, "%d", retry);
    cJSON *o = cJSON_CreateObject();
    cJSON *e = cJSON_AddObjectToObject(o, "error");
    cJSON_AddStringToObject(e, "code", "Base.1.8.ServiceTemporarilyUnavailable");
    cJSON_AddStringToObject(e, "message", msg);
    cJSON *x = cJSON_AddArrayToObject(e, "@Message.ExtendedInfo");
    cJSON *m = cJSON_CreateObject();
    cJSON_AddStringToObject(m, "@odata.type", "#Message.v1_1_1.Message");
    cJSON_AddStringToObject(m, "MessageId", "Base.1.8.ServiceTemporarilyUnavailable");
    cJSON_AddStringToObject(m, "Message", msg);
    cJSON_AddItemToObject(m, "MessageArgs", cJSON_CreateStringArray((const char *const[]){arg}, 1));
    cJSON_AddStringToObject(m, "MessageSeverity", "Critical");
    cJSON_AddStringToObject(m, "Resolution", "Wait for the indicated retry duration and retry the operation.");
    cJSON_AddItemToArray(x, m);
    *retry_after = retry;
    return reply(o, 503, body, len);
}

unsigned redfish_http(const struct telemetry *t, const char *url, char **body, size_t *len, int *retry_after)
{
    *retry_after = 0;
    char path[512];
    size_t n = strlen(url);
    if (n >= sizeof path)
        return missing("(too long)", body, len);
    memcpy(path, url, n + 1);
    while (n > 1 && path[n - 1] == '/')
        path[--n] = 0; /* a trailing slash names the same resource */
    if (!strcmp(path, "/redfish") || !strcmp(path, "/redfish/v1"))
        return reply(service_root(), 200, body, len);
    if (!strcmp(path, "/redfish/v1/Chassis"))
        return reply(chassis_collection(t), 200, body, len);
    const char *p = "/redfish/v1/Chassis/";
    if (strncmp(path, p, strlen(p)))
        return missing(url, body, len);
    const char *name = path + strlen(p), *slash = strchr(name, '/');
    size_t nl = slash ? (size_t)(slash - name) : strlen(name);
    const char *sub = slash ? slash + 1 : "";
    for (int i = 0; t && i < t->n; i++) {
        const struct node_telemetry *nt = &t->nodes[i];
        if (strlen(nt->name) != nl || strncmp(nt->name, name, nl))
            continue;
        if (nt->redfish_retry_s < 0) { /* its BMC lost its power with the node: no answer */
            *body = NULL;
            *len = 0;
            return 0;
        }
        if (nt->redfish_retry_s > 0)
            return unavailable(nt->redfish_retry_s, body, len, retry_after);
        if (!*sub)
            return reply(chassis(nt), 200, body, len);
        if (!strcmp(sub, "Power"))
            return reply(power(nt), 200, body, len);
        if (!strcmp(sub, "EnvironmentMetrics"))
            return reply(environment(nt), 200, body, len);
        if (!strcmp(sub, "PowerSubsystem"))
            return reply(power_subsystem(nt), 200, body, len);
        break;
    }
    return missing(url, body, len);
}
