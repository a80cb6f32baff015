/*
 * Suite "table": devserver/table.c against kube-apiserver's Table output.
 *
 * Table-driven: the JSONPath dialect of printer columns (Kueue's columns
 * included), path checking, HumanDuration at every boundary, the Job
 * status/completions/duration cells, the Pod, Event and other built-in
 * printers, CRD cell typing, and the Table JSON shape for each
 * includeObject. `now` is fixed; nothing reads the clock.
 *
 * Table JSON uses ' for " to stay readable; t_jq() swaps them back.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "devserver/table.h"
#include "model/timestamp.h"
#include "suites.h"
#include "test/support/support.h"

#define NOW_TEXT "2025-01-10T00:00:00Z"

static int64_t now_ms(void)
{
	int64_t t = 0;

	ck_assert_int_eq(timestamp_parse(NOW_TEXT, &t), 0);
	return t;
}

/* Parses table JSON written with ' instead of "; new ref. */
static char *dump(const json_t *j)
{
	char *s = j ? json_dumps(j, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;

	return s ? s : xstrdup("(NULL)");
}

static void assert_json(const char *name, const json_t *got, const json_t *want)
{
	char *g, *w;

	if ((!got && !want) || (got && want && json_equal(got, want)))
		return;
	g = dump(got);
	w = dump(want);
	ck_abort_msg("%s:\n  got  %s\n  want %s", name, g, w);
}

/* Asserts the cells of row (from index from) equal want (a JSON array). */
static void assert_cells(const char *name, const json_t *row, size_t from,
			 const char *want)
{
	json_t *w = t_jq(want), *got = json_array();
	const json_t *cells = json_object_get(row, "cells");

	for (size_t i = from; i < json_array_size(cells); i++)
		json_array_append(got, json_array_get(cells, i));
	assert_json(name, got, w);
	json_decref(w);
	json_decref(got);
}

/* ---------------------------------------------------------------- */

#define WL "{'metadata':{'name':'x','creationTimestamp':'2025-01-09T23:59:55Z','labels':{'a.b/c':'v'}}," \
	"'spec':{'queueName':'user-queue','podSets':[{'name':'main','count':3},{'name':'aux','count':1}]}," \
	"'status':{'admission':{'clusterQueue':'cq'},'n':[1,2.5],'conditions':[{'type':'QuotaReserved','status':'True'}," \
	"{'type':'Admitted','status':'True','reason':'Admitted'},{'type':'Evicted','status':'False'}]}}"

struct path_case {
	const char *path;
	const char *want; /* JSON text; NULL: nothing; "SELF": the object */
};

static const struct path_case path_cases[] = {
	{ ".spec.queueName", "'user-queue'" },
	{ ".status.admission.clusterQueue", "'cq'" },
	{ ".status.conditions[?(@.type=='Admitted')].status", "'True'" },
	{ ".status.conditions[?(@.type==\"Admitted\")].reason", "'Admitted'" },
	{ ".status.conditions[?(@.type=='Finished')].status", NULL },
	{ ".status.conditions[?(@.type!='QuotaReserved')].type", "'Admitted'" },
	{ ".status.conditions[?( @.type == 'Evicted' )].status", "'False'" },
	{ ".status.conditions[?(@.type=='Admitted')]", "{'type':'Admitted','status':'True','reason':'Admitted'}" },
	{ ".status.conditions[?(@.reason)].type", "'Admitted'" },
	{ ".spec.podSets[?(@.count==1)].name", "'aux'" },
	{ ".spec.podSets[?(@.count=='1')].name", NULL },
	{ ".spec.podSets[?(@.count>1)].name", "'main'" },
	{ ".spec.podSets[?(@.count<=1)].name", "'aux'" },
	{ ".spec.podSets[0].name", "'main'" },
	{ ".spec.podSets[-1].name", "'aux'" },
	{ ".spec.podSets[5].name", NULL },
	{ ".spec.podSets[*].name", "'main'" },
	{ ".spec.podSets[*]", "{'name':'main','count':3}" },
	{ ".spec.podSets.name", NULL },
	{ ".spec.queueName.deeper", NULL },
	{ ".spec.queueName[0]", NULL },
	{ ".metadata.labels['a.b/c']", "'v'" },
	{ ".metadata['labels'][\"a.b/c\"]", "'v'" },
	{ ".status.n[1]", "2.5" },
	{ ".status.*.clusterQueue", "'cq'" },
	{ ".nope", NULL },
	{ ".", "SELF" },
	{ "no-dot", NULL },
	{ ".a..b", NULL },
};

START_TEST(jsonpath)
{
	const struct path_case *c = &path_cases[_i];
	json_t *obj = t_jq(WL);
	json_t *want = !c->want ? NULL : !strcmp(c->want, "SELF") ?
		json_incref(obj) : t_jq(c->want);
	json_t *got = jsonpath_eval(obj, c->path);

	assert_json(c->path, got, want);
	json_decref(got);
	json_decref(want);
	ck_assert_refcount(obj, 1);
	json_decref(obj);
}
END_TEST

struct check_case {
	const char *path;
	bool ok;
};

static const struct check_case check_cases[] = {
	{ ".spec.queueName", true },
	{ ".status.conditions[?(@.type=='Admitted')].status", true },
	{ ".status.conditions[?(@.type==\"Finished\")].status", true },
	{ ".", true },
	{ ".a[0]", true },
	{ ".a[-1]", true },
	{ ".a[*].b", true },
	{ ".a.*", true },
	{ ".a[?(@.x)]", true },
	{ ".a[?(@.x==1.5)]", true },
	{ ".a[?(@.x!=true)]", true },
	{ ".a['b.c']", true },
	{ "spec.x", false },
	{ "", false },
	{ "{.a}", false },
	{ ".a..b", false },
	{ ".a[1:2]", false },
	{ ".a[0,1]", false },
	{ ".a[?(@.x=~'y')]", false },
	{ ".a[", false },
	{ ".a[?(@.x=='y']", false },
	{ ".a['unterminated]", false },
	{ ".a[x]", false },
	{ ".a[?(x=='y')]", false },
	{ ".a b", false },
};

START_TEST(jsonpath_checks)
{
	const struct check_case *c = &check_cases[_i];
	struct err err = { "" };
	int r = jsonpath_check(c->path, &err);

	ck_assert_msg((r == 0) == c->ok, "'%s': got %d (%s)", c->path, r, err.msg);
	if (!c->ok)
		ck_assert_msg(err.msg[0], "'%s': no message", c->path);
}
END_TEST

/* ---------------------------------------------------------------- */

#define S 1000LL
#define M (60 * S)
#define H (60 * M)
#define D (24 * H)

struct age_case {
	long long ago; /* ms */
	const char *want;
};

static const struct age_case age_cases[] = {
	{ -2 * S, "<invalid>" },
	{ -1999, "0s" },
	{ -1 * S, "0s" },
	{ -1, "0s" },
	{ 0, "0s" },
	{ 999, "0s" },
	{ 1 * S, "1s" },
	{ 5 * S, "5s" },
	{ 119 * S + 999, "119s" },
	{ 2 * M, "2m" },
	{ 2 * M + 1 * S, "2m1s" },
	{ 9 * M + 59 * S, "9m59s" },
	{ 10 * M, "10m" },
	{ 10 * M + 30 * S, "10m" },
	{ 3 * H - 1, "179m" },
	{ 3 * H, "3h" },
	{ 3 * H + 1 * M, "3h1m" },
	{ 8 * H - 1, "7h59m" },
	{ 8 * H, "8h" },
	{ 48 * H - 1, "47h" },
	{ 48 * H, "2d" },
	{ 49 * H, "2d1h" },
	{ 8 * D - 1, "7d23h" },
	{ 8 * D, "8d" },
	{ 2 * 365 * D - 1, "729d" },
	{ 2 * 365 * D, "2y" },
	{ 3 * 365 * D + 45 * D, "3y45d" },
	{ 8 * 365 * D - 1, "7y364d" },
	{ 8 * 365 * D, "8y" },
	{ 30 * 365 * D + 100 * D, "30y" },
};

START_TEST(age)
{
	const struct age_case *c = &age_cases[_i];
	char buf[32];
	int64_t now = now_ms();

	ck_assert_str_eq(table_age(now, now - c->ago, buf, sizeof(buf)), c->want);
}
END_TEST

START_TEST(age_extremes)
{
	char buf[32];

	ck_assert_str_eq(table_age(INT64_MAX, INT64_MIN, buf, sizeof(buf)), "292471208y");
	ck_assert_str_eq(table_age(INT64_MIN, INT64_MAX, buf, sizeof(buf)), "<invalid>");
	ck_assert_str_eq(table_age(0, 0, buf, 2), "0");
}
END_TEST

/* ---------------------------------------------------------------- */
/* Job: Status, Completions, Duration (printJob).                    */

struct job_case {
	const char *name;
	const char *job;
	const char *status;
	const char *completions;
	const char *duration;
};

static const struct job_case job_cases[] = {
	{ "new job", "{}", "Running", "0/1", "" },
	{ "completions", "{'spec':{'completions':3},'status':{'succeeded':1}}",
	  "Running", "1/3", "" },
	{ "parallelism", "{'spec':{'parallelism':2}}", "Running", "0/1 of 2", "" },
	{ "parallelism 1", "{'spec':{'parallelism':1},'status':{'succeeded':1}}",
	  "Running", "1/1", "" },
	{ "complete",
	  "{'spec':{'completions':1},'status':{'succeeded':1,'startTime':'2025-01-09T23:00:00Z','completionTime':'2025-01-09T23:01:30Z',"
	  "'conditions':[{'type':'SuccessCriteriaMet','status':'True'},{'type':'Complete','status':'True'}]}}",
	  "Complete", "1/1", "90s" },
	{ "failed",
	  "{'status':{'conditions':[{'type':'Complete','status':'False'},{'type':'Failed','status':'True'}]}}",
	  "Failed", "0/1", "" },
	{ "complete wins over failed",
	  "{'status':{'conditions':[{'type':'Failed','status':'True'},{'type':'Complete','status':'True'}]}}",
	  "Complete", "0/1", "" },
	{ "terminating", "{'metadata':{'name':'j','deletionTimestamp':'2025-01-09T23:59:00Z'}}",
	  "Terminating", "0/1", "" },
	{ "failed wins over terminating",
	  "{'metadata':{'deletionTimestamp':'2025-01-09T23:59:00Z'},'status':{'conditions':[{'type':'Failed','status':'True'}]}}",
	  "Failed", "0/1", "" },
	{ "suspended", "{'spec':{'suspend':true},'status':{'conditions':[{'type':'Suspended','status':'True'}]}}",
	  "Suspended", "0/1", "" },
	{ "terminating wins over suspended",
	  "{'metadata':{'deletionTimestamp':'2025-01-09T23:59:00Z'},'status':{'conditions':[{'type':'Suspended','status':'True'}]}}",
	  "Terminating", "0/1", "" },
	{ "resumed", "{'status':{'conditions':[{'type':'Suspended','status':'False'}]}}",
	  "Running", "0/1", "" },
	{ "failure target", "{'status':{'conditions':[{'type':'FailureTarget','status':'True'}]}}",
	  "FailureTarget", "0/1", "" },
	{ "running for 5m30s", "{'status':{'startTime':'2025-01-09T23:54:30Z','active':1}}",
	  "Running", "0/1", "5m30s" },
	{ "first condition of a type decides",
	  "{'status':{'conditions':[{'type':'Complete','status':'False'},{'type':'Complete','status':'True'}]}}",
	  "Running", "0/1", "" },
};

START_TEST(job_status)
{
	const struct job_case *c = &job_cases[_i];
	json_t *job = t_jq(c->job);
	json_t *row = table_row(job, NULL, "Job", TABLE_OBJECT_NONE, now_ms());
	const json_t *cells = json_object_get(row, "cells");

	ck_assert_uint_eq(json_array_size(cells), 8);
	ck_assert_msg(!strcmp(json_string_value(json_array_get(cells, 1)), c->status),
		      "%s: status %s", c->name, json_string_value(json_array_get(cells, 1)));
	ck_assert_str_eq(json_string_value(json_array_get(cells, 2)), c->completions);
	ck_assert_str_eq(json_string_value(json_array_get(cells, 3)), c->duration);
	json_decref(row);
	json_decref(job);
}
END_TEST

START_TEST(job_row)
{
	json_t *job = t_jq("{'metadata':{'name':'sample-job','creationTimestamp':'2025-01-09T23:57:00Z'},"
			   "'spec':{'selector':{'matchLabels':{'batch.kubernetes.io/controller-uid':'abc'}},"
			   "'template':{'spec':{'containers':[{'name':'a','image':'busybox'},{'name':'b','image':'nginx:1'}]}}}}");
	json_t *row = table_row(job, NULL, "Job", TABLE_OBJECT_NONE, now_ms());

	assert_cells("job", row, 0,
		     "['sample-job','Running','0/1','','3m','a,b','busybox,nginx:1','batch.kubernetes.io/controller-uid=abc']");
	ck_assert(json_is_null(json_object_get(row, "object")));
	json_decref(row);
	json_decref(job);
}
END_TEST

struct selector_case {
	const char *selector;
	const char *want;
};

static const struct selector_case selector_cases[] = {
	{ "null", "<none>" },
	{ "{}", "<none>" },
	{ "{'matchLabels':{'b':'2','a':'1'}}", "a=1,b=2" },
	{ "{'matchExpressions':[{'key':'k','operator':'In','values':['y','x']}]}", "k in (x,y)" },
	{ "{'matchExpressions':[{'key':'k','operator':'NotIn','values':['x']}]}", "k notin (x)" },
	{ "{'matchExpressions':[{'key':'z','operator':'Exists'},{'key':'a','operator':'DoesNotExist'}],'matchLabels':{'m':'1'}}",
	  "!a,m=1,z" },
	{ "{'matchExpressions':[{'key':'k','operator':'Bogus'}]}", "<error>" },
	{ "{'matchExpressions':[{'key':'k','operator':'In','values':[]}]}", "<error>" },
	{ "{'matchExpressions':[{'key':'k','operator':'Exists','values':['x']}]}", "<error>" },
};

START_TEST(job_selector)
{
	const struct selector_case *c = &selector_cases[_i];
	json_t *sel = t_jq(c->selector);
	json_t *job = json_pack("{s:{s:O}}", "spec", "selector", sel);
	json_t *row = table_row(job, NULL, "Job", TABLE_OBJECT_NONE, now_ms());

	ck_assert_str_eq(json_string_value(json_array_get(json_object_get(row, "cells"), 7)),
			 c->want);
	json_decref(row);
	json_decref(job);
	json_decref(sel);
}
END_TEST

/* ---------------------------------------------------------------- */
/* Pod: Ready, Status, Restarts and the wide columns (printPod).     */

struct pod_case {
	const char *name;
	const char *pod;
	const char *cells; /* cells 1..end */
	const char *conditions; /* row conditions, NULL when none */
};

static const struct pod_case pod_cases[] = {
	{ "running",
	  "{'spec':{'containers':[{'name':'c'}],'nodeName':'n1'},'status':{'phase':'Running','podIP':'10.0.0.5',"
	  "'conditions':[{'type':'Ready','status':'True'}],"
	  "'containerStatuses':[{'name':'c','ready':true,'restartCount':0,'state':{'running':{}}}]}}",
	  "['1/1','Running','0','<unknown>','10.0.0.5','n1','<none>','<none>']", NULL },
	{ "pending, container creating",
	  "{'spec':{'containers':[{'name':'c'},{'name':'d'}]},'status':{'phase':'Pending',"
	  "'containerStatuses':[{'name':'c','state':{'waiting':{'reason':'ContainerCreating'}}},{'name':'d','state':{'waiting':{'reason':'ContainerCreating'}}}]}}",
	  "['0/2','ContainerCreating','0','<unknown>','<none>','<none>','<none>','<none>']", NULL },
	{ "crash loop with restarts",
	  "{'spec':{'containers':[{'name':'c'}]},'status':{'phase':'Running',"
	  "'containerStatuses':[{'name':'c','restartCount':3,'state':{'waiting':{'reason':'CrashLoopBackOff'}},"
	  "'lastState':{'terminated':{'exitCode':1,'finishedAt':'2025-01-09T23:55:00Z'}}}]}}",
	  "['0/1','CrashLoopBackOff','3 (5m ago)','<unknown>','<none>','<none>','<none>','<none>']", NULL },
	{ "succeeded",
	  "{'spec':{'containers':[{'name':'c'}]},'status':{'phase':'Succeeded',"
	  "'containerStatuses':[{'name':'c','state':{'terminated':{'exitCode':0,'reason':'Completed'}}}]}}",
	  "['0/1','Completed','0','<unknown>','<none>','<none>','<none>','<none>']",
	  "[{'type':'Completed','status':'True','reason':'Succeeded','message':'The pod has completed successfully.'}]" },
	{ "failed without reason",
	  "{'spec':{'containers':[{'name':'c'}]},'status':{'phase':'Failed',"
	  "'containerStatuses':[{'name':'c','state':{'terminated':{'exitCode':2}}}]}}",
	  "['0/1','ExitCode:2','0','<unknown>','<none>','<none>','<none>','<none>']",
	  "[{'type':'Completed','status':'True','reason':'Failed','message':'The pod failed.'}]" },
	{ "init waiting",
	  "{'spec':{'initContainers':[{'name':'i'}],'containers':[{'name':'c'}]},'status':{'phase':'Pending',"
	  "'initContainerStatuses':[{'name':'i','state':{'waiting':{'reason':'PodInitializing'}}}],"
	  "'containerStatuses':[{'name':'c','state':{'waiting':{'reason':'PodInitializing'}}}]}}",
	  "['0/1','Init:0/1','0','<unknown>','<none>','<none>','<none>','<none>']", NULL },
	{ "init failed",
	  "{'spec':{'initContainers':[{'name':'i'},{'name':'j'}],'containers':[{'name':'c'}]},'status':{'phase':'Pending',"
	  "'initContainerStatuses':[{'name':'i','state':{'terminated':{'exitCode':0}}},{'name':'j','restartCount':2,'state':{'terminated':{'exitCode':1}}}]}}",
	  "['0/1','Init:ExitCode:1','2','<unknown>','<none>','<none>','<none>','<none>']", NULL },
	{ "sidecar counts as a container",
	  "{'spec':{'initContainers':[{'name':'s','restartPolicy':'Always'}],'containers':[{'name':'c'}]},'status':{'phase':'Running',"
	  "'conditions':[{'type':'Initialized','status':'True'}],"
	  "'initContainerStatuses':[{'name':'s','started':true,'ready':true,'state':{'running':{}}}],"
	  "'containerStatuses':[{'name':'c','ready':true,'state':{'running':{}}}]}}",
	  "['2/2','Running','0','<unknown>','<none>','<none>','<none>','<none>']", NULL },
	{ "terminating",
	  "{'metadata':{'deletionTimestamp':'2025-01-09T23:59:00Z'},'spec':{'containers':[{'name':'c'}]},'status':{'phase':'Running',"
	  "'containerStatuses':[{'name':'c','ready':true,'state':{'running':{}}}]}}",
	  "['1/1','Terminating','0','<unknown>','<none>','<none>','<none>','<none>']", NULL },
	{ "node lost",
	  "{'metadata':{'deletionTimestamp':'2025-01-09T23:59:00Z'},'spec':{'containers':[{'name':'c'}]},'status':{'phase':'Running','reason':'NodeLost'}}",
	  "['0/1','Unknown','0','<unknown>','<none>','<none>','<none>','<none>']", NULL },
	{ "scheduling gated",
	  "{'spec':{'containers':[{'name':'c'}],'schedulingGates':[{'name':'kueue.x-k8s.io/admission'}]},'status':{'phase':'Pending',"
	  "'conditions':[{'type':'PodScheduled','status':'False','reason':'SchedulingGated'}]}}",
	  "['0/1','SchedulingGated','0','<unknown>','<none>','<none>','<none>','<none>']", NULL },
	{ "wide columns",
	  "{'spec':{'containers':[{'name':'c'}],'nodeName':'n2','readinessGates':[{'conditionType':'a'},{'conditionType':'b'}]},"
	  "'status':{'phase':'Running','podIPs':[{'ip':'10.1.1.1'},{'ip':'fd00::1'}],'nominatedNodeName':'n3',"
	  "'conditions':[{'type':'a','status':'True'},{'type':'b','status':'False'}]}}",
	  "['0/1','Running','0','<unknown>','10.1.1.1','n2','n3','1/2']", NULL },
};

START_TEST(pod_cells)
{
	const struct pod_case *c = &pod_cases[_i];
	json_t *pod = t_jq(c->pod);
	json_t *row = table_row(pod, NULL, "Pod", TABLE_OBJECT_NONE, now_ms());
	json_t *want_conds = c->conditions ? t_jq(c->conditions) : NULL;

	assert_cells(c->name, row, 1, c->cells);
	assert_json(c->name, json_object_get(row, "conditions"), want_conds);
	json_decref(want_conds);
	json_decref(row);
	json_decref(pod);
}
END_TEST

/* ---------------------------------------------------------------- */
/* The other built-in printers.                                      */

struct builtin_case {
	const char *kind;
	const char *obj;
	const char *cells;
};

#define CREATED "'creationTimestamp':'2025-01-09T22:00:00Z'"

static const struct builtin_case builtin_cases[] = {
	{ "Namespace", "{'metadata':{'name':'default'," CREATED "},'status':{'phase':'Active'}}",
	  "['default','Active','120m']" },
	{ "Event",
	  "{'metadata':{'name':'ev1'},'type':'Normal','reason':'SuccessfulCreate','message':'  Created pod: p \\n',"
	  "'involvedObject':{'kind':'Job','name':'j'},'source':{'component':'job-controller'},"
	  "'firstTimestamp':'2025-01-09T23:50:00Z','lastTimestamp':'2025-01-09T23:58:00Z','count':3}",
	  "['2m','Normal','SuccessfulCreate','job/j','','job-controller','Created pod: p','10m',3,'ev1']" },
	{ "Event",
	  "{'metadata':{'name':'ev2'},'type':'Warning','reason':'Pending','message':'m',"
	  "'involvedObject':{'kind':'Workload','name':'w','fieldPath':'spec'},"
	  "'eventTime':'2025-01-09T23:59:30.123456Z','reportingComponent':'kueue','reportingInstance':'kueue-0'}",
	  "['29s','Warning','Pending','workload/w','spec','kueue, kueue-0','m','29s',1,'ev2']" },
	{ "Event",
	  "{'metadata':{'name':'ev3'},'involvedObject':{'kind':'Node'},'series':{'count':7,'lastObservedTime':'2025-01-09T23:59:00.000000Z'},"
	  "'eventTime':'2025-01-09T23:00:00.000000Z','source':{'component':'kubelet','host':'n1'}}",
	  "['60s','','','node','','kubelet, n1','','60m',7,'ev3']" },
	{ "ConfigMap", "{'metadata':{'name':'cm'," CREATED "},'data':{'a':'1','b':'2'},'binaryData':{'c':'AA=='}}",
	  "['cm',3,'120m']" },
	{ "Secret", "{'metadata':{'name':'s'," CREATED "},'type':'Opaque','data':{'a':'MQ==','b':'Mg=='}}",
	  "['s','Opaque',2,'120m']" },
	{ "Service",
	  "{'metadata':{'name':'svc'," CREATED "},'spec':{'type':'NodePort','clusterIP':'10.0.0.1','clusterIPs':['10.0.0.1'],"
	  "'ports':[{'port':80,'protocol':'TCP'},{'port':443,'nodePort':30443,'protocol':'TCP'}],'selector':{'app':'x','tier':'web'}}}",
	  "['svc','NodePort','10.0.0.1','<none>','80/TCP,443:30443/TCP','120m','app=x,tier=web']" },
	{ "Service", "{'metadata':{'name':'lb'},'spec':{'type':'LoadBalancer','clusterIP':'10.0.0.2'}}",
	  "['lb','LoadBalancer','10.0.0.2','<pending>','<none>','<unknown>','<none>']" },
	{ "Service",
	  "{'metadata':{'name':'lb'},'spec':{'type':'LoadBalancer','externalIPs':['9.9.9.9'],'ports':[{'port':53,'protocol':'UDP'}]},"
	  "'status':{'loadBalancer':{'ingress':[{'ip':'5.5.5.5'},{'hostname':'a.example'},{'ip':'5.5.5.5'}]}}}",
	  "['lb','LoadBalancer','<none>','5.5.5.5,a.example,9.9.9.9','53/UDP','<unknown>','<none>']" },
	{ "Service", "{'metadata':{'name':'ext'},'spec':{'type':'ExternalName','externalName':'db.example'}}",
	  "['ext','ExternalName','<none>','db.example','<none>','<unknown>','<none>']" },
	{ "Service", "{'metadata':{'name':'plain'},'spec':{'ports':[{'port':8080}]}}",
	  "['plain','ClusterIP','<none>','<none>','8080/TCP','<unknown>','<none>']" },
	{ "PriorityClass",
	  "{'metadata':{'name':'high'," CREATED "},'value':1000,'globalDefault':true,'preemptionPolicy':'PreemptLowerPriority'}",
	  "['high',1000,true,'120m','PreemptLowerPriority']" },
	{ "PriorityClass", "{'metadata':{'name':'low'},'value':-5}", "['low',-5,false,'<unknown>','']" },
	{ "Lease", "{'metadata':{'name':'kueue-leader'," CREATED "},'spec':{'holderIdentity':'pod-1_abc'}}",
	  "['kueue-leader','pod-1_abc','120m']" },
	{ "MutatingWebhookConfiguration", "{'metadata':{'name':'m'," CREATED "},'webhooks':[{},{}]}",
	  "['m',2,'120m']" },
	{ "CustomResourceDefinition", "{'metadata':{'name':'workloads.kueue.x-k8s.io','creationTimestamp':'2025-01-09T23:59:55+01:00'}}",
	  "['workloads.kueue.x-k8s.io','2025-01-09T22:59:55Z']" },
	{ "LimitRange", "{'metadata':{'name':'lr'}}", "['lr','0001-01-01T00:00:00Z']" },
};

START_TEST(builtin_cells)
{
	const struct builtin_case *c = &builtin_cases[_i];
	json_t *obj = t_jq(c->obj);
	json_t *row = table_row(obj, NULL, c->kind, TABLE_OBJECT_METADATA, now_ms());
	json_t *cols = table_columns(NULL, c->kind);

	assert_cells(c->kind, row, 0, c->cells);
	ck_assert_uint_eq(json_array_size(json_object_get(row, "cells")),
			  json_array_size(cols));
	json_decref(cols);
	json_decref(row);
	json_decref(obj);
}
END_TEST

struct columns_case {
	const char *kind;
	const char *names; /* "Name:0,Status:0,..." name:priority */
};

static const struct columns_case columns_cases[] = {
	{ "Job", "Name:0,Status:0,Completions:0,Duration:0,Age:0,Containers:1,Images:1,Selector:1" },
	{ "Pod", "Name:0,Ready:0,Status:0,Restarts:0,Age:0,IP:1,Node:1,Nominated Node:1,Readiness Gates:1" },
	{ "Namespace", "Name:0,Status:0,Age:0" },
	{ "Event", "Last Seen:0,Type:0,Reason:0,Object:0,Subobject:1,Source:1,Message:0,First Seen:1,Count:1,Name:1" },
	{ "CustomResourceDefinition", "Name:0,Created At:0" },
	{ "ConfigMap", "Name:0,Data:0,Age:0" },
	{ "Secret", "Name:0,Type:0,Data:0,Age:0" },
	{ "Service", "Name:0,Type:0,Cluster-IP:0,External-IP:0,Port(s):0,Age:0,Selector:1" },
	{ "PriorityClass", "Name:0,Value:0,Global-Default:0,Age:0,PreemptionPolicy:0" },
	{ "Lease", "Name:0,Holder:0,Age:0" },
	{ "ValidatingWebhookConfiguration", "Name:0,Webhooks:0,Age:0" },
	{ "RuntimeClassOrAnythingElse", "Name:0,Created At:0" },
};

START_TEST(builtin_columns)
{
	const struct columns_case *c = &columns_cases[_i];
	json_t *cols = table_columns(NULL, c->kind);
	char got[512] = "";
	size_t i, o = 0;
	const json_t *col;

	json_array_foreach(cols, i, col) {
		o += (size_t)snprintf(got + o, sizeof(got) - o, "%s%s:%lld",
				      i ? "," : "",
				      json_string_value(json_object_get(col, "name")),
				      (long long)json_integer_value(json_object_get(col, "priority")));
		ck_assert_uint_eq(json_object_size(col), 5);
		ck_assert(json_is_string(json_object_get(col, "type")));
		ck_assert(json_is_string(json_object_get(col, "format")));
		ck_assert(json_string_length(json_object_get(col, "description")) > 0);
	}
	ck_assert_str_eq(got, c->names);
	json_decref(cols);
}
END_TEST

/* ---------------------------------------------------------------- */
/* Custom resources: Kueue's columns and cellForJSONValue.           */

/* Kueue's Workload printer columns (v1beta1), in real JSON because the
 * filters quote with '. */
static const char wl_columns[] =
	"[{\"name\":\"Queue\",\"type\":\"string\",\"description\":\"Name of the queue this workload was submitted to\",\"jsonPath\":\".spec.queueName\"},"
	"{\"name\":\"Reserved in\",\"type\":\"string\",\"jsonPath\":\".status.admission.clusterQueue\"},"
	"{\"name\":\"Admitted\",\"type\":\"string\",\"description\":\"Admission status\",\"jsonPath\":\".status.conditions[?(@.type=='Admitted')].status\"},"
	"{\"name\":\"Finished\",\"type\":\"string\",\"description\":\"Workload finished\",\"jsonPath\":\".status.conditions[?(@.type=='Finished')].status\"},"
	"{\"name\":\"Age\",\"type\":\"date\",\"description\":\"Time this workload was created\",\"jsonPath\":\".metadata.creationTimestamp\"}]";

START_TEST(kueue_columns)
{
	json_t *cols_in = t_json(wl_columns);
	json_t *obj = t_jq(WL);
	json_t *cols, *row;

	cols = table_columns(cols_in, NULL);
	ck_assert_uint_eq(json_array_size(cols), 6);
	{
		json_t *name = t_jq("{'name':'Name','type':'string','format':'name','description':'Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names','priority':0}");
		json_t *reserved = t_jq("{'name':'Reserved in','type':'string','format':'','description':'Custom resource definition column (in JSONPath format): .status.admission.clusterQueue','priority':0}");
		json_t *agecol = t_jq("{'name':'Age','type':'date','format':'','description':'Time this workload was created','priority':0}");

		assert_json("name column", json_array_get(cols, 0), name);
		assert_json("reserved column", json_array_get(cols, 2), reserved);
		assert_json("age column", json_array_get(cols, 5), agecol);
		json_decref(name);
		json_decref(reserved);
		json_decref(agecol);
	}
	row = table_row(obj, cols_in, NULL, TABLE_OBJECT_METADATA, now_ms());
	assert_cells("workload row", row, 0, "['x','user-queue','cq','True',null,'5s']");
	ck_assert_refcount(cols_in, 1);
	ck_assert_refcount(obj, 1);
	json_decref(row);
	json_decref(cols);
	json_decref(cols_in);
	json_decref(obj);
}
END_TEST

START_TEST(crd_default_columns)
{
	json_t *obj = t_jq("{'metadata':{'name':'rf','creationTimestamp':'2025-01-07T00:00:00Z'}}");
	json_t *cols = table_columns(NULL, NULL);
	json_t *empty = json_array();
	json_t *cols2 = table_columns(empty, NULL);
	json_t *row = table_row(obj, empty, NULL, TABLE_OBJECT_METADATA, now_ms());
	json_t *want = t_jq("[{'name':'Name','type':'string','format':'name'},{'name':'Age','type':'date','format':''}]");
	size_t i;
	const json_t *w;

	ck_assert_uint_eq(json_array_size(cols), 2);
	json_array_foreach(want, i, w) {
		const json_t *g = json_array_get(cols, i);

		ck_assert_str_eq(json_string_value(json_object_get(g, "name")),
				 json_string_value(json_object_get(w, "name")));
		ck_assert_str_eq(json_string_value(json_object_get(g, "type")),
				 json_string_value(json_object_get(w, "type")));
		ck_assert_str_eq(json_string_value(json_object_get(g, "format")),
				 json_string_value(json_object_get(w, "format")));
	}
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(cols, 1), "description")),
			 "CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata");
	ck_assert(json_equal(cols, cols2));
	assert_cells("default row", row, 0, "['rf','3d']");
	json_decref(want);
	json_decref(row);
	json_decref(cols2);
	json_decref(empty);
	json_decref(cols);
	json_decref(obj);
}
END_TEST

struct cell_case {
	const char *type;
	const char *value; /* JSON of .v (' for "); NULL: absent */
	const char *want;  /* JSON of the cell, plain */
};

static const struct cell_case cell_cases[] = {
	{ "integer", "5", "5" },
	{ "integer", "5.9", "5" },
	{ "integer", "'5'", "null" },
	{ "number", "2", "2.0" },
	{ "number", "2.5", "2.5" },
	{ "number", "'2'", "null" },
	{ "boolean", "true", "true" },
	{ "boolean", "'true'", "null" },
	{ "string", "'s'", "\"s\"" },
	{ "string", "5", "\"5\"" },
	{ "string", "2.5", "\"2.5\"" },
	{ "string", "1e21", "\"1e+21\"" },
	{ "string", "1000000.0", "\"1e+06\"" },
	{ "string", "123456.0", "\"123456\"" },
	{ "string", "0.0001", "\"0.0001\"" },
	{ "string", "0.00001", "\"1e-05\"" },
	{ "string", "false", "\"false\"" },
	{ "string", "{'b':1,'a':[2]}", "\"{\\\"a\\\":[2],\\\"b\\\":1}\"" },
	{ "string", "null", "\"<no value>\"" },
	{ "string", NULL, "null" },
	{ "date", "'2025-01-09T23:59:59Z'", "\"1s\"" },
	{ "date", "'2025-01-09T23:59:59.500000Z'", "\"0s\"" },
	{ "date", "'2025-01-10T00:00:10Z'", "\"<invalid>\"" },
	{ "date", "''", "\"<unknown>\"" },
	{ "date", "'0001-01-01T00:00:00Z'", "\"<unknown>\"" },
	{ "date", "'junk'", "\"<invalid>\"" },
	{ "date", "5", "null" },
	{ "date", NULL, "null" },
	{ "mystery", "5", "null" },
};

START_TEST(crd_cells)
{
	const struct cell_case *c = &cell_cases[_i];
	json_t *obj = json_pack("{s:{s:s}}", "metadata", "name", "n");
	json_t *cols = json_pack("[{s:s, s:s, s:s}]", "name", "C", "type", c->type,
				 "jsonPath", ".v");
	json_t *want = t_json(c->want), *row;

	if (c->value)
		json_object_set_new(obj, "v", t_jq(c->value));
	row = table_row(obj, cols, NULL, TABLE_OBJECT_NONE, now_ms());
	assert_json(c->type, json_array_get(json_object_get(row, "cells"), 1), want);
	json_decref(row);
	json_decref(want);
	json_decref(cols);
	json_decref(obj);
}
END_TEST

/* ---------------------------------------------------------------- */
/* The Table itself.                                                 */

START_TEST(table_shape)
{
	json_t *items = t_jq("[{'apiVersion':'kueue.x-k8s.io/v1beta1','kind':'Workload','metadata':{'name':'a','namespace':'ns','labels':{'l':'1'},'creationTimestamp':'2025-01-09T23:59:00Z','resourceVersion':'7'},'spec':{'queueName':'q'}},"
			     "{'apiVersion':'kueue.x-k8s.io/v1beta1','kind':'Workload','metadata':{'name':'b','namespace':'ns'}}]");
	json_t *meta = t_jq("{'resourceVersion':'110','continue':'c1','remainingItemCount':0}");
	json_t *t = table_build(items, NULL, NULL, TABLE_OBJECT_METADATA, true,
				meta, now_ms());
	json_t *rows = json_object_get(t, "rows");
	json_t *want_obj = t_jq("{'kind':'PartialObjectMetadata','apiVersion':'meta.k8s.io/v1','metadata':{'name':'a','namespace':'ns','labels':{'l':'1'},'creationTimestamp':'2025-01-09T23:59:00Z','resourceVersion':'7'}}");
	char *text = json_dumps(t, JSON_COMPACT);
	const char *prefix = "{\"kind\":\"Table\",\"apiVersion\":\"meta.k8s.io/v1\",\"metadata\":{\"resourceVersion\":\"110\",\"continue\":\"c1\",\"remainingItemCount\":0},\"columnDefinitions\":[{\"name\":\"Name\",\"type\":\"string\",\"format\":\"name\",\"description\":";

	ck_assert_msg(!strncmp(text, prefix, strlen(prefix)), "shape: %s", text);
	ck_assert_uint_eq(json_object_size(t), 5);
	ck_assert_uint_eq(json_array_size(json_object_get(t, "columnDefinitions")), 2);
	ck_assert_uint_eq(json_array_size(rows), 2);
	assert_cells("row a", json_array_get(rows, 0), 0, "['a','60s']");
	assert_cells("row b", json_array_get(rows, 1), 0, "['b',null]");
	assert_json("partial object", json_object_get(json_array_get(rows, 0), "object"), want_obj);
	ck_assert(!strncmp(strstr(text, "\"rows\":[{"), "\"rows\":[{\"cells\":[\"a\",\"60s\"],\"object\":{\"kind\":\"PartialObjectMetadata\"", 60));
	free(text);
	ck_assert_refcount(items, 1);
	ck_assert_refcount(meta, 1);
	json_decref(t);

	/* includeObject=Object: the whole object; watch events after the
	 * first: no column definitions */
	t = table_build(items, NULL, NULL, TABLE_OBJECT_FULL, false, NULL, now_ms());
	ck_assert(json_is_null(json_object_get(t, "columnDefinitions")));
	{
		json_t *empty = json_object();

		assert_json("empty list meta", json_object_get(t, "metadata"), empty);
		json_decref(empty);
	}
	assert_json("full object", json_object_get(json_array_get(json_object_get(t, "rows"), 1), "object"),
		    json_array_get(items, 1));
	json_decref(t);

	/* includeObject=None */
	t = table_build(items, NULL, "Pod", TABLE_OBJECT_NONE, true, NULL, now_ms());
	ck_assert(json_is_null(json_object_get(json_array_get(json_object_get(t, "rows"), 0), "object")));
	ck_assert_uint_eq(json_array_size(json_object_get(t, "columnDefinitions")), 9);
	json_decref(t);

	/* a single object is one row; no items is an empty row list */
	t = table_build(json_array_get(items, 0), NULL, NULL, TABLE_OBJECT_METADATA,
			true, NULL, now_ms());
	ck_assert_uint_eq(json_array_size(json_object_get(t, "rows")), 1);
	json_decref(t);
	t = table_build(NULL, NULL, NULL, TABLE_OBJECT_METADATA, true, NULL, now_ms());
	ck_assert(json_is_array(json_object_get(t, "rows")));
	ck_assert_uint_eq(json_array_size(json_object_get(t, "rows")), 0);
	json_decref(t);

	json_decref(want_obj);
	json_decref(meta);
	json_decref(items);
}
END_TEST

Suite *table_suite(void)
{
	Suite *s = suite_create("table");
	TCase *tc;

	tc = tcase_create("jsonpath");
	tcase_add_loop_test(tc, jsonpath, 0,
			    (int)(sizeof(path_cases) / sizeof(path_cases[0])));
	tcase_add_loop_test(tc, jsonpath_checks, 0,
			    (int)(sizeof(check_cases) / sizeof(check_cases[0])));
	suite_add_tcase(s, tc);

	tc = tcase_create("age");
	tcase_add_loop_test(tc, age, 0, (int)(sizeof(age_cases) / sizeof(age_cases[0])));
	tcase_add_test(tc, age_extremes);
	suite_add_tcase(s, tc);

	tc = tcase_create("job");
	tcase_add_loop_test(tc, job_status, 0,
			    (int)(sizeof(job_cases) / sizeof(job_cases[0])));
	tcase_add_test(tc, job_row);
	tcase_add_loop_test(tc, job_selector, 0,
			    (int)(sizeof(selector_cases) / sizeof(selector_cases[0])));
	suite_add_tcase(s, tc);

	tc = tcase_create("builtin-printers");
	tcase_add_loop_test(tc, pod_cells, 0,
			    (int)(sizeof(pod_cases) / sizeof(pod_cases[0])));
	tcase_add_loop_test(tc, builtin_cells, 0,
			    (int)(sizeof(builtin_cases) / sizeof(builtin_cases[0])));
	tcase_add_loop_test(tc, builtin_columns, 0,
			    (int)(sizeof(columns_cases) / sizeof(columns_cases[0])));
	suite_add_tcase(s, tc);

	tc = tcase_create("custom-resources");
	tcase_add_test(tc, kueue_columns);
	tcase_add_test(tc, crd_default_columns);
	tcase_add_loop_test(tc, crd_cells, 0,
			    (int)(sizeof(cell_cases) / sizeof(cell_cases[0])));
	suite_add_tcase(s, tc);

	tc = tcase_create("table-json");
	tcase_add_test(tc, table_shape);
	suite_add_tcase(s, tc);
	return s;
}
