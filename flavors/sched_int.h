/*
 * sched_int: the private state of flavors/sched, shared by sched.c
 * (inputs, requeue events, holders), sched_cycle.c (the checks and the
 * cycle) and sched_status.c (what status writers read). Nothing outside
 * these three files may include it.
 *
 * Records live in growable arrays indexed by dense ids (flavor, resource,
 * ClusterQueue, LocalQueue, namespace, workload); names map to ids through
 * one open-addressing hash index per kind (struct nidx). Flavors,
 * resources, cohorts and ClusterQueues are few and keep their ids for the
 * life of the sched: a removed one stays as a record (exists false, or a
 * NULL object), since tree nodes, compiled groups and fr ids refer to it.
 *
 * Workloads, LocalQueues and namespaces come and go for as long as the
 * controller runs (a CronJob a minute is half a million workloads a
 * year), so their records are freed and their ids reused; memory follows
 * what exists, not what ever existed:
 *  - sched_wl_remove takes a workload's name out of wl_idx and its record
 *    out of every queue, holder list and count. Only the eviction check
 *    list (sched.chk) may still hold its id: then the record stays, dead
 *    (key NULL, flagged), until the check at the start of the next
 *    sched_cycle frees it; otherwise it is freed at once. A freed id
 *    (wls[id] NULL) goes back to wl_idx's free list, and the next
 *    workload that gets it starts from a zeroed record. Nothing else
 *    outlives a cycle: round entries, inflight items and the preemptor
 *    id are cycle-local, decisions borrow the controller's struct
 *    workload (not the record), and last_state is a stamp, not a
 *    reference.
 *  - A LocalQueue or namespace record counts the workload records that
 *    refer to it (nref). It is freed, and its id reused, once nref is 0
 *    and it carries nothing of its own: a LocalQueue no stop policy and
 *    no pending dirty mark (its last status write is still owed), a
 *    namespace no labels. Its counts and usage are then all zero, which
 *    is what an unknown name reads as.
 * sched_check verifies all of it (STYLE P15).
 */
#ifndef FLAVORS_SCHED_INT_H
#define FLAVORS_SCHED_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "flavors/assign.h"
#include "flavors/fair.h"
#include "flavors/queue.h"
#include "flavors/sched.h"
#include "flavors/tree.h"

struct nslot {
	int32_t id;    /* -1: empty */
	uint32_t hash; /* of key[id]: probes compare it before strcmp */
};

/*
 * name -> id over an array of names (the ids' records). Linear probing
 * with backward-shift deletion: no tombstones, load <= 1/2. An id is live
 * (key[id] set), retired (NULL, not yet free: its record may still be
 * referenced) or free (NULL, in free[]: the next add may take it).
 */
struct nidx {
	struct nslot *slot; /* owned; nslot entries */
	size_t nslot;       /* 0 or a power of two >= 2 * nlive */
	char **key;         /* owned names by id; NULL when not live */
	size_t n, cap;      /* ids handed out (the records' high water) */
	size_t nlive;       /* ids with a name */
	int32_t *free;      /* owned; free ids, reused last in first out */
	size_t nfree, capfree;
};

/* One resource of a workload's admission fair sharing entry penalty. */
struct afs_pen {
	int32_t res; /* resource id */
	double v;    /* milli-units */
};

enum wl_state {
	WS_NONE = 0, /* known, neither queued nor holding quota */
	WS_PENDING,  /* in a ClusterQueue's queue */
	WS_HOLDING,  /* holds quota, confirmed by its status */
	WS_ASSUMED,  /* admitted by a cycle, write in flight */
};

struct swl {
	bool recompile;          /* sched_wl_podsets_changed */
	const char *key;            /* "namespace/name" (wl_idx's); NULL
				       once removed (the record is dead) */
	int32_t id;                 /* index in sched.wls */
	const struct workload *w;   /* borrowed; NULL once removed */
	enum wl_state state;
	int32_t ns;                 /* namespace id (counted in its nref),
				       -1 before the first set and once
				       removed */
	int32_t cq;                 /* queue's CQ id when WS_PENDING */
	int32_t lq;                 /* LocalQueue id (counted in its nref)
				       or -1 */
	struct qitem qi;            /* embedded queue link */
	/* pending: compiled pod sets */
	struct assign_podset *ps;      /* owned */
	size_t nps;
	int64_t gen;                /* metadata.generation last compiled */
	uint32_t cond_sig;          /* Evicted/Requeued signature */
	/* namespace selector cache: valid for (cq_gen, ns_gen) */
	uint32_t sel_cq_gen, sel_ns_gen;
	bool sel_ok;
	/* holding quota */
	int32_t hold_cq;            /* CQ id whose tree node holds usage */
	bool admitted;              /* Admitted=True (flavorsUsage) */
	bool not_ready;             /* PodsReady is not True (counted in
				       sched.nnot_ready while holding) */
	struct fr_val *usage;       /* owned; what was added to the tree */
	size_t nusage;
	struct swl *h_prev, *h_next; /* hold_cq's holder list while usage
					is in its tree (tree_apply) */
	/* eviction and requeue checks (sched_cycle.c) */
	bool evicted;               /* holding with Evicted=True: its
				       eviction is under way */
	bool preempting;            /* holding, a DEC_PREEMPT emitted and
				       not yet seen written (cleared by
				       release and sched_wl_recheck) */
	uint64_t victim_round;      /* sched.cycle of the round that
				       chose it as a victim */
	int64_t qr_ms;              /* holding: QuotaReserved time, 0 =
				       unknown (just assumed) */
	bool flagged;               /* in sched.chk */
	bool chk_sent;              /* a DEC_EVICT / DEC_REQUEUE for the
				       version of chk_sig was emitted */
	uint32_t chk_sig;           /* active, Evicted, Requeued of w */
	/* reporting */
	uint64_t dec_call;          /* sched_cycle call of its decision */
	size_t dec_idx;             /* index of that decision in out */
	const char *last_reason;    /* static; last pending reported */
	uint64_t last_hash;         /* its message's hash; 0 = none */
	uint64_t last_state;        /* sched.state when last reported */
	bool in_entries;            /* popped this round */
	/* admission fair sharing (sched_afs.c): the entry penalty pushed
	 * at admission, until settled or dropped */
	struct afs_pen *afs_pen;    /* owned */
	size_t nafs_pen;
};

struct scq {
	const char *name;                 /* cq_idx's */
	const struct cluster_queue *cq;   /* borrowed; NULL when absent */
	bool exists;
	char *invalid;                    /* owned or NULL */
	int node;                         /* tree node (always alive) */
	uint32_t gen;                     /* changes on every set */
	struct assign_cq c;                  /* compiled groups */
	struct cq_queue q;
	int32_t *flavors;                 /* owned; flavor ids referenced */
	size_t nflavors;
	/* Active condition */
	bool active;
	const char *reason;               /* static */
	char *message;                    /* owned */
	/* counts */
	int32_t reserving, admitted;
	int64_t *adm_usage;               /* owned; by fr, admitted only */
	size_t nadm;
	bool dirty;
	int64_t rq_due;                   /* batched requeue due; 0 none */
	struct swl *holders;              /* workloads whose usage is in
					     this node (h_prev/h_next) */
	int32_t nholders;
	enum stop_policy stop;            /* of the last good cq */
	bool afs;                         /* UsageBasedAdmissionFairSharing
					     (and sched_opts.afs) */
	bool afs_stale;                   /* a LocalQueue usage moved: re-key
					     the queue before the next round */
};

struct slq {
	const char *name;  /* lq_idx's "namespace/name"; NULL: free id */
	int32_t nref;      /* workload records with lq = this id */
	int32_t pending, reserving, admitted;
	int64_t *res_usage; /* owned; by fr, reserving (incl. assumed) */
	int64_t *adm_usage; /* owned; by fr, admitted only */
	size_t nusage;
	int32_t cq;        /* last CQ id seen for it, -1 */
	enum stop_policy stop; /* sched_lq_set */
	bool dirty;
	/* scratch of sched_cq_parked_by_lq: parked is valid while
	 * park_stamp is that call's stamp */
	uint64_t park_stamp;
	int32_t parked;
	/* admission fair sharing (sched_afs.c) */
	bool fs_bound;       /* the LocalQueue object exists (afs on) */
	bool fs_weight_set;  /* spec.fairSharing.weight given, != 1 */
	int64_t fs_weight;   /* milli-units */
	double *afs_cons;    /* owned; by resource id: decayed consumed */
	double *afs_pen;     /* owned; by resource id: pending penalties */
	size_t nafs;
	int64_t afs_last;    /* the history's lastUpdate; 0 = never */
	bool afs_seeded;     /* read back from the status once */
};

struct sns {
	const char *name;     /* ns_idx's; NULL: free id */
	int32_t nref;         /* workload records with ns = this id */
	struct smap labels; /* owned copy */
	uint32_t gen;
};

struct scohort {
	const char *name;          /* coh_idx's */
	const struct cohort *c;    /* borrowed; NULL when no object */
};

/* Kueue's preemption variants of a candidate (sched_preempt.c). */
enum sched_pvariant {
	PV_NEVER = 0,
	PV_WITHIN_CQ,            /* InClusterQueue */
	PV_HIER,                 /* InCohortReclamation: closer claim */
	PV_RECLAIM_NO_BORROW,    /* InCohortReclamation */
	PV_RECLAIM_WHILE_BORROW, /* InCohortReclaimWhileBorrowing */
	PV_FAIR,                 /* InCohortFairSharing */
};

/* A candidate victim while one question is answered (scratch). */
struct sched_pcand {
	struct swl *r;
	int lca;         /* cohort node it was collected under, -1 */
	uint8_t variant; /* enum sched_pvariant */
	uint8_t list;    /* 0 hierarchical, 1 other queues, 2 own queue */
	bool evicted;    /* eviction under way: ordered first */
	int64_t qr;      /* admitted at (now when unknown) */
	int32_t prio;    /* r's priority (no pointer chase in the order) */
	bool afs_on;     /* its queue uses admission fair sharing */
	double afs;      /* then its LocalQueue's usage (ordered first) */
	const char *uid; /* r's uid, "" when none */
};

/* A ClusterQueue's candidates in fair preemption's target ordering. */
struct sfq {
	int32_t cq;
	int32_t head, tail; /* pc indexes linked through sched.fnext */
};

/* A victim chosen for an entry. */
struct sched_target {
	int32_t wl;
	uint8_t variant; /* enum sched_pvariant */
};

/* One popped head in a round. */
struct sentry {
	int32_t wl, cq;
	int borrowing;
	int32_t priority;
	int64_t ts;
	const char *uid;
	uint64_t uid_pre;          /* queue_uid_prefix(uid) */
	enum assign_mode mode;
	enum requeue_reason why;
	const char *reason;        /* pending: static reason, or NULL */
	char *message;             /* pending: owned message */
	struct sched_assignment *asg; /* admit: owned until emitted */
	struct sched_target *tg;   /* preempt: owned victims */
	size_t ntg;
	bool done;                 /* processed this round */
};

/* A tree node in the fair tournament of one round (sched_fair.c). */
struct sfnode {
	uint64_t stamp;       /* sched.cycle when last initialised */
	int32_t ent;          /* winner entry of its subtree, -1 */
	int32_t hpos;         /* its position in its parent's heap (or the
				 top heap for a root), -1 when in none */
	int32_t hoff, hn;     /* a cohort: its children's heap in
				 sched.fheap[hoff .. hoff + hn) */
	int32_t nkids;        /* present children (heap capacity) */
	bool bon;             /* key at the parent: borrowing on the
				 winner's flavor-resources */
	struct fair_drs drs;  /* key at the parent: share with the winner */
};

/* The compact assignment of an admit decision (one allocation). */
struct sched_assignment {
	int32_t cq;
	size_t nps;
	int32_t *count;         /* [nps] */
	size_t *first;          /* [nps + 1] cell ranges */
	struct assign_cell *cells; /* [ncells] */
	size_t ncells;
	struct fr_val *usage;   /* [nusage] */
	size_t nusage;
};

struct sched {
	struct sched_opts o;
	struct tree *t;
	struct fair *fair;          /* shares of t (fair sharing) */
	uint32_t gen;               /* generation counter for caches */
	uint64_t cycle;             /* queue cycles (rounds) */
	uint64_t calls;             /* sched_cycle calls */
	uint64_t state;             /* bumped by every input */
	int64_t now;                /* last now_ms seen (cycle, tick) */
	size_t nbackoff;            /* records with qi.requeue_at_ms != 0 */
	size_t nnot_ready;          /* holders (and assumed) not PodsReady */
	int32_t ready_wait;         /* blockAdmission: the workload id told
				       WaitingForPodsReady, -1 = none */

	struct assign_flavor *flv;     /* by flavor id; names flv_idx's */
	size_t nflv, capflv;
	struct nidx flv_idx;

	struct nidx res_idx;        /* resource names; key[] by id */
	int pods_res;

	struct scohort *coh;
	size_t ncoh, capcoh;
	struct nidx coh_idx;

	struct scq *cqs;
	size_t ncq, capcq;
	struct nidx cq_idx;
	int32_t *cq_of_node;        /* tree node id -> CQ id, -1 */
	size_t ncq_of_node;

	struct slq *lqs;
	size_t nlq, caplq;
	struct nidx lq_idx;
	uint64_t park_stamp;        /* sched_cq_parked_by_lq calls */

	struct sns *ns;
	size_t nns, capns;
	struct nidx ns_idx;

	struct swl **wls;           /* owned records by id (stable: queues
				       link their qitems); NULL: free id */
	size_t nwl, capwl;          /* nwl = wl_idx.n */
	size_t nwl_rec;             /* records allocated (live + dead) */
	struct nidx wl_idx;

	/* dirty lists (ids), each entry once while its flag is set */
	int32_t *dirty_cq;
	size_t ndirty_cq, capdirty_cq;
	int32_t *dirty_lq;
	size_t ndirty_lq, capdirty_lq;
	uint8_t *coh_dirty;         /* by tree node (fair sharing) */
	size_t capcoh_dirty;
	int32_t *dirty_coh;         /* cohort tree nodes */
	size_t ndirty_coh, capdirty_coh;

	/* cycle scratch */
	struct sentry *ent;
	size_t nent, capent;
	struct assign_result res_scratch;
	struct tree_undo undo;
	int32_t *stack;
	size_t capstack;
	int32_t *mark;              /* CQ ids, for requeue walks */
	size_t nmark, capmark;
	/* workload ids flagged for the eviction and requeue checks */
	int32_t *chk;
	size_t nchk, capchk;
	int32_t nom_cq;             /* the CQ and workload of the entry */
	int32_t nom_wl;             /* being assigned (accept_preempt) */
	bool pskipped;              /* a candidate admitted in this call was
				       left out since nominate began */
	bool excl_round;            /* this round's victims are simulated
				       gone: not candidates either */
	/* the victims accept_preempt found last, for the assignment of
	 * signature acc_sig (the entry being assigned takes them) */
	struct sched_target *acc_tg;
	size_t acc_ntg;
	uint64_t acc_sig;
	/* preemption scratch (sched_preempt.c) */
	struct sched_pcand *pc;
	size_t npc, cappc;
	int32_t *ptg;               /* indexes into pc: the chosen set */
	size_t capptg;
	int32_t *ord;               /* pc indexes in candidate order, the
				       first nord of them extracted */
	size_t nord;
	int32_t *hp;                /* min-heap of the pc indexes not yet
				       extracted */
	size_t nhp, capord;
	struct fr_val *rem;
	size_t caprem;
	int *need;
	size_t capneed;
	int32_t *rvict;             /* this round's victims (wl ids) */
	size_t nrvict, caprvict;
	/* fair preemption scratch (sched_preempt.c) */
	uint64_t fp_gen;            /* bumped per question and ordering */
	uint64_t fp_pgen;           /* the current question's path mark */
	uint64_t *fp_path;          /* by node: == fp_pgen on the
				       preemptor's path to the root */
	uint64_t *fp_pruned;        /* by node: == fp_ord when pruned */
	uint64_t fp_ord;
	size_t capfp;
	struct sfq *fq;             /* target ClusterQueues */
	size_t nfq, capfq;
	uint64_t *fq_stamp;         /* by CQ id: == fp_ord when fq_idx set */
	int32_t *fq_idx;
	size_t capfqc;
	int32_t *fnext;             /* by pc index: next of its CQ's list */
	size_t capfnext;
	int32_t *fretry;            /* retry candidates (pc indexes) */
	size_t nfretry, capfretry;
	/* fair tournament scratch (sched_fair.c), by tree node id */
	struct sfnode *fn;
	size_t capfn;
	int32_t *ftouched;          /* nodes initialised this round */
	size_t nftouched, capftouched;
	int32_t *fheap;             /* the cohorts' heaps, one pool */
	size_t capfheap;
	int32_t *ftop;              /* heap of root nodes */
	size_t nftop, capftop;
	/* admissionFairSharing.resourceWeights (copied) */
	char **afs_wname;
	double *afs_w;
	size_t nafs_w;
	/* Topologies and AdmissionChecks that exist (names; values "") */
	struct smap topos;
	struct smap acs;
	/* batched requeue events (opts.requeue_batch_ms): CQ ids */
	int32_t *rq_pending;
	size_t nrq, caprq;
};

#define SWL_OF(it) ((struct swl *)(void *)((char *)(it) - \
					   offsetof(struct swl, qi)))

/* sched.c helpers used by sched_status.c and sched_cycle.c */
int32_t sched_find_cq(const struct sched *s, const char *name);
int32_t sched_find_lq(const struct sched *s, const char *name);
int32_t sched_find_wl(const struct sched *s, const char *key);
void sched_assign_env(const struct sched *s, struct assign_env *e);
/* Marks ClusterQueue (LocalQueue) id for the next sched_take_dirty;
 * id < 0 is a no-op. */
void sched_dirty_cq(struct sched *s, int32_t id);
void sched_dirty_lq(struct sched *s, int32_t id);
/* Whether r's namespace matches c's namespaceSelector (cached). */
bool sched_ns_ok(struct sched *s, struct swl *r, const struct scq *c);
/* Adds (sign 1) or removes (-1) r's part of its LocalQueue's and
 * holding ClusterQueue's counts and usage (not the tree). */
void sched_account(struct sched *s, struct swl *r, int sign);
/* Adds (removes) r->usage at r->hold_cq's tree node. */
void sched_tree_apply(struct sched *s, struct swl *r, bool add);
/* Sets r's backoff (0: none), keeping sched.nbackoff. */
void sched_set_requeue_at(struct sched *s, struct swl *r, int64_t at);
/* blockAdmission: a workload was told WaitingForPodsReady, is still
 * pending, and some holder is not PodsReady yet: no cycle runs. */
bool sched_ready_blocked(const struct sched *s);
/* Links r into (out of) its hold_cq's holder index. */
void sched_holder_link(struct sched *s, struct swl *r);
void sched_holder_unlink(struct sched *s, struct swl *r);
/* Queues r for the next cycle's eviction and requeue checks. */
void sched_flag_check(struct sched *s, struct swl *r);
/* Frees the dead record r (removed while flagged); its id becomes free. */
void sched_wl_reap(struct sched *s, struct swl *r);
/* Frees LocalQueue id's record when nothing refers to it any more (see
 * the top comment); no-op otherwise. */
void sched_lq_reap(struct sched *s, int32_t id);
/*
 * sched_preempt.c. The assigner's oracle (ctx: the sched). The victims
 * of an assignment res of preemptor p in ClusterQueue cq: a new array
 * in *out (NULL when none), the count returned. The reason of a
 * variant, and the victim's Preempted message (a new string).
 */
enum assign_preempt sched_preempt_oracle(void *ctx, const struct assign_cq *cq,
					 int32_t preemptor, int fr, int64_t val,
					 int *borrow_after);
size_t sched_preempt_targets(struct sched *s, int32_t cq, const struct swl *p,
			     const struct assign_result *res,
			     struct sched_target **out);
const char *sched_pvariant_reason(enum sched_pvariant v);
char *sched_preempt_message(const struct sched *s, const struct swl *p,
			    int32_t pcq, const struct swl *victim,
			    enum sched_pvariant v);

/*
 * sched_cycle.c, for explain: entry e (wl and cq set, the rest zero)
 * nominated on the tree as it is, with the cycle's oracle, as the next
 * call's first round would (no victims chosen yet). e's asg, tg and
 * message are the caller's to free; s->res_scratch holds the full
 * assignment until the next one.
 */
void sched_assess(struct sched *s, struct sentry *e);

/*
 * sched_fair.c: the fair sharing tournament over this round's entries
 * (s->ent[0..nent), nominated). begin builds it; next returns the entry
 * to process (-1: none left); done must follow each next once the entry
 * was processed (its usage may have changed the tree). end frees nothing
 * but forgets the round.
 */
void sched_fair_begin(struct sched *s);
int32_t sched_fair_next(struct sched *s);
void sched_fair_done(struct sched *s, int32_t ent);
/* The classical order of two entries (sched_cycle.c's sort). */
int sched_entry_cmp(const struct sentry *a, const struct sentry *b);

/* sched.c: a resource's id (interned); a LocalQueue's id, created
 * when create (else -1 when unknown). */
int32_t sched_res_id(struct sched *s, const char *name);
int32_t sched_lq_find_or_add(struct sched *s, const char *name, bool create);
int32_t sched_cq_id(struct sched *s, const char *name); /* interned */

/*
 * sched_afs.c, admission fair sharing: the weighted usage of a
 * LocalQueue; the entry penalty of r's admission pushed (admit), settled
 * into the history (seen Admitted) or dropped (left without); r's queue
 * key; the stale ClusterQueues re-keyed (round start); whether a
 * LocalQueue record carries history that must outlive its workloads.
 */
double sched_afs_usage(const struct sched *s, const struct slq *l);
void sched_afs_push(struct sched *s, struct swl *r);
void sched_afs_settle(struct sched *s, struct swl *r);
void sched_afs_drop(struct sched *s, struct swl *r);
void sched_afs_key(struct sched *s, struct swl *r);
void sched_afs_refresh(struct sched *s);
bool sched_afs_keep(const struct slq *l);

/* The name indexes and the records they name agree (sched_check). */
bool sched_index_check(const struct sched *s);

#endif
