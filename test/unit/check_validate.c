/*
 * Suite "validate": Kueue's admission rules (model/validate*.c), driven
 * through the codec as the webhook and the devserver drive them: each case
 * is an object (and, for updates, the old object) as inline JSON, decoded,
 * validated, and checked for the expected error texts and for the total
 * number of errors, so every problem is reported at once and nothing
 * else. Inline JSON is written with ' for " to stay readable.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/codec.h"
#include "model/validate.h"
#include "suites.h"
#include "test/support/support.h"

/* ------------------------------------------------------------------ */
/* Objects */

#define V1 "'apiVersion':'kueue.x-k8s.io/v1beta1'"
#define V2 "'apiVersion':'kueue.x-k8s.io/v1beta2'"

#define RF(spec) \
	"{" V1 ",'kind':'ResourceFlavor','metadata':{'name':'rf'},'spec':" spec "}"
#define RF_TOPO(labels) \
	RF("{'nodeLabels':" labels ",'topologyName':'topo'}")

#define CQ_AT(ver, spec) \
	"{" ver ",'kind':'ClusterQueue','metadata':{'name':'cq'},'spec':" spec "}"
#define CQ(spec) CQ_AT(V1, spec)
#define CQ2(spec) CQ_AT(V2, spec)

/* One group covering cpu, flavor "default" with the given quota fields. */
#define GROUP(quota) \
	"{'coveredResources':['cpu'],'flavors':[{'name':'default'," \
	"'resources':[{'name':'cpu'," quota "}]}]}"
#define GROUP_RF(res, flavor) \
	"{'coveredResources':['" res "'],'flavors':[{'name':'" flavor "'," \
	"'resources':[{'name':'" res "','nominalQuota':'1'}]}]}"
#define GROUPS(g) "'resourceGroups':[" g "]"
#define NS_ALL "'namespaceSelector':{}"

#define COHORT_AT(ver, name, spec) \
	"{" ver ",'kind':'Cohort','metadata':{'name':'" name "'},'spec':" spec "}"
#define COHORT(spec) COHORT_AT(V1, "co", spec)

#define LQ(spec) \
	"{" V1 ",'kind':'LocalQueue','metadata':{'name':'lq','namespace':'ns'}," \
	"'spec':" spec "}"

#define WPC(body) \
	"{" V1 ",'kind':'WorkloadPriorityClass','metadata':{'name':'high'}" body "}"

#define TMPL \
	"'template':{'spec':{'containers':[{'name':'c','resources':" \
	"{'requests':{'cpu':'1'}}}]}}"
#define TMPL_REQ(where, req) \
	"'template':{'spec':{'containers':[{'name':'c'}]," \
	"'" where "':[{'name':'x','resources':" req "}]}}"
#define PS(name, count) "{'name':'" name "','count':" #count "," TMPL "}"
#define PS_MIN(name, count, min) \
	"{'name':'" name "','count':" #count ",'minCount':" #min "," TMPL "}"
#define PODSETS(ps) "'podSets':[" ps "]"

#define WL_AT(ver, spec, status) \
	"{" ver ",'kind':'Workload','metadata':{'name':'wl','namespace':'ns'}," \
	"'spec':{" spec "},'status':{" status "}}"
#define WL(spec) WL_AT(V1, spec, "")
#define WLS(spec, status) WL_AT(V1, spec, status)
#define WL2S(spec, status) WL_AT(V2, spec, status)

#define COND(type) \
	"{'type':'" type "','status':'True','reason':'R','message':'m'," \
	"'lastTransitionTime':'2026-01-01T00:00:00Z'}"
#define RESERVED "'conditions':[" COND("QuotaReserved") "]"
#define ADMITTED \
	"'conditions':[" COND("QuotaReserved") "," COND("Admitted") "]"
#define PSA(name, count, usage) \
	"{'name':'" name "','flavors':{'cpu':'default'}," \
	"'resourceUsage':" usage ",'count':" #count "}"
#define ADM(cq, psas) \
	"'admission':{'clusterQueue':'" cq "','podSetAssignments':[" psas "]}"
#define ADM_MAIN ADM("cq", PSA("main", 3, "{'cpu':'3'}"))

#define JOB(labels, annots, spec) \
	"{'apiVersion':'batch/v1','kind':'Job','metadata':{'name':'j'," \
	"'namespace':'ns','labels':" labels ",'annotations':" annots "}," \
	"'spec':" spec "}"
#define JSPEC(suspend, par, extra) \
	"{'suspend':" #suspend ",'parallelism':" #par extra "," TMPL "}"
#define QLABEL(q) "{'kueue.x-k8s.io/queue-name':'" q "'}"
#define NOLABELS "{}"

/* ------------------------------------------------------------------ */
/* The table */

struct vcase {
	const char *name;
	enum kind kind;
	const char *obj;    /* the object, ' for " */
	const char *old;    /* the old object of an update, or NULL */
	bool default_lq;    /* Jobs: namespace has LocalQueue "default" */
	int nerr;           /* every error, decode + validate; -1: unchecked */
	const char *want[5]; /* substrings, each in some error; NULL ends */
};

#define C(name, kind, obj, old, n, ...) \
	{ name, kind, obj, old, false, n, { __VA_ARGS__ } }
#define CJ(name, obj, old, dlq, n, ...) \
	{ name, KIND_JOB, obj, old, dlq, n, { __VA_ARGS__ } }

#define K_RF KIND_RESOURCE_FLAVOR
#define K_CQ KIND_CLUSTER_QUEUE
#define K_CO KIND_COHORT
#define K_LQ KIND_LOCAL_QUEUE
#define K_WPC KIND_WORKLOAD_PRIORITY_CLASS
#define K_WL KIND_WORKLOAD

static const struct vcase cases[] = {
	/* ---- ResourceFlavor ---- */
	C("rf valid", K_RF,
	  RF("{'nodeLabels':{'cloud.com/spot':'true'},"
	     "'nodeTaints':[{'key':'spot','value':'true','effect':'NoSchedule'},"
	     "{'key':'spot','value':'true','effect':'NoExecute'}],"
	     "'tolerations':[{'key':'spot','operator':'Exists','effect':'NoSchedule'},"
	     "{'operator':'Exists'},"
	     "{'key':'a','value':'b','effect':'NoExecute','tolerationSeconds':30}]}"),
	  NULL, 0, NULL),
	C("rf bad name", K_RF,
	  "{" V1 ",'kind':'ResourceFlavor','metadata':{'name':'Spot_1'}}",
	  NULL, 1, "metadata.name: Invalid value: \"Spot_1\": a lowercase RFC 1123 subdomain"),
	C("rf no name", K_RF,
	  "{" V1 ",'kind':'ResourceFlavor','metadata':{}}", NULL, 1,
	  "metadata.name: Required value: name or generateName is required"),
	/* generateName errors show the prefix as written (they showed the
	 * masked text), a trailing dash is masked as Kubernetes does (two
	 * bytes become "a"), an empty one counts as absent, and a set name is
	 * checked too. */
	C("rf bad generateName shown as written", K_RF,
	  "{" V1 ",'kind':'ResourceFlavor','metadata':{'generateName':'Bad-'}}",
	  NULL, 1, "metadata.generateName: Invalid value: \"Bad-\": a lowercase"),
	C("rf generateName masks two bytes", K_RF,
	  "{" V1 ",'kind':'ResourceFlavor','metadata':{'generateName':'ab_-'}}",
	  NULL, 0, NULL),
	C("rf empty generateName is absent", K_RF,
	  "{" V1 ",'kind':'ResourceFlavor','metadata':{'generateName':''}}", NULL, 1,
	  "metadata.name: Required value: name or generateName is required"),
	C("rf empty name", K_RF,
	  "{" V1 ",'kind':'ResourceFlavor','metadata':{'name':''}}", NULL, 1,
	  "metadata.name: Required value: name or generateName is required"),
	C("rf name and bad generateName", K_RF,
	  "{" V1 ",'kind':'ResourceFlavor','metadata':{'name':'ok','generateName':'Xy-'}}",
	  NULL, 1, "metadata.generateName: Invalid value: \"Xy-\""),
	C("rf too many node labels", K_RF,
	  RF("{'nodeLabels':{'a':'1','b':'1','c':'1','d':'1','e':'1','f':'1',"
	     "'g':'1','h':'1','i':'1'}}"),
	  NULL, 1, "spec.nodeLabels: Too many: 9: must have at most 8 items"),
	C("rf bad node label key and value", K_RF,
	  RF("{'nodeLabels':{'bad key':'ok','good':'-bad'}}"), NULL, 2,
	  "spec.nodeLabels: Invalid value: \"bad key\": name part must consist of",
	  "spec.nodeLabels: Invalid value: \"-bad\": a valid label must be"),
	C("rf duplicate taint", K_RF,
	  RF("{'nodeTaints':[{'key':'k','value':'a','effect':'NoSchedule'},"
	     "{'key':'k','value':'b','effect':'NoSchedule'}]}"),
	  NULL, 1,
	  "spec.nodeTaints[1]: Duplicate value: v1.Taint{Key:\"k\", Value:\"b\", "
	  "Effect:\"NoSchedule\", TimeAdded:(*v1.Time)(nil)}: "
	  "taints must be unique by key and effect pair"),
	C("rf same taint key, other effect", K_RF,
	  RF("{'nodeTaints':[{'key':'k','effect':'NoSchedule'},"
	     "{'key':'k','effect':'PreferNoSchedule'}]}"),
	  NULL, 0, NULL),
	C("rf bad taint key and value", K_RF,
	  RF("{'nodeTaints':[{'key':'bad key','value':'-v','effect':'NoSchedule'}]}"),
	  NULL, 2, "spec.nodeTaints[0].key: Invalid value: \"bad key\"",
	  "spec.nodeTaints[0].value: Invalid value: \"-v\""),
	C("rf too many taints", K_RF,
	  RF("{'nodeTaints':[{'key':'a','effect':'NoSchedule'},{'key':'b','effect':'NoSchedule'},"
	     "{'key':'c','effect':'NoSchedule'},{'key':'d','effect':'NoSchedule'},"
	     "{'key':'e','effect':'NoSchedule'},{'key':'f','effect':'NoSchedule'},"
	     "{'key':'g','effect':'NoSchedule'},{'key':'h','effect':'NoSchedule'},"
	     "{'key':'i','effect':'NoSchedule'}]}"),
	  NULL, 1, "spec.nodeTaints: Too many: 9: must have at most 8 items"),
	C("rf taint without effect (codec)", K_RF,
	  RF("{'nodeTaints':[{'key':'k'}]}"), NULL, 1,
	  "spec.nodeTaints[0].effect: Required value"),
	C("rf toleration empty key needs Exists", K_RF,
	  RF("{'tolerations':[{'value':'v','effect':'NoSchedule'}]}"), NULL, 1,
	  "spec.tolerations: Invalid value: \"array\": operator must be Exists "
	  "when 'key' is empty, which means 'match all values and all keys'"),
	C("rf tolerationSeconds needs NoExecute", K_RF,
	  RF("{'tolerations':[{'key':'k','operator':'Exists','effect':'NoSchedule',"
	     "'tolerationSeconds':5}]}"),
	  NULL, 1,
	  "spec.tolerations: Invalid value: \"array\": effect must be 'NoExecute' "
	  "when 'tolerationSeconds' is set"),
	C("rf Exists with value", K_RF,
	  RF("{'tolerations':[{'key':'k','operator':'Exists','value':'v'}]}"),
	  NULL, 1,
	  "spec.tolerations: Invalid value: \"array\": a value must be empty when "
	  "'operator' is 'Exists'"),
	C("rf one CEL rule fails once for the list", K_RF,
	  RF("{'tolerations':[{'key':'k','operator':'Exists','value':'v'},"
	     "{'key':'l','operator':'Exists','value':'w'}]}"),
	  NULL, 1, "a value must be empty when 'operator' is 'Exists'"),
	C("rf bad toleration key", K_RF,
	  RF("{'tolerations':[{'key':'a/b/c','operator':'Exists'}]}"), NULL, 1,
	  "spec.tolerations[0].key: Invalid value: \"a/b/c\""),
	C("rf toleration bad operator (codec)", K_RF,
	  RF("{'tolerations':[{'key':'k','operator':'Gt'}]}"), NULL, -1,
	  "spec.tolerations[0].operator: Unsupported value: \"Gt\""),
	C("rf too many tolerations", K_RF,
	  RF("{'tolerations':[{'key':'a','operator':'Exists'},{'key':'b','operator':'Exists'},"
	     "{'key':'c','operator':'Exists'},{'key':'d','operator':'Exists'},"
	     "{'key':'e','operator':'Exists'},{'key':'f','operator':'Exists'},"
	     "{'key':'g','operator':'Exists'},{'key':'h','operator':'Exists'},"
	     "{'key':'i','operator':'Exists'}]}"),
	  NULL, 1, "spec.tolerations: Too many: 9: must have at most 8 items"),
	C("rf topology needs a node label", K_RF, RF_TOPO("{}"), NULL, 1,
	  "spec: Invalid value: \"object\": at least one nodeLabel is required "
	  "when topology is set"),
	C("rf bad topology name", K_RF,
	  RF("{'nodeLabels':{'a':'b'},'topologyName':'Topo'}"), NULL, 1,
	  "spec.topologyName: Invalid value: \"Topo\": spec.topologyName in body "
	  "should match '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$'"),
	C("rf spec frozen by topology", K_RF, RF_TOPO("{'a':'c'}"),
	  RF_TOPO("{'a':'b'}"), 1,
	  "spec: Invalid value: \"object\": resourceFlavorSpec are immutable when "
	  "topologyName is set"),
	C("rf topology removed", K_RF, RF("{'nodeLabels':{'a':'b'}}"),
	  RF_TOPO("{'a':'b'}"), 1, "resourceFlavorSpec are immutable"),
	C("rf topology unchanged", K_RF, RF_TOPO("{'a':'b'}"),
	  RF_TOPO("{'a':'b'}"), 0, NULL),
	C("rf free update without topology", K_RF, RF("{'nodeLabels':{'x':'y'}}"),
	  RF("{'nodeLabels':{'a':'b'}}"), 0, NULL),
	C("rf four problems at once", K_RF,
	  "{" V1 ",'kind':'ResourceFlavor','metadata':{'name':'BAD'},'spec':{"
	  "'nodeLabels':{'bad key':'v'},"
	  "'nodeTaints':[{'key':'k','effect':'NoSchedule'},{'key':'k','effect':'NoSchedule'}],"
	  "'tolerations':[{'effect':'NoSchedule'}]}}",
	  NULL, 4, "metadata.name", "spec.nodeLabels", "spec.nodeTaints[1]",
	  "spec.tolerations: Invalid value: \"array\""),

	/* ---- ClusterQueue v1beta1 ---- */
	C("cq valid", K_CQ,
	  CQ("{'cohort':'team',"
	     GROUPS(GROUP("'nominalQuota':'10','borrowingLimit':'5','lendingLimit':'4'") ","
		    "{'coveredResources':['memory','nvidia.com/gpu'],'flavors':[{'name':'gpu',"
		    "'resources':[{'name':'memory','nominalQuota':'1Gi'},"
		    "{'name':'nvidia.com/gpu','nominalQuota':8}]}]}") ","
	     NS_ALL ",'preemption':{'reclaimWithinCohort':'Any',"
	     "'borrowWithinCohort':{'policy':'LowerPriority'}},"
	     "'flavorFungibility':{'whenCanBorrow':'Borrow','whenCanPreempt':'Preempt'},"
	     "'admissionChecks':['prov'],'fairSharing':{'weight':'2'}}"),
	  NULL, 0, NULL),
	C("cq fungibility enum (codec)", K_CQ,
	  CQ("{'flavorFungibility':{'whenCanPreempt':'Borrow'}}"), NULL, 1,
	  "spec.flavorFungibility.whenCanPreempt: Unsupported value: \"Borrow\": "
	  "supported values: \"MayStopSearch\", \"TryNextFlavor\", \"Preempt\""),
	C("cq v1beta1 takes MayStopSearch and preference (Kueue's HEAD v1beta1)", K_CQ,
	  CQ("{'flavorFungibility':{'whenCanBorrow':'MayStopSearch','whenCanPreempt':'MayStopSearch'}}"),
	  NULL, 0, NULL),
	C("cq v1beta1 preference needs TryNextFlavor", K_CQ,
	  CQ("{'flavorFungibility':{'whenCanBorrow':'Borrow','preference':'BorrowingOverPreemption'}}"),
	  NULL, 1,
	  "spec.flavorFungibility: Invalid value: \"object\": preference can only be "
	  "set when both whenCanBorrow and whenCanPreempt are TryNextFlavor"),
	C("cq borrowingLimit without cohort", K_CQ,
	  CQ("{" GROUPS(GROUP("'nominalQuota':'10','borrowingLimit':'5'")) "}"),
	  NULL, 1,
	  "spec: Invalid value: \"object\": borrowingLimit must be nil when cohort is empty"),
	C("cq lendingLimit without cohort", K_CQ,
	  CQ("{" GROUPS(GROUP("'nominalQuota':'10','lendingLimit':'1'")) "}"),
	  NULL, 1,
	  "spec.resourceGroups[0].flavors[0].resources[0].lendingLimit: Invalid value: "
	  "\"1\": must be nil when cohort is empty"),
	C("cq empty cohort meets the webhook", K_CQ,
	  CQ("{'cohort':''," GROUPS(GROUP("'nominalQuota':'10','borrowingLimit':'5'")) "}"),
	  NULL, 2,
	  "spec.resourceGroups[0].flavors[0].resources[0].borrowingLimit: Invalid value: "
	  "\"5\": must be nil when cohort is empty",
	  "spec.cohort: Invalid value: \"\": spec.cohort in body should match"),
	C("cq lendingLimit above nominal", K_CQ,
	  CQ("{'cohort':'c'," GROUPS(GROUP("'nominalQuota':'2','lendingLimit':'3'")) "}"),
	  NULL, 1,
	  "spec.resourceGroups[0].flavors[0].resources[0].lendingLimit: Invalid value: "
	  "\"3\": must be less than or equal to the nominalQuota"),
	C("cq negative nominal", K_CQ,
	  CQ("{" GROUPS(GROUP("'nominalQuota':'-1'")) "}"), NULL, 1,
	  "spec.resourceGroups[0].flavors[0].resources[0].nominalQuota: Invalid value: "
	  "\"-1\": must be greater than or equal to 0"),
	C("cq negative memory nominal keeps its unit", K_CQ,
	  CQ("{" GROUPS("{'coveredResources':['memory'],'flavors':[{'name':'f',"
			"'resources':[{'name':'memory','nominalQuota':'-1Gi'}]}]}") "}"),
	  NULL, 1, "nominalQuota: Invalid value: \"-1Gi\": must be greater than or equal to 0"),
	C("cq negative limits with cohort", K_CQ,
	  CQ("{'cohort':'c'," GROUPS(GROUP("'nominalQuota':'1','borrowingLimit':'-1',"
					   "'lendingLimit':'-500m'")) "}"),
	  NULL, 2,
	  "borrowingLimit: Invalid value: \"-1\": must be greater than or equal to 0",
	  "lendingLimit: Invalid value: \"-500m\": must be greater than or equal to 0"),
	C("cq resource name must match covered", K_CQ,
	  CQ("{" GROUPS("{'coveredResources':['cpu'],'flavors':[{'name':'f',"
			"'resources':[{'name':'memory','nominalQuota':'1'}]}]}") "}"),
	  NULL, 1,
	  "spec.resourceGroups[0].flavors[0].resources[0].name: Invalid value: "
	  "\"memory\": must match the name in coveredResources"),
	C("cq resource count must match covered", K_CQ,
	  CQ("{" GROUPS("{'coveredResources':['cpu','memory'],'flavors':[{'name':'f',"
			"'resources':[{'name':'cpu','nominalQuota':'1'}]}]}") "}"),
	  NULL, 1,
	  "spec.resourceGroups[0]: Invalid value: \"object\": flavors must have the "
	  "same number of resources as the coveredResources"),
	C("cq empty coveredResources", K_CQ,
	  CQ("{" GROUPS("{'coveredResources':[],'flavors':[{'name':'f',"
			"'resources':[{'name':'cpu','nominalQuota':'1'}]}]}") "}"),
	  NULL, -1, "spec.resourceGroups[0].coveredResources: "),
	C("cq group without flavors", K_CQ,
	  CQ("{" GROUPS("{'coveredResources':['cpu']}") "}"), NULL, 1,
	  "spec.resourceGroups[0].flavors: Required value"),
	C("cq flavor without resources", K_CQ,
	  CQ("{" GROUPS("{'coveredResources':['cpu'],'flavors':[{'name':'f'}]}") "}"),
	  NULL, 2, "spec.resourceGroups[0].flavors[0].resources: Required value",
	  "flavors must have the same number of resources"),
	C("cq bad covered resource name", K_CQ,
	  CQ("{" GROUPS("{'coveredResources':['bad name'],'flavors':[{'name':'f',"
			"'resources':[{'name':'bad name','nominalQuota':'1'}]}]}") "}"),
	  NULL, 1,
	  "spec.resourceGroups[0].coveredResources[0]: Invalid value: \"bad name\""),
	C("cq resource in two groups", K_CQ,
	  CQ("{" GROUPS(GROUP_RF("cpu", "a") "," GROUP_RF("cpu", "b")) "}"), NULL, 1,
	  "spec.resourceGroups[1].coveredResources[0]: Duplicate value: \"cpu\""),
	C("cq flavor in two groups", K_CQ,
	  CQ("{" GROUPS(GROUP_RF("cpu", "a") "," GROUP_RF("memory", "a")) "}"), NULL, 1,
	  "spec.resourceGroups[1].flavors[0].name: Duplicate value: \"a\""),
	C("cq flavor twice in a group", K_CQ,
	  CQ("{" GROUPS("{'coveredResources':['cpu'],'flavors':["
			"{'name':'a','resources':[{'name':'cpu','nominalQuota':'1'}]},"
			"{'name':'a','resources':[{'name':'cpu','nominalQuota':'2'}]}]}") "}"),
	  NULL, 1,
	  "spec.resourceGroups[0].flavors[1]: Duplicate value: "
	  "map[string]interface {}{\"name\":\"a\"}"),
	C("cq resource twice in a flavor", K_CQ,
	  CQ("{" GROUPS("{'coveredResources':['cpu','memory'],'flavors':[{'name':'a',"
			"'resources':[{'name':'cpu','nominalQuota':'1'},"
			"{'name':'cpu','nominalQuota':'1'}]}]}") "}"),
	  NULL, 2,
	  "spec.resourceGroups[0].flavors[0].resources[1]: Duplicate value: "
	  "map[string]interface {}{\"name\":\"cpu\"}",
	  "resources[1].name: Invalid value: \"cpu\": must match the name in coveredResources"),
	C("cq bad flavor name", K_CQ,
	  CQ("{" GROUPS(GROUP_RF("cpu", "Default")) "}"), NULL, 1,
	  "spec.resourceGroups[0].flavors[0].name: Invalid value: \"Default\": "
	  "spec.resourceGroups[0].flavors[0].name in body should match"),
	C("cq bad cohort", K_CQ, CQ("{'cohort':'Team A'}"), NULL, 1,
	  "spec.cohort: Invalid value: \"Team A\": spec.cohort in body should match"),
	C("cq bad namespaceSelector", K_CQ,
	  CQ("{'namespaceSelector':{'matchExpressions':[{'key':'team','operator':'In'}]}}"),
	  NULL, 1, "spec.namespaceSelector.matchExpressions[0].values: Required value"),
	C("cq admissionChecks and strategy", K_CQ,
	  CQ("{'admissionChecks':['a'],'admissionChecksStrategy':{'admissionChecks':"
	     "[{'name':'b'}]}}"),
	  NULL, 1,
	  "spec: Invalid value: v1beta1.ClusterQueueSpec{...}: Either AdmissionChecks "
	  "or AdmissionCheckStrategy can be set, but not both"),
	C("cq borrowWithinCohort needs reclaim", K_CQ,
	  CQ("{'preemption':{'reclaimWithinCohort':'Never','borrowWithinCohort':"
	     "{'policy':'LowerPriority'}}}"),
	  NULL, 1,
	  "spec.preemption: Invalid value: \"object\": reclaimWithinCohort=Never and "
	  "borrowWithinCohort.Policy!=Never"),
	C("cq borrowWithinCohort with reclaim", K_CQ,
	  CQ("{'preemption':{'reclaimWithinCohort':'LowerPriority','borrowWithinCohort':"
	     "{'policy':'LowerPriority','maxPriorityThreshold':10}}}"),
	  NULL, 0, NULL),
	C("cq negative fair sharing weight", K_CQ,
	  CQ("{'fairSharing':{'weight':'-1'}}"), NULL, 1,
	  "spec.fairSharing: Invalid value: \"-1\": must be greater than or equal to 0"),
	C("cq four problems at once", K_CQ,
	  CQ("{'cohort':'Bad'," GROUPS(GROUP("'nominalQuota':'-1','lendingLimit':'5'")) ","
	     "'fairSharing':{'weight':'-2'}}"),
	  NULL, 4, "spec.cohort", "nominalQuota: Invalid value: \"-1\"",
	  "lendingLimit: Invalid value: \"5\": must be less than or equal to the nominalQuota",
	  "spec.fairSharing"),

	/* ---- ClusterQueue v1beta2 ---- */
	C("cq2 valid", K_CQ,
	  CQ2("{'cohortName':'team'," GROUPS(GROUP("'nominalQuota':'4','borrowingLimit':'1'")) ","
	      "'flavorFungibility':{'whenCanBorrow':'TryNextFlavor','whenCanPreempt':'TryNextFlavor',"
	      "'preference':'PreemptionOverBorrowing'},"
	      "'admissionChecksStrategy':{'admissionChecks':[{'name':'p','onFlavors':['default']}]}}"),
	  NULL, 0, NULL),
	C("cq2 path is cohortName", K_CQ, CQ2("{'cohortName':'Bad'}"), NULL, 1,
	  "spec.cohortName: Invalid value: \"Bad\": spec.cohortName in body should match"),
	C("cq2 borrowingLimit without cohortName", K_CQ,
	  CQ2("{" GROUPS(GROUP("'nominalQuota':'4','borrowingLimit':'1'")) "}"), NULL, 1,
	  "spec: Invalid value: \"object\": borrowingLimit must be nil when cohort is empty"),
	C("cq2 v1beta1 name cohort is not read", K_CQ,
	  CQ2("{'cohort':'Bad'}"), NULL, 0, NULL),
	C("cq2 preference needs TryNextFlavor", K_CQ,
	  CQ2("{'flavorFungibility':{'preference':'BorrowingOverPreemption'}}"), NULL, 1,
	  "spec.flavorFungibility: Invalid value: \"object\": preference can only be "
	  "set when both whenCanBorrow and whenCanPreempt are TryNextFlavor"),
	C("cq2 fungibility enum (codec)", K_CQ,
	  CQ2("{'flavorFungibility':{'whenCanBorrow':'Borrow'}}"), NULL, 1,
	  "spec.flavorFungibility.whenCanBorrow: Unsupported value: \"Borrow\": "
	  "supported values: \"MayStopSearch\", \"TryNextFlavor\""),
	C("cq2 onFlavors are not checked (v0.14, Kueue's own example)", K_CQ,
	  CQ2("{" NS_ALL ",'admissionChecksStrategy':{'admissionChecks':"
	      "[{'name':'p','onFlavors':['default-flavor']},{'name':'q'}]}}"),
	  NULL, 0, NULL),
	C("cq2 onFlavors must be flavor names", K_CQ,
	  CQ2("{'admissionChecksStrategy':{'admissionChecks':"
	      "[{'name':'p','onFlavors':['Bad']}]}}"),
	  NULL, 1,
	  "spec.admissionChecksStrategy.admissionChecks[0].onFlavors[0]: Invalid "
	  "value: \"Bad\": spec.admissionChecksStrategy.admissionChecks[0]."
	  "onFlavors[0] in body should match"),
	C("cq2 concurrentAdmissionPolicy is immutable", K_CQ,
	  CQ2("{'concurrentAdmissionPolicy':{'migration':{'mode':'RetainFirstAdmission'}}}"),
	  CQ2("{'concurrentAdmissionPolicy':{'migration':{'mode':'TryPreferredFlavors'}}}"),
	  1, "spec.concurrentAdmissionPolicy: Invalid value: "
	     "v1beta2.ConcurrentAdmissionPolicy{...}: field is immutable"),

	/* ---- Cohort ---- */
	C("cohort valid", K_CO,
	  COHORT("{'parentName':'root'," GROUPS(GROUP("'nominalQuota':'1',"
		 "'borrowingLimit':'2','lendingLimit':'5'")) ",'fairSharing':{'weight':'1'}}"),
	  NULL, 0, NULL),
	C("cohort borrowingLimit without parent", K_CO,
	  COHORT("{" GROUPS(GROUP("'nominalQuota':'1','borrowingLimit':'2'")) "}"),
	  NULL, 1,
	  "spec.resourceGroups[0].flavors[0].resources[0].borrowingLimit: Invalid value: "
	  "\"2\": must be nil when parent is empty"),
	C("cohort lendingLimit without parent", K_CO,
	  COHORT("{" GROUPS(GROUP("'nominalQuota':'1','lendingLimit':'1'")) "}"),
	  NULL, 1, "lendingLimit: Invalid value: \"1\": must be nil when parent is empty"),
	C("cohort naming itself is accepted as in Kueue", K_CO,
	  COHORT("{'parentName':'co'}"), NULL, 0, NULL),
	C("cohort bad parentName", K_CO, COHORT("{'parentName':'Root'}"), NULL, 1,
	  "spec.parentName: Invalid value: \"Root\": spec.parentName in body should match"),
	C("cohort negative weight and nominal", K_CO,
	  COHORT("{'fairSharing':{'weight':'-1'}," GROUPS(GROUP("'nominalQuota':'-3'")) "}"),
	  NULL, 2, "spec.fairSharing: Invalid value: \"-1\"",
	  "nominalQuota: Invalid value: \"-3\""),
	C("cohort v1beta2 same paths", K_CO,
	  COHORT_AT(V2, "co2", "{" GROUPS(GROUP("'nominalQuota':'1','borrowingLimit':'1'")) "}"),
	  NULL, 1, "borrowingLimit: Invalid value: \"1\": must be nil when parent is empty"),

	/* ---- LocalQueue ---- */
	C("lq valid", K_LQ, LQ("{'clusterQueue':'cq'}"), NULL, 0, NULL),
	C("lq without clusterQueue is accepted as in Kueue", K_LQ, LQ("{}"),
	  NULL, 0, NULL),
	C("lq bad clusterQueue", K_LQ, LQ("{'clusterQueue':'CQ'}"), NULL, 1,
	  "spec.clusterQueue: Invalid value: \"CQ\": spec.clusterQueue in body should match"),
	C("lq clusterQueue is immutable", K_LQ, LQ("{'clusterQueue':'b'}"),
	  LQ("{'clusterQueue':'a'}"), 1,
	  "spec.clusterQueue: Invalid value: \"string\": field is immutable"),
	C("lq other fields may change", K_LQ, LQ("{'clusterQueue':'a','stopPolicy':'Hold'}"),
	  LQ("{'clusterQueue':'a'}"), 0, NULL),
	C("lq bad name", K_LQ,
	  "{" V1 ",'kind':'LocalQueue','metadata':{'name':'LQ','namespace':'ns'},"
	  "'spec':{'clusterQueue':'cq'}}",
	  NULL, 1, "metadata.name: Invalid value: \"LQ\""),

	/* ---- WorkloadPriorityClass ---- */
	C("wpc valid", K_WPC, WPC(",'value':1000,'description':'high'"), NULL, 0, NULL),
	C("wpc value required", K_WPC, WPC(""), NULL, 1, "value: Required value"),

	/* ---- Workload v1beta1: spec ---- */
	C("wl valid", K_WL,
	  WL(PODSETS(PS("main", 3) "," PS_MIN("workers", 4, 2)) ",'queueName':'user-q',"
	     "'priorityClassName':'high','priority':100,'priorityClassSource':"
	     "'kueue.x-k8s.io/workloadpriorityclass','maximumExecutionTimeSeconds':60"),
	  NULL, 0, NULL),
	C("wl podSets required", K_WL, WL("'queueName':'q'"), NULL, 1,
	  "spec.podSets: Required value"),
	C("wl duplicate pod set names", K_WL, WL(PODSETS(PS("main", 1) "," PS("main", 2))),
	  NULL, 1,
	  "spec.podSets[1]: Duplicate value: map[string]interface {}{\"name\":\"main\"}"),
	C("wl default pod set name counts as main", K_WL,
	  WL(PODSETS("{'count':1," TMPL "}," PS("main", 2))), NULL, 1,
	  "spec.podSets[1]: Duplicate value"),
	C("wl bad pod set name", K_WL, WL(PODSETS(PS("Main.x", 1))), NULL, 1,
	  "spec.podSets[0].name: Invalid value: \"Main.x\": spec.podSets[0].name in body "
	  "should match '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$'"),
	C("wl negative count", K_WL, WL(PODSETS(PS("main", -1))), NULL, 1,
	  "spec.podSets[0].count: Invalid value: -1: spec.podSets[0].count in body "
	  "should be greater than or equal to 0"),
	C("wl minCount zero", K_WL, WL(PODSETS(PS_MIN("main", 3, 0))), NULL, 1,
	  "spec.podSets[0].minCount: Invalid value: 0: spec.podSets[0].minCount in "
	  "body should be greater than or equal to 1"),
	C("wl minCount above count", K_WL, WL(PODSETS(PS_MIN("main", 3, 4))), NULL, 1,
	  "spec.podSets[0]: Invalid value: \"object\": minCount should be positive "
	  "and less or equal to count"),
	C("wl two pod sets with minCount", K_WL,
	  WL(PODSETS(PS_MIN("a", 3, 1) "," PS_MIN("b", 3, 2))), NULL, 1,
	  "spec.podSets: Invalid value: 2: at most one podSet can use minCount"),
	C("wl pods requested by a container", K_WL,
	  WL(PODSETS("{'name':'main','count':1,'template':{'spec':{'containers':"
		     "[{'name':'c','resources':{'requests':{'pods':'1','cpu':'1'}}}]}}}")),
	  NULL, 1,
	  "spec.podSets[0].template.spec.containers[0].resources.requests[pods]: "
	  "Invalid value: \"pods\": the key is reserved for internal kueue use"),
	C("wl pods requested by an init container", K_WL,
	  WL(PODSETS("{'name':'main','count':1," TMPL_REQ("initContainers",
		     "{'requests':{'pods':'1'}}") "}")),
	  NULL, 1, "spec.podSets[0].template.spec.initContainers[0].resources.requests[pods]"),
	C("wl pods as a limit is fine in v0.14", K_WL,
	  WL(PODSETS("{'name':'main','count':1," TMPL_REQ("initContainers",
		     "{'limits':{'pods':'1'}}") "}")),
	  NULL, 0, NULL),
	C("wl priorityClassName needs priority", K_WL,
	  WL(PODSETS(PS("main", 1)) ",'priorityClassName':'high'"), NULL, 1,
	  "spec: Invalid value: \"object\": priority should not be nil when "
	  "priorityClassName is set"),
	C("wl2 priorityClassRef needs priority", K_WL,
	  WL2S(PODSETS(PS("main", 1)) ",'priorityClassRef':{'group':'kueue.x-k8s.io',"
	       "'kind':'WorkloadPriorityClass','name':'high'}", ""),
	  NULL, 1, "priority should not be nil when priorityClassRef is set"),
	C("wl2 bad priorityClassRef name", K_WL,
	  WL2S(PODSETS(PS("main", 1)) ",'priority':1,'priorityClassRef':{'group':"
	       "'scheduling.k8s.io','kind':'PriorityClass','name':'High'}", ""),
	  NULL, 1, "spec.priorityClassRef.name: Invalid value: \"High\": "
		   "spec.priorityClassRef.name in body should match"),
	C("wl bad queueName", K_WL, WL(PODSETS(PS("main", 1)) ",'queueName':'Q'"), NULL, 1,
	  "spec.queueName: Invalid value: \"Q\": spec.queueName in body should match"),
	C("wl maximumExecutionTimeSeconds below 1", K_WL,
	  WL(PODSETS(PS("main", 1)) ",'maximumExecutionTimeSeconds':0"), NULL, 1,
	  "spec.maximumExecutionTimeSeconds: Invalid value: 0: "
	  "spec.maximumExecutionTimeSeconds in body should be greater than or equal to 1"),
	C("wl too many pod sets", K_WL,
	  WL(PODSETS(PS("a", 1) "," PS("b", 1) "," PS("c", 1) "," PS("d", 1) ","
		     PS("e", 1) "," PS("f", 1) "," PS("g", 1) "," PS("h", 1) ","
		     PS("i", 1))),
	  NULL, 1, "spec.podSets: Too many: 9: must have at most 8 items"),
	C("wl v1beta2 allows nine pod sets", K_WL,
	  WL2S(PODSETS(PS("a", 1) "," PS("b", 1) "," PS("c", 1) "," PS("d", 1) ","
		       PS("e", 1) "," PS("f", 1) "," PS("g", 1) "," PS("h", 1) ","
		       PS("i", 1)), ""),
	  NULL, 0, NULL),
	C("wl four problems at once", K_WL,
	  WL(PODSETS(PS("main", -1) "," PS("main", 1)) ",'queueName':'Q',"
	     "'maximumExecutionTimeSeconds':-5"),
	  NULL, 4, "spec.podSets[0].count", "spec.podSets[1]: Duplicate",
	  "spec.queueName", "spec.maximumExecutionTimeSeconds"),

	/* ---- Workload v1beta1: status ---- */
	C("wl reserved with admission", K_WL,
	  WLS(PODSETS(PS("main", 3)), RESERVED "," ADM_MAIN), NULL, 0, NULL),
	C("wl assignments must match pod sets", K_WL,
	  WLS(PODSETS(PS("main", 3) "," PS("b", 1)), RESERVED "," ADM_MAIN), NULL, 1,
	  "<nil>: Invalid value: \"object\": podSetAssignments must have the same "
	  "number of podSets as the spec"),
	C("wl unreserved admission is not counted", K_WL,
	  WLS(PODSETS(PS("main", 3) "," PS("b", 1)), ADM_MAIN), NULL, 0, NULL),
	C("wl usage must divide by count", K_WL,
	  WLS(PODSETS(PS("main", 2)), RESERVED "," ADM("cq", PSA("main", 2,
		"{'cpu':'1001m','memory':'3','nvidia.com/gpu':'4'}"))),
	  NULL, 2,
	  "status.admission.podSetAssignments[0].resourceUsage[cpu]: Invalid value: "
	  "\"1001m\": is not a multiple of 2",
	  "status.admission.podSetAssignments[0].resourceUsage[memory]: Invalid "
	  "value: \"3\": is not a multiple of 2"),
	C("wl assignment for an unknown pod set", K_WL,
	  WLS(PODSETS(PS("main", 3)), RESERVED "," ADM("cq", PSA("other", 3, "{'cpu':'3'}"))),
	  NULL, 1, "status.admission.podSetAssignments[0].name: Not found: \"other\""),
	C("wl reclaimable above count", K_WL,
	  WLS(PODSETS(PS("main", 3)), "'reclaimablePods':[{'name':'main','count':5}]"),
	  NULL, 1, "status.reclaimablePods[main].count: Invalid value: 5: should be "
		   "less or equal to 3"),
	C("wl reclaimable for an unknown pod set", K_WL,
	  WLS(PODSETS(PS("main", 3)), "'reclaimablePods':[{'name':'x','count':1}]"),
	  NULL, 1, "status.reclaimablePods[x].name: Unsupported value: \"x\": "
		   "supported values: \"main\""),

	/* ---- Workload: updates ---- */
	C("wl queueName frozen while reserved", K_WL,
	  WLS(PODSETS(PS("main", 3)) ",'queueName':'b'", RESERVED "," ADM_MAIN),
	  WLS(PODSETS(PS("main", 3)) ",'queueName':'a'", RESERVED "," ADM_MAIN),
	  1, "<nil>: Invalid value: \"object\": field is immutable"),
	C("wl queueName may change as the reservation goes", K_WL,
	  WLS(PODSETS(PS("main", 3)) ",'queueName':'b'", ""),
	  WLS(PODSETS(PS("main", 3)) ",'queueName':'a'", RESERVED "," ADM_MAIN),
	  0, NULL),
	C("wl2 queueName frozen while reserved", K_WL,
	  WL2S(PODSETS(PS("main", 3)) ",'queueName':'b'", RESERVED "," ADM_MAIN),
	  WL2S(PODSETS(PS("main", 3)) ",'queueName':'a'", RESERVED "," ADM_MAIN),
	  1, "<nil>: Invalid value: \"object\": queueName is immutable while "
	     "workload quota reserved"),
	C("wl priorityClassSource frozen while reserved", K_WL,
	  WLS(PODSETS(PS("main", 3)) ",'priorityClassSource':'scheduling.k8s.io/priorityclass'",
	      RESERVED "," ADM_MAIN),
	  WLS(PODSETS(PS("main", 3)), RESERVED "," ADM_MAIN),
	  1, "<nil>: Invalid value: \"object\": field is immutable"),
	C("wl priorityClassName frozen while reserved", K_WL,
	  WLS(PODSETS(PS("main", 3)) ",'priorityClassName':'b','priority':2",
	      RESERVED "," ADM_MAIN),
	  WLS(PODSETS(PS("main", 3)) ",'priorityClassName':'a','priority':1",
	      RESERVED "," ADM_MAIN),
	  1, "field is immutable"),
	C("wl priority itself may change", K_WL,
	  WLS(PODSETS(PS("main", 3)) ",'priorityClassName':'a','priority':7",
	      RESERVED "," ADM_MAIN),
	  WLS(PODSETS(PS("main", 3)) ",'priorityClassName':'a','priority':1",
	      RESERVED "," ADM_MAIN),
	  0, NULL),
	C("wl2 WorkloadPriorityClass name may change", K_WL,
	  WL2S(PODSETS(PS("main", 3)) ",'priority':1,'priorityClassRef':{'group':"
	       "'kueue.x-k8s.io','kind':'WorkloadPriorityClass','name':'b'}",
	       RESERVED "," ADM_MAIN),
	  WL2S(PODSETS(PS("main", 3)) ",'priority':1,'priorityClassRef':{'group':"
	       "'kueue.x-k8s.io','kind':'WorkloadPriorityClass','name':'a'}",
	       RESERVED "," ADM_MAIN),
	  0, NULL),
	C("wl2 PriorityClass name frozen while reserved", K_WL,
	  WL2S(PODSETS(PS("main", 3)) ",'priority':1,'priorityClassRef':{'group':"
	       "'scheduling.k8s.io','kind':'PriorityClass','name':'b'}",
	       RESERVED "," ADM_MAIN),
	  WL2S(PODSETS(PS("main", 3)) ",'priority':1,'priorityClassRef':{'group':"
	       "'scheduling.k8s.io','kind':'PriorityClass','name':'a'}",
	       RESERVED "," ADM_MAIN),
	  1, "priorityClassRef.name is immutable for scheduling.k8s.io/priorityclass "
	     "while workload quota reserved"),
	C("wl maximumExecutionTimeSeconds frozen while admitted", K_WL,
	  WLS(PODSETS(PS("main", 3)) ",'maximumExecutionTimeSeconds':20", ADMITTED "," ADM_MAIN),
	  WLS(PODSETS(PS("main", 3)) ",'maximumExecutionTimeSeconds':10", ADMITTED "," ADM_MAIN),
	  1, "<nil>: Invalid value: \"object\": maximumExecutionTimeSeconds is "
	     "immutable while admitted"),
	C("wl maximumExecutionTimeSeconds free while only reserved", K_WL,
	  WLS(PODSETS(PS("main", 3)) ",'maximumExecutionTimeSeconds':20", RESERVED "," ADM_MAIN),
	  WLS(PODSETS(PS("main", 3)) ",'maximumExecutionTimeSeconds':10", RESERVED "," ADM_MAIN),
	  0, NULL),
	C("wl pod set count frozen while reserved", K_WL,
	  WLS(PODSETS(PS("main", 4)), RESERVED),
	  WLS(PODSETS(PS("main", 3)), RESERVED),
	  1, "spec.podSets[0]: Invalid value: v1beta1.PodSet{...}: field is immutable"),
	C("wl pod set template frozen while reserved", K_WL,
	  WLS(PODSETS("{'name':'main','count':3,'template':{'spec':{'containers':"
		      "[{'name':'c','image':'v2'}]}}}"), RESERVED),
	  WLS(PODSETS("{'name':'main','count':3,'template':{'spec':{'containers':"
		      "[{'name':'c','image':'v1'}]}}}"), RESERVED),
	  1, "spec.podSets[0]: Invalid value: v1beta1.PodSet{...}: field is immutable"),
	C("wl pod sets added while reserved", K_WL,
	  WLS(PODSETS(PS("main", 3) "," PS("b", 1)), RESERVED),
	  WLS(PODSETS(PS("main", 3)), RESERVED),
	  1, "spec.podSets: Invalid value: []v1beta1.PodSet{...}: field is immutable"),
	C("wl pod sets free without reservation", K_WL,
	  WL(PODSETS(PS("main", 4))), WL(PODSETS(PS("main", 3))), 0, NULL),
	C("wl admission content frozen", K_WL,
	  WLS(PODSETS(PS("main", 3)), RESERVED "," ADM("other", PSA("main", 3, "{'cpu':'3'}"))),
	  WLS(PODSETS(PS("main", 3)), RESERVED "," ADM_MAIN),
	  1, "status.admission: Invalid value: v1beta1.Admission{...}: field is immutable"),
	C("wl admission may be set", K_WL,
	  WLS(PODSETS(PS("main", 3)), RESERVED "," ADM_MAIN), WL(PODSETS(PS("main", 3))),
	  0, NULL),
	C("wl admission may be cleared", K_WL,
	  WL(PODSETS(PS("main", 3))), WLS(PODSETS(PS("main", 3)), RESERVED "," ADM_MAIN),
	  0, NULL),
	C("wl topology assignment may be filled in", K_WL,
	  WLS(PODSETS(PS("main", 3)), RESERVED ",'admission':{'clusterQueue':'cq',"
	      "'podSetAssignments':[{'name':'main','flavors':{'cpu':'default'},"
	      "'resourceUsage':{'cpu':'3'},'count':3,'topologyAssignment':"
	      "{'levels':['h'],'domains':[{'values':['n1'],'count':3}]}}]}"),
	  WLS(PODSETS(PS("main", 3)), RESERVED "," ADM_MAIN),
	  0, NULL),
	C("wl reclaimable may not shrink", K_WL,
	  WLS(PODSETS(PS("main", 3)), RESERVED "," ADM_MAIN ",'reclaimablePods':"
	      "[{'name':'main','count':1}]"),
	  WLS(PODSETS(PS("main", 3)), RESERVED "," ADM_MAIN ",'reclaimablePods':"
	      "[{'name':'main','count':2}]"),
	  1, "status.reclaimablePods[main].count: Invalid value: 1: cannot be less then 2"),
	C("wl reclaimable may not vanish", K_WL,
	  WLS(PODSETS(PS("main", 3)), RESERVED "," ADM_MAIN),
	  WLS(PODSETS(PS("main", 3)), RESERVED "," ADM_MAIN ",'reclaimablePods':"
	      "[{'name':'main','count':2}]"),
	  1, "status.reclaimablePods[main]: Required value: cannot be removed"),
	C("wl reclaimable may grow", K_WL,
	  WLS(PODSETS(PS("main", 3)), RESERVED "," ADM_MAIN ",'reclaimablePods':"
	      "[{'name':'main','count':3}]"),
	  WLS(PODSETS(PS("main", 3)), RESERVED "," ADM_MAIN ",'reclaimablePods':"
	      "[{'name':'main','count':2}]"),
	  0, NULL),
	C("wl podSetUpdates of a ready check frozen", K_WL,
	  WLS(PODSETS(PS("main", 3)), "'admissionChecks':[{'name':'p','state':'Ready',"
	      "'message':'','lastTransitionTime':'2026-01-01T00:00:00Z',"
	      "'podSetUpdates':[{'name':'main','labels':{'a':'2'}}]}]"),
	  WLS(PODSETS(PS("main", 3)), "'admissionChecks':[{'name':'p','state':'Ready',"
	      "'message':'','lastTransitionTime':'2026-01-01T00:00:00Z',"
	      "'podSetUpdates':[{'name':'main','labels':{'a':'1'}}]}]"),
	  1, "status.admissionChecks[0].podSetUpdates: Invalid value: "
	     "[]v1beta1.PodSetUpdate{...}: field is immutable"),

	/* ---- batch/v1 Job (§12.3) ---- */
	CJ("job valid", JOB("{'kueue.x-k8s.io/queue-name':'user-q',"
			    "'kueue.x-k8s.io/max-exec-time-seconds':'600',"
			    "'kueue.x-k8s.io/priority-class':'high'}",
			    "{'kueue.x-k8s.io/job-min-parallelism':'2',"
			    "'kueue.x-k8s.io/job-completions-equal-parallelism':'true'}",
			    JSPEC(true, 4, ",'completions':4,'completionMode':'Indexed'")),
	   NULL, false, 0, NULL),
	CJ("job bad queue name", JOB(QLABEL("Bad_Q"), "{}", JSPEC(true, 1, "")),
	   NULL, false, 1,
	   "metadata.labels[kueue.x-k8s.io/queue-name]: Invalid value: \"Bad_Q\": "
	   "a lowercase RFC 1123 subdomain must consist of"),
	CJ("job empty queue name", JOB(QLABEL(""), "{}", JSPEC(true, 1, "")),
	   NULL, false, 1,
	   "metadata.labels[kueue.x-k8s.io/queue-name]: Invalid value: \"\": "
	   "a lowercase RFC 1123 subdomain must consist of"),
	CJ("job bad queue name annotation", JOB("{}",
	   "{'kueue.x-k8s.io/queue-name':'Q'}", JSPEC(true, 1, "")),
	   NULL, false, 1, "metadata.annotations[kueue.x-k8s.io/queue-name]: Invalid value: \"Q\""),
	CJ("job max exec not a number",
	   JOB("{'kueue.x-k8s.io/max-exec-time-seconds':'abc'}", "{}", JSPEC(true, 1, "")),
	   NULL, false, 1,
	   "metadata.labels[kueue.x-k8s.io/max-exec-time-seconds]: Invalid value: "
	   "\"abc\": strconv.Atoi: parsing \"abc\": invalid syntax"),
	CJ("job max exec zero",
	   JOB("{'kueue.x-k8s.io/max-exec-time-seconds':'0'}", "{}", JSPEC(true, 1, "")),
	   NULL, false, 1,
	   "metadata.labels[kueue.x-k8s.io/max-exec-time-seconds]: Invalid value: 0: "
	   "should be greater than 0"),
	CJ("job max exec negative",
	   JOB("{'kueue.x-k8s.io/max-exec-time-seconds':'-5'}", "{}", JSPEC(true, 1, "")),
	   NULL, false, 1, "Invalid value: -5: should be greater than 0"),
	CJ("job max exec out of range",
	   JOB("{'kueue.x-k8s.io/max-exec-time-seconds':'99999999999999999999'}", "{}",
	       JSPEC(true, 1, "")),
	   NULL, false, 1,
	   "strconv.Atoi: parsing \"99999999999999999999\": value out of range"),
	CJ("job min parallelism not below pods",
	   JOB("{}", "{'kueue.x-k8s.io/job-min-parallelism':'4'}", JSPEC(true, 4, "")),
	   NULL, false, 1,
	   "metadata.annotations[kueue.x-k8s.io/job-min-parallelism]: Invalid value: 4: "
	   "should be between 0 and 3"),
	CJ("job min parallelism zero",
	   JOB("{}", "{'kueue.x-k8s.io/job-min-parallelism':'0'}", JSPEC(true, 4, "")),
	   NULL, false, 1, "Invalid value: 0: should be between 0 and 3"),
	CJ("job min parallelism counts completions",
	   JOB("{}", "{'kueue.x-k8s.io/job-min-parallelism':'2'}",
	       JSPEC(true, 4, ",'completions':2")),
	   NULL, false, 1, "Invalid value: 2: should be between 0 and 1"),
	/* The bound in the message was computed as int32 - 1: signed
	 * overflow (UBSan) when parallelism is INT32_MIN. */
	CJ("job min parallelism with int32-min parallelism",
	   JOB("{}", "{'kueue.x-k8s.io/job-min-parallelism':'1'}",
	       JSPEC(true, -2147483648, "")),
	   NULL, false, 1, "Invalid value: 1: should be between 0 and -2147483649"),
	CJ("job min parallelism not a number",
	   JOB("{}", "{'kueue.x-k8s.io/job-min-parallelism':'two'}", JSPEC(true, 4, "")),
	   NULL, false, 1, "strconv.Atoi: parsing \"two\": invalid syntax"),
	CJ("job equal parallelism not a bool",
	   JOB("{}", "{'kueue.x-k8s.io/job-completions-equal-parallelism':'maybe'}",
	       JSPEC(true, 2, ",'completionMode':'Indexed','completions':2")),
	   NULL, false, 1,
	   "metadata.annotations[kueue.x-k8s.io/job-completions-equal-parallelism]: "
	   "Invalid value: \"maybe\": strconv.ParseBool: parsing \"maybe\": invalid syntax"),
	CJ("job equal parallelism on NonIndexed",
	   JOB("{}", "{'kueue.x-k8s.io/job-completions-equal-parallelism':'true'}",
	       JSPEC(true, 2, ",'completions':2")),
	   NULL, false, 1, "Invalid value: \"true\": should not be enabled for NonIndexed jobs"),
	CJ("job equal parallelism needs equal completions",
	   JOB("{}", "{'kueue.x-k8s.io/job-completions-equal-parallelism':'T'}",
	       JSPEC(true, 2, ",'completions':3,'completionMode':'Indexed'")),
	   NULL, false, 1,
	   "spec.completions: Invalid value: 3: should be equal to parallelism when "
	   "kueue.x-k8s.io/job-completions-equal-parallelism is annotation is true"),
	CJ("job equal parallelism off",
	   JOB("{}", "{'kueue.x-k8s.io/job-completions-equal-parallelism':'false'}",
	       JSPEC(true, 2, ",'completions':3")),
	   NULL, false, 0, NULL),
	CJ("job bad prebuilt workload name",
	   JOB("{'kueue.x-k8s.io/prebuilt-workload-name':'WL'}", "{}", JSPEC(true, 1, "")),
	   NULL, false, 1,
	   "metadata.labels[kueue.x-k8s.io/prebuilt-workload-name]: Invalid value: \"WL\""),
	CJ("job queue name frozen while running",
	   JOB(QLABEL("q2"), "{}", JSPEC(false, 1, "")),
	   JOB(QLABEL("q1"), "{}", JSPEC(false, 1, "")), false, 1,
	   "metadata.labels[kueue.x-k8s.io/queue-name]: Invalid value: \"q2\": "
	   "field is immutable"),
	CJ("job queue name frozen once unsuspended",
	   JOB(QLABEL("q2"), "{}", JSPEC(false, 1, "")),
	   JOB(QLABEL("q1"), "{}", JSPEC(true, 1, "")), false, 1, "field is immutable"),
	CJ("job queue name free while suspended",
	   JOB(QLABEL("q2"), "{}", JSPEC(true, 1, "")),
	   JOB(QLABEL("q1"), "{}", JSPEC(true, 1, "")), false, 0, NULL),
	CJ("job queue name kept with a default queue",
	   JOB(NOLABELS, "{}", JSPEC(true, 1, "")),
	   JOB(QLABEL("q1"), "{}", JSPEC(true, 1, "")), true, 1,
	   "metadata.labels[kueue.x-k8s.io/queue-name]: Invalid value: \"\": "
	   "queue-name must not be empty in namespace with default queue"),
	CJ("job queue name removable without a default queue",
	   JOB(NOLABELS, "{}", JSPEC(true, 1, "")),
	   JOB(QLABEL("q1"), "{}", JSPEC(true, 1, "")), false, 0, NULL),
	CJ("job queue name removed while running, default queue",
	   JOB(NOLABELS, "{}", JSPEC(false, 1, "")),
	   JOB(QLABEL("q1"), "{}", JSPEC(false, 1, "")), true, 2,
	   "Invalid value: \"\": field is immutable",
	   "queue-name must not be empty in namespace with default queue"),
	CJ("job max exec frozen unless suspended in both",
	   JOB("{'kueue.x-k8s.io/max-exec-time-seconds':'20'}", "{}", JSPEC(true, 1, "")),
	   JOB("{'kueue.x-k8s.io/max-exec-time-seconds':'10'}", "{}", JSPEC(false, 1, "")),
	   false, 1,
	   "metadata.labels[kueue.x-k8s.io/max-exec-time-seconds]: Invalid value: "
	   "\"20\": field is immutable"),
	CJ("job max exec free while suspended",
	   JOB("{'kueue.x-k8s.io/max-exec-time-seconds':'20'}", "{}", JSPEC(true, 1, "")),
	   JOB("{'kueue.x-k8s.io/max-exec-time-seconds':'10'}", "{}", JSPEC(true, 1, "")),
	   false, 0, NULL),
	CJ("job priority class free while suspended",
	   JOB("{'kueue.x-k8s.io/priority-class':'b'}", "{}", JSPEC(true, 1, "")),
	   JOB("{'kueue.x-k8s.io/priority-class':'a'}", "{}", JSPEC(true, 1, "")),
	   false, 0, NULL),
	CJ("job priority class may not be removed",
	   JOB(NOLABELS, "{}", JSPEC(true, 1, "")),
	   JOB("{'kueue.x-k8s.io/priority-class':'a'}", "{}", JSPEC(true, 1, "")),
	   false, 1,
	   "metadata.labels[kueue.x-k8s.io/priority-class]: Invalid value: \"\": "
	   "field is immutable"),
	CJ("job priority class frozen while running",
	   JOB("{'kueue.x-k8s.io/priority-class':'b'}", "{}", JSPEC(false, 1, "")),
	   JOB("{'kueue.x-k8s.io/priority-class':'a'}", "{}", JSPEC(false, 1, "")),
	   false, 1, "priority-class]: Invalid value: \"b\": field is immutable"),
	CJ("job prebuilt workload frozen while running",
	   JOB("{'kueue.x-k8s.io/prebuilt-workload-name':'b'}", "{}", JSPEC(false, 1, "")),
	   JOB("{'kueue.x-k8s.io/prebuilt-workload-name':'a'}", "{}", JSPEC(false, 1, "")),
	   false, 1, "prebuilt-workload-name]: Invalid value: \"b\": field is immutable"),
	CJ("job parallelism frozen under partial admission",
	   JOB("{}", "{'kueue.x-k8s.io/job-min-parallelism':'1'}", JSPEC(false, 3, "")),
	   JOB("{}", "{'kueue.x-k8s.io/job-min-parallelism':'1'}", JSPEC(false, 4, "")),
	   false, 1,
	   "spec.parallelism: Forbidden: cannot change when partial admission is "
	   "enabled and the job is not suspended"),
	CJ("job unchanged bad min parallelism not re-reported",
	   JOB("{}", "{'kueue.x-k8s.io/job-min-parallelism':'9'}", JSPEC(true, 2, "")),
	   JOB("{}", "{'kueue.x-k8s.io/job-min-parallelism':'9'}", JSPEC(true, 2, "")),
	   false, 0, NULL),
	CJ("job equal parallelism frozen while running",
	   JOB("{}", "{'kueue.x-k8s.io/job-completions-equal-parallelism':'true'}",
	       JSPEC(false, 2, ",'completions':2,'completionMode':'Indexed'")),
	   JOB("{}", "{}", JSPEC(false, 2, ",'completions':2,'completionMode':'Indexed'")),
	   false, 1,
	   "metadata.annotations[kueue.x-k8s.io/job-completions-equal-parallelism]: "
	   "Forbidden: field is immutable while the job is not suspended"),
	CJ("job four problems at once",
	   JOB("{'kueue.x-k8s.io/queue-name':'Q','kueue.x-k8s.io/max-exec-time-seconds':'x'}",
	       "{'kueue.x-k8s.io/job-min-parallelism':'7',"
	       "'kueue.x-k8s.io/job-completions-equal-parallelism':'true'}",
	       JSPEC(true, 2, ",'completions':2")),
	   NULL, false, 4, "queue-name", "max-exec-time-seconds", "job-min-parallelism",
	   "should not be enabled for NonIndexed jobs"),
};

#define NCASES (sizeof(cases) / sizeof(cases[0]))

/* ------------------------------------------------------------------ */
/* Driving the codec and the validators by kind */

union any {
	struct resource_flavor rf;
	struct cluster_queue cq;
	struct cohort co;
	struct local_queue lq;
	struct workload_priority_class wpc;
	struct workload wl;
	struct job job;
};

/* Parses text (' for ") and decodes it into o; codec errors go to fe. */
static void any_decode(enum kind k, const char *text, union any *o,
		       struct field_errors *fe)
{
	char *s = xstrdup(text);
	json_t *j;
	int rc = 0;

	for (char *p = s; *p; p++)
		if (*p == '\'')
			*p = '"';
	j = t_json(s);
	switch (k) {
	case KIND_RESOURCE_FLAVOR:
		rc = codec_decode_resource_flavor(j, &o->rf, fe);
		break;
	case KIND_CLUSTER_QUEUE:
		rc = codec_decode_cluster_queue(j, &o->cq, fe);
		break;
	case KIND_COHORT:
		rc = codec_decode_cohort(j, &o->co, fe);
		break;
	case KIND_LOCAL_QUEUE:
		rc = codec_decode_local_queue(j, &o->lq, fe);
		break;
	case KIND_WORKLOAD_PRIORITY_CLASS:
		rc = codec_decode_workload_priority_class(j, &o->wpc, fe);
		break;
	case KIND_WORKLOAD:
		rc = codec_decode_workload(j, &o->wl, fe);
		break;
	case KIND_JOB:
		rc = codec_decode_job(j, &o->job, fe);
		break;
	case KIND_UNKNOWN:
		ck_abort_msg("case without a kind");
	}
	ck_assert_int_eq(rc, fe->n ? -1 : 0);
	json_decref(j);
	free(s);
}

static void any_validate(enum kind k, const union any *o,
			 const union any *old, bool default_lq,
			 struct field_errors *fe)
{
	switch (k) {
	case KIND_RESOURCE_FLAVOR:
		validate_resource_flavor(&o->rf, old ? &old->rf : NULL, fe);
		break;
	case KIND_CLUSTER_QUEUE:
		validate_cluster_queue(&o->cq, old ? &old->cq : NULL, fe);
		break;
	case KIND_COHORT:
		validate_cohort(&o->co, old ? &old->co : NULL, fe);
		break;
	case KIND_LOCAL_QUEUE:
		validate_local_queue(&o->lq, old ? &old->lq : NULL, fe);
		break;
	case KIND_WORKLOAD_PRIORITY_CLASS:
		validate_workload_priority_class(&o->wpc, old ? &old->wpc : NULL,
						 fe);
		break;
	case KIND_WORKLOAD:
		validate_workload(&o->wl, old ? &old->wl : NULL, fe);
		break;
	case KIND_JOB:
		validate_job(&o->job, old ? &old->job : NULL, default_lq, fe);
		break;
	case KIND_UNKNOWN:
		break;
	}
}

static void any_release(enum kind k, union any *o)
{
	switch (k) {
	case KIND_RESOURCE_FLAVOR: resource_flavor_release(&o->rf); break;
	case KIND_CLUSTER_QUEUE: cluster_queue_release(&o->cq); break;
	case KIND_COHORT: cohort_release(&o->co); break;
	case KIND_LOCAL_QUEUE: local_queue_release(&o->lq); break;
	case KIND_WORKLOAD_PRIORITY_CLASS:
		workload_priority_class_release(&o->wpc);
		break;
	case KIND_WORKLOAD: workload_release(&o->wl); break;
	case KIND_JOB: job_release(&o->job); break;
	case KIND_UNKNOWN: break;
	}
}

/*
 * Decodes and validates obj (and old), returning every error in fe, the
 * way an admission request sees them. The old object must be clean.
 */
static void run(enum kind k, const char *obj, const char *old_text,
		bool default_lq, struct field_errors *fe)
{
	union any o, old;
	struct field_errors ofe = FIELD_ERRORS_INIT;

	memset(&o, 0, sizeof(o));
	memset(&old, 0, sizeof(old));
	any_decode(k, obj, &o, fe);
	if (old_text) {
		any_decode(k, old_text, &old, &ofe);
		ck_assert_msg(ofe.n == 0, "old object has errors: %s",
			      t_fe_text(&ofe));
	}
	any_validate(k, &o, old_text ? &old : NULL, default_lq, fe);
	any_release(k, &o);
	any_release(k, &old);
	field_errors_release(&ofe);
}

START_TEST(rules)
{
	const struct vcase *c = &cases[_i];
	struct field_errors fe = FIELD_ERRORS_INIT;

	run(c->kind, c->obj, c->old, c->default_lq, &fe);
	for (size_t w = 0; w < 5 && c->want[w]; w++)
		ck_assert_msg(t_fe_contains(&fe, c->want[w]),
			      "%s: no error containing '%s' in: %s", c->name,
			      c->want[w], t_fe_text(&fe));
	if (c->nerr >= 0)
		ck_assert_msg(fe.n == (size_t)c->nerr,
			      "%s: %zu errors, want %d: %s", c->name, fe.n,
			      c->nerr, t_fe_text(&fe));
	field_errors_release(&fe);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Size limits, with objects too big to write inline */

/* A growing string for the big objects (amortised appends). */
struct sbuf {
	char *s;    /* NUL-terminated once anything was appended */
	size_t n;   /* strlen(s) */
	size_t cap;
};

static void cat(struct sbuf *b, const char *fmt, ...) PRINTF_LIKE(2, 3);

static void cat(struct sbuf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	ck_assert_int_ge(n, 0);
	XGROW(b->s, b->cap, b->n + (size_t)n + 1);
	va_start(ap, fmt);
	vsnprintf(b->s + b->n, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->n += (size_t)n;
}

/*
 * A ClusterQueue of ngroups groups, each covering nres resources
 * r<g>-<i> with nflavors flavors f<g>-<j> listing all of them. Returns a
 * new string.
 */
static char *cq_sized(size_t ngroups, size_t nres, size_t nflavors)
{
	struct sbuf b = { NULL, 0, 0 };

	cat(&b, "{'apiVersion':'kueue.x-k8s.io/v1beta1','kind':'ClusterQueue',"
		"'metadata':{'name':'big'},'spec':{'resourceGroups':[");
	for (size_t g = 0; g < ngroups; g++) {
		cat(&b, "%s{'coveredResources':[", g ? "," : "");
		for (size_t i = 0; i < nres; i++)
			cat(&b, "%s'r%zu-%zu'", i ? "," : "", g, i);
		cat(&b, "],'flavors':[");
		for (size_t j = 0; j < nflavors; j++) {
			cat(&b, "%s{'name':'f%zu-%zu','resources':[",
			    j ? "," : "", g, j);
			for (size_t i = 0; i < nres; i++)
				cat(&b, "%s{'name':'r%zu-%zu','nominalQuota':1}",
				    i ? "," : "", g, i);
			cat(&b, "]}");
		}
		cat(&b, "]}");
	}
	cat(&b, "]}}");
	return b.s;
}

static void check_one(enum kind k, const char *obj, const char *want)
{
	struct field_errors fe = FIELD_ERRORS_INIT;

	run(k, obj, NULL, false, &fe);
	if (want) {
		ck_assert_fe(&fe, want);
		ck_assert_msg(fe.n == 1, "want one error for '%s': %s", want,
			      t_fe_text(&fe));
	} else {
		ck_assert_msg(fe.n == 0, "want no error: %s", t_fe_text(&fe));
	}
	field_errors_release(&fe);
}

START_TEST(cq_limits)
{
	static const struct {
		size_t groups, res, flavors;
		const char *want;
	} t[] = {
		{ 16, 1, 1, NULL },
		{ 17, 1, 1, "spec.resourceGroups: Too many: 17: must have at most 16 items" },
		{ 1, 64, 1, NULL },
		{ 16, 16, 16, NULL }, /* 256 flavors, 256 resources */
		{ 16, 1, 17,
		  "spec.resourceGroups: Invalid value: 272: total number of flavors "
		  "across all resourceGroups must be ≤ 256, got 272" },
		{ 5, 52, 1,
		  "spec.resourceGroups: Invalid value: 260: total number of covered "
		  "resources across all resourceGroups must be ≤ 256, got 260" },
		{ 1, 60, 9,
		  "spec.resourceGroups[0]: Invalid value: 540: number of "
		  "flavor-resource combinations in a resourceGroup must be ≤ 512, got 540" },
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		char *obj = cq_sized(t[i].groups, t[i].res, t[i].flavors);

		check_one(KIND_CLUSTER_QUEUE, obj, t[i].want);
		free(obj);
	}
}
END_TEST

START_TEST(cq_item_limits)
{
	struct field_errors fe = FIELD_ERRORS_INIT;
	char *obj = cq_sized(1, 65, 65);

	run(KIND_CLUSTER_QUEUE, obj, NULL, false, &fe);
	ck_assert_fe(&fe, "spec.resourceGroups[0].coveredResources: Too many: 65: must have at most 64 items");
	ck_assert_fe(&fe, "spec.resourceGroups[0].flavors: Too many: 65: must have at most 64 items");
	ck_assert_fe(&fe, "spec.resourceGroups[0].flavors[64].resources: Too many: 65");
	/* coveredResources, flavors, 65 x resources, 65 x 65 combos */
	ck_assert_uint_eq(fe.n, 3 + 64 + 1);
	field_errors_release(&fe);
	free(obj);
}
END_TEST

START_TEST(long_names)
{
	char name[300], *obj;

	memset(name, 'a', 254);
	name[254] = '\0';
	obj = xasprintf("{'apiVersion':'kueue.x-k8s.io/v1beta1','kind':"
			"'ClusterQueue','metadata':{'name':'cq'},'spec':"
			"{'cohort':'%s'}}", name);
	check_one(KIND_CLUSTER_QUEUE, obj,
		  "spec.cohort: Too long: may not be more than 253 bytes");
	free(obj);
	name[253] = '\0';
	obj = xasprintf("{'apiVersion':'kueue.x-k8s.io/v1beta1','kind':"
			"'ClusterQueue','metadata':{'name':'cq'},'spec':"
			"{'cohort':'%s'}}", name);
	check_one(KIND_CLUSTER_QUEUE, obj, NULL);
	free(obj);
	memset(name, 'a', 64);
	name[64] = '\0';
	obj = xasprintf("{'apiVersion':'kueue.x-k8s.io/v1beta1','kind':"
			"'Workload','metadata':{'name':'w','namespace':'n'},"
			"'spec':{'podSets':[{'name':'%s','count':1,'template':"
			"{'spec':{'containers':[{'name':'c'}]}}}]}}", name);
	check_one(KIND_WORKLOAD, obj,
		  "spec.podSets[0].name: Too long: may not be more than 63 bytes");
	free(obj);
}
END_TEST

START_TEST(wpc_description)
{
	char *desc = xmalloc(2050), *obj;

	memset(desc, 'd', 2049);
	desc[2049] = '\0';
	obj = xasprintf("{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':"
			"'WorkloadPriorityClass','metadata':{'name':'p'},"
			"'value':1,'description':'%s'}", desc);
	check_one(KIND_WORKLOAD_PRIORITY_CLASS, obj,
		  "description: Too long: may not be more than 2048 bytes");
	free(obj);
	/* v1beta1 has no limit. */
	obj = xasprintf("{'apiVersion':'kueue.x-k8s.io/v1beta1','kind':"
			"'WorkloadPriorityClass','metadata':{'name':'p'},"
			"'value':1,'description':'%s'}", desc);
	check_one(KIND_WORKLOAD_PRIORITY_CLASS, obj, NULL);
	free(obj);
	free(desc);
}
END_TEST

/* Hand-built structs: the validators need no codec, and a zeroed struct
 * is a valid empty object. */
START_TEST(bare_structs_without_codec)
{
	struct field_errors fe = FIELD_ERRORS_INIT;
	struct local_queue lq;

	memset(&lq, 0, sizeof(lq));
	lq.meta.name = xstrdup("lq");
	lq.cluster_queue = xstrdup("cq");
	validate_local_queue(&lq, NULL, &fe);
	ck_assert_uint_eq(fe.n, 0);
	free(lq.cluster_queue);
	lq.cluster_queue = xstrdup("Bad_Name");
	validate_local_queue(&lq, NULL, &fe);
	ck_assert_uint_eq(fe.n, 1);
	ck_assert(field_errors_has_path(&fe, "spec.clusterQueue"));
	local_queue_release(&lq);
	field_errors_release(&fe);
}
END_TEST

Suite *validate_suite(void)
{
	Suite *s = suite_create("validate");
	TCase *tc = tcase_create("rules");

	tcase_add_loop_test(tc, rules, 0, NCASES);
	suite_add_tcase(s, tc);
	tc = tcase_create("limits");
	tcase_add_test(tc, cq_limits);
	tcase_add_test(tc, cq_item_limits);
	tcase_add_test(tc, long_names);
	tcase_add_test(tc, wpc_description);
	tcase_add_test(tc, bare_structs_without_codec);
	suite_add_tcase(s, tc);
	return s;
}
