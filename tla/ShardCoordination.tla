------------------------------ MODULE ShardCoordination ------------------------------
(***************************************************************************)
(* The shard coordination protocol of model/coord (seed 004): runs, shards, *)
(* leases with fence epochs, the bounded op-log and its replay tiers,      *)
(* split_replace, split_residual, park/unpark, the run lifecycle and       *)
(* claims with a cooldown.                                                 *)
(*                                                                         *)
(* One step of this spec is one committed transaction of the etcd backend  *)
(* (model/coord/etcd*.go), which runs the pure steps of step_shard.go and  *)
(* step_run.go; requests the coordinator refuses change nothing and are    *)
(* left out (they are stuttering steps).  Acquire is split into its read   *)
(* and its compare-and-swap commit, so that the race the mod-revision      *)
(* compare prevents (bug coord.etcd-blind-write) can happen.               *)
(*                                                                         *)
(* Time is relative: a lease holds the ticks left until its deadline (ttl) *)
(* and a claim record the ticks since the claim, so time can run forever   *)
(* in a finite state space (needed for the liveness checks).  A request    *)
(* carries its own logical time as an offset d from true time (MaxSkew;   *)
(* 0 in the model-checking configurations, the run's in trace validation). *)
(*                                                                         *)
(* Property names: catalog name "C.X" is operator C_X here.  State         *)
(* properties are invariants (INVARIANT); properties of a step are action  *)
(* properties [][A]_vars (PROPERTY); liveness properties are temporal      *)
(* formulas under the fairness of LiveSpec.  README.md maps each to its Go *)
(* checker.                                                                *)
(***************************************************************************)
EXTENDS Integers, Sequences, FiniteSets, TLC

CONSTANTS
    Workers,        \* worker ids (model values; a symmetry set)
    Tenants,        \* tenant ids
    Runs,           \* run ids
    RunTenant,      \* run -> the tenant owning it
    Manifest,       \* run -> the sequence of its root shards' key ranges (register_shards)
    ParkReasons,    \* the park reasons clients use (ParkReason discriminants)
    MaxSkew,        \* how far a request's logical time may be from true time, in ticks
    NKeys,          \* user keys are 1..NKeys; a range end of NKeys+1 is unbounded
    OpIds,          \* op ids clients use (model values; a symmetry set)
    ShardOpLogCap,  \* ShardOpLogCap of oplog.go (16 in Go)
    RunOpLogCap,    \* RunOpLogCap of oplog.go (8 in Go)
    MaxSpawned,     \* MaxSpawnedPerShard of limits.go (1024 in Go)
    LeaseDuration,  \* a run's RunConfig.LeaseDuration, in ticks
    ClaimCooldown,  \* Config.ClaimCooldown, in ticks (0: none)
    MaxFence,       \* state bound: no acquire or unpark beyond this fence, before heal
    MaxAcquires,    \* state bound: acquisitions over all shards, before heal
    MaxWrites,      \* state bound: accepted lease-gated writes over all shards, before heal
    NoWorker,       \* model value: no lease holder
    Liveness,       \* TRUE: a heal phase, after which workers behave and are fair
    EndInFlight,    \* TRUE: before heal the admin also ends runs whose shards are in flight
    Bugs            \* the injected bugs, by their model/bugs names (BUGS.md)

ASSUME LeaseDuration \in Nat \ {0} /\ ClaimCooldown \in Nat /\ NKeys \in Nat \ {0}
ASSUME ShardOpLogCap \in Nat \ {0} /\ RunOpLogCap \in Nat \ {0} /\ MaxFence \in Nat \ {0}
ASSUME RunTenant \in [Runs -> Tenants] /\ Liveness \in BOOLEAN /\ MaxSkew \in Nat
ASSUME EndInFlight \in BOOLEAN

Has(bug) == bug \in Bugs

VARIABLES
    runs,       \* run id -> RunRecord: [status, opLog]
    shards,     \* shard id -> ShardRecord (the domain grows as shards are created)
    held,       \* leases workers received (lease.go's Lease, deadline left out), with ghost grant
    inflight,   \* worker -> its acquire between read and compare-and-swap commit
    claims,     \* worker -> claim record (etcd_claim.go): ticks since its last claim
    pending,    \* children written by split_replace's second transaction (bug only)
    grant,      \* ghost: shard -> number of acquisitions so far (ownership periods)
    progress,   \* ghost: shard -> the last lease-gated write the shard accepted
    healed,     \* the heal phase has begun (only when Liveness)
    writes      \* accepted lease-gated writes before heal (for the MaxWrites bound)

vars == <<runs, shards, held, inflight, claims, pending, grant, progress, healed, writes>>

-----------------------------------------------------------------------------
(* Values *)

ShardStatus == {"Active", "Done", "Split", "Parked"}
RunStatus == {"Initializing", "Active", "Done", "Failed", "Cancelled"}
RunTerminal(st) == st \in {"Done", "Failed", "Cancelled"}

Inf == NKeys + 1                      \* the unbounded range end
Keys == 1..NKeys
NoKey == 0                            \* a cursor without last_key
Range(s, e) == [start |-> s, end |-> e]
WellFormed(sp) == sp.start < sp.end
Contains(sp, k) == sp.start <= k /\ k < sp.end
WholeRange == Range(1, Inf)

\* For configurations: every run owned by one tenant, with one root shard
\* over the whole keyspace.
FirstTenantRuns == [r \in Runs |-> CHOOSE t \in Tenants : TRUE]
WholeKeyspace == [r \in Runs |-> <<WholeRange>>]

\* Shard ids: the i-th root shard of run r's manifest is <<r, i>>; the j-th
\* shard a shard spawned (children and residuals, in creation order) is its
\* id with j appended.  Go derives the id from (run, parent, op, kind,
\* index) with blake3; the index alone already makes it unique.
RunOf(s) == s[1]
TenantOf(s) == RunTenant[s[1]]
RootOf(s) == SubSeq(s, 1, 2)
IsDerived(s) == Len(s) > 2
ParentOf(s) == SubSeq(s, 1, Len(s) - 1)
ChildId(s, i) == Append(s, i)

\* Requests carry their own logical time: d ticks from true time (d in
\* Skews; only 0 without skew).  A lease's ttl is its deadline minus true
\* time, so it is live for a request at skew d when ttl > d; below Dead it
\* is dead for every request and stays at Dead.
Skews == -MaxSkew..MaxSkew
Dead == -MaxSkew
NoLease == [set |-> FALSE, owner |-> NoWorker, ttl |-> Dead]
LeaseOf(w, d) == [set |-> TRUE, owner |-> w, ttl |-> LeaseDuration + d]
LiveAt(h, d) == h.set /\ h.ttl > d
Live(h) == LiveAt(h, 0)

\* Op-log entries: (op, kind, payload, result); the payload stands for the
\* payload hash and is always a tuple of integers.  result is OpResult:
\* "done" (OpCompleted), "refused" (OpError: the lease holder's request was
\* refused for its payload, and a retry answers the same refusal) or
\* "superseded" (OpSuperseded: a checkpoint of a shard that has since ended).
Entry(op, kind, payload) == [op |-> op, kind |-> kind, payload |-> payload, result |-> "done"]
RefusalEntry(op, kind, payload) == [Entry(op, kind, payload) EXCEPT !.result = "refused"]
Entries(log) == {log[i] : i \in 1..Len(log)}
FindOp(log, op) == {e \in Entries(log) : e.op = op}
\* supersedeCheckpoints: a shard that ends (complete, park, split_replace)
\* marks its logged checkpoints superseded.
Supersede(log) == [i \in 1..Len(log) |->
                     IF log[i].kind = "checkpoint" /\ log[i].result = "done"
                     THEN [log[i] EXCEPT !.result = "superseded"] ELSE log[i]]
Remove(log, op) == SelectSeq(log, LAMBDA e : e.op # op)
\* recordShardOp / recordRunOp: forget op (only a let-through conflict has
\* it), then push, evicting the oldest entry when full.
Push(log, e, cap) ==
    LET l == Remove(log, e.op)
    IN IF Len(l) < cap THEN Append(l, e) ELSE Append(Tail(l), e)

\* ClassifyOp of idempotency.go.
Classify(log, op, kind, payload) ==
    LET found == FindOp(log, op) IN
    IF found = {} THEN "new"
    ELSE IF \E e \in found : e.kind = kind /\ e.payload = payload THEN "replay"
    ELSE IF Has("coord.opid-conflict-ignored") THEN "new"
    ELSE "conflict"

NoFlight == [busy |-> FALSE]
NoReason == -1
\* A claim record: ticks since the worker's last claim, kept while the
\* cooldown runs (afterwards it is as good as none), and the ghost fact
\* that this claim was made while the previous one's cooldown still ran.
NoClaim == [set |-> FALSE, age |-> 0, early |-> FALSE]
NoProgress == [high |-> 0, late |-> FALSE, stale |-> FALSE, foreign |-> FALSE]

-----------------------------------------------------------------------------
(* Initial state: every run created (create_run), none registered. *)

Init ==
    /\ runs = [r \in Runs |-> [status |-> "Initializing", opLog |-> <<>>]]
    /\ shards = <<>>        \* the empty function: no shard exists
    /\ held = {}
    /\ inflight = [w \in Workers |-> NoFlight]
    /\ claims = [c \in Tenants \X Workers |-> NoClaim]
    /\ pending = {}
    /\ grant = <<>>
    /\ progress = <<>>
    /\ healed = FALSE
    /\ writes = 0

Faulty == ~healed            \* faults and client mistakes happen only before heal

-----------------------------------------------------------------------------
(* Writing a shard record.  Every write bumps the record's mod revision in *)
(* etcd: an acquire that read s before it fails its compare.               *)

Touch(s) ==
    inflight' = [w \in Workers |->
                    IF inflight[w].busy /\ inflight[w].shard = s
                    THEN [inflight[w] EXCEPT !.stale = TRUE] ELSE inflight[w]]

Write(s, rec) ==
    /\ shards' = [shards EXCEPT ![s] = rec]
    /\ Touch(s)

\* Adds new shard records (children, residuals, roots) to the domain.
Extend(f, new) == [x \in DOMAIN f \cup DOMAIN new |-> IF x \in DOMAIN new THEN new[x] ELSE f[x]]

NewShard(sp, parent) ==
    [spec |-> sp, status |-> "Active", parkReason |-> NoReason, lease |-> NoLease,
     fence |-> 1, cursor |-> NoKey, parent |-> parent, spawned |-> <<>>, opLog |-> <<>>]

-----------------------------------------------------------------------------
(* Run management (step_run.go).  Admin requests are not lease-gated. *)

\* The admin's decision to end a run: in the liveness model it acts like the
\* scenario's admin (only once every shard of the run has settled).
Settled(r) == \A s \in DOMAIN shards : RunOf(s) = r => shards[s].status # "Active"
AnyParked(r) == \E s \in DOMAIN shards : RunOf(s) = r /\ shards[s].status = "Parked"

RegisterShards(r, op) ==
    LET run == runs[r] IN
    /\ Classify(run.opLog, op, "register_shards", <<>>) = "new"
    /\ run.status = "Initializing"
    /\ runs' = [runs EXCEPT ![r] = [status |-> "Active",
                   opLog |-> Push(run.opLog, Entry(op, "register_shards", <<>>), RunOpLogCap)]]
    /\ LET roots == [id \in {<<r, i>> : i \in 1..Len(Manifest[r])} |-> NewShard(Manifest[r][id[2]], <<>>)]
       IN /\ shards' = Extend(shards, roots)
          /\ grant' = Extend(grant, [id \in DOMAIN roots |-> 0])
          /\ progress' = Extend(progress, [id \in DOMAIN roots |-> NoProgress])
    /\ UNCHANGED <<held, inflight, claims, pending, healed, writes>>

\* StepRunTransition: complete_run (Active -> Done), fail_run (Active ->
\* Failed), cancel_run (Initializing or Active -> Cancelled).  Bug
\* coord.run-reopen lets complete_run move any terminal run to Done.
RunAllowed(kind, st) ==
    CASE kind = "complete_run" -> st = "Active" \/ (RunTerminal(st) /\ Has("coord.run-reopen"))
      [] kind = "fail_run"     -> st = "Active"
      [] kind = "cancel_run"   -> st \in {"Initializing", "Active"}

RunTarget(kind) ==
    CASE kind = "complete_run" -> "Done" [] kind = "fail_run" -> "Failed" [] kind = "cancel_run" -> "Cancelled"

\* An acquire compares the run record's revision in its commit too (the run
\* must not end between its read and its commit): a run transition fails
\* the commits of acquires in flight on the run's shards.
RunTransition(r, kind, op) ==
    LET run == runs[r] IN
    /\ Classify(run.opLog, op, kind, <<>>) = "new"
    /\ RunAllowed(kind, run.status)
    /\ runs' = [runs EXCEPT ![r] = [status |-> RunTarget(kind),
                   opLog |-> Push(run.opLog, Entry(op, kind, <<>>), RunOpLogCap)]]
    /\ inflight' = [w \in Workers |->
                      IF inflight[w].busy /\ RunOf(inflight[w].shard) = r
                      THEN [inflight[w] EXCEPT !.stale = TRUE] ELSE inflight[w]]
    /\ UNCHANGED <<shards, held, claims, pending, grant, progress, healed, writes>>

\* What the admin asks for, as the scenario's admin does: it ends a run once
\* every shard has settled (completes it when none is parked, fails it
\* otherwise) and cancels only runs not yet registered.  Before heal it
\* slips: it may send either to a run that already ended, and (with
\* EndInFlight, a configuration of its own: it multiplies the state space)
\* end a run whose shards are still in flight.
Slip(r) == Faulty /\ (RunTerminal(runs[r].status) \/ EndInFlight)

CompleteRun(r, op) ==
    /\ (Settled(r) /\ ~AnyParked(r)) \/ Slip(r)
    /\ RunTransition(r, "complete_run", op)

FailRun(r, op) ==
    /\ (Settled(r) /\ AnyParked(r)) \/ Slip(r)
    /\ RunTransition(r, "fail_run", op)

CancelRun(r, op) ==
    /\ runs[r].status = "Initializing" \/ Slip(r)
    /\ RunTransition(r, "cancel_run", op)

-----------------------------------------------------------------------------
(* Acquire (StepAcquire), as the etcd backend runs it: read the record,    *)
(* compute, then commit comparing the record's mod revision.  Bug          *)
(* coord.etcd-blind-write commits without the compare.                     *)

AcquireNext(rec, w, d) ==
    [rec EXCEPT !.fence = IF Has("coord.no-fence-bump-on-acquire") THEN @ ELSE @ + 1,
                !.lease = LeaseOf(w, d)]

\* A shard of a run that ended is refused to acquire and to every
\* lease-gated operation (bug coord.ended-run-accepts skips the check).
RunOpen(s) == ~RunTerminal(runs[RunOf(s)].status) \/ Has("coord.ended-run-accepts")

\* Seed 004 leases only an unleased shard or one whose lease expired: a
\* live lease refuses the acquire whoever holds it, the caller included
\* (bug coord.acquire-live-lease skips this for another worker's lease,
\* coord.acquire-own-live-lease for the caller's own).
AcquireOK(s, w, d) ==
    LET rec == shards[s] IN
    /\ RunOpen(s)
    /\ rec.status = "Active" \/ Has("coord.acquire-terminal")
    /\ \/ ~LiveAt(rec.lease, d)
       \/ rec.lease.owner # w /\ Has("coord.acquire-live-lease")
       \/ rec.lease.owner = w /\ Has("coord.acquire-own-live-lease")

\* State bound (not protocol): fences and ownership periods stay below
\* MaxFence before heal; after heal the well-behaved workers bound them.
RECURSIVE SumGrants(_)
SumGrants(D) == IF D = {} THEN 0 ELSE LET x == CHOOSE y \in D : TRUE IN grant[x] + SumGrants(D \ {x})
Acquisitions == SumGrants(DOMAIN grant)
FenceRoom(s) == healed \/ shards[s].fence < MaxFence
Bounded(s) == FenceRoom(s) /\ (healed \/ Acquisitions < MaxAcquires)

AcquireRead(w, s, d) ==
    /\ Faulty
    /\ ~inflight[w].busy
    /\ s \in DOMAIN shards
    /\ Bounded(s)
    /\ AcquireOK(s, w, d)
    /\ inflight' = [inflight EXCEPT ![w] = [busy |-> TRUE, shard |-> s, stale |-> FALSE,
                                            next |-> AcquireNext(shards[s], w, d)]]
    /\ UNCHANGED <<runs, shards, held, claims, pending, grant, progress, healed, writes>>

\* The granted lease; delivered = FALSE when the answer is lost.
\* A worker's copy of a lease.  Its deadline is left out: validation judges
\* the record's lease, never the presented deadline, and C.MutualExclusion
\* is judged on the record (a live lease is never handed to another worker).
NewLease(s, w, rec, g) == [shard |-> s, owner |-> w, fence |-> rec.fence, grant |-> g]

AcquireCommit(w, delivered) ==
    LET f == inflight[w]
        s == f.shard
        g == grant[s] + 1
    IN
    /\ f.busy
    /\ ~f.stale \/ Has("coord.etcd-blind-write")
    /\ delivered \/ Faulty
    /\ shards' = [shards EXCEPT ![s] = f.next]
    /\ inflight' = [x \in Workers |->
                      IF x = w THEN NoFlight
                      ELSE IF inflight[x].busy /\ inflight[x].shard = s
                           THEN [inflight[x] EXCEPT !.stale = TRUE] ELSE inflight[x]]
    /\ grant' = [grant EXCEPT ![s] = g]
    /\ held' = IF delivered THEN held \cup {NewLease(s, w, f.next, g)} ELSE held
    /\ UNCHANGED <<runs, claims, pending, progress, healed, writes>>

\* The commit's compare failed (or the request was lost): nothing changes
\* but the worker's memory of the attempt.
AcquireFail(w) ==
    /\ inflight[w].busy
    /\ inflight' = [inflight EXCEPT ![w] = NoFlight]
    /\ UNCHANGED <<runs, shards, held, claims, pending, grant, progress, healed, writes>>

\* A behaving worker holds s when it has the lease of s's current ownership
\* period, unexpired; it is idle when it holds no Active shard.
Holds(w, s) == /\ Live(shards[s].lease) /\ shards[s].lease.owner = w
               /\ \E l \in held : l.owner = w /\ l.shard = s /\ l.grant = grant[s]
Idle(w) == ~\E s \in DOMAIN shards : shards[s].status = "Active" /\ Holds(w, s)

\* ClaimNextAvailable: CheckClaimCooldown on the worker's claim record, then
\* acquire an available shard of an Active run, writing the claim record in
\* the same transaction.  (Go takes the first available shard in id order;
\* any is taken here.)
AvailableAt(s, d) ==
    /\ s \in DOMAIN shards
    /\ runs[RunOf(s)].status = "Active"
    /\ shards[s].status = "Active"
    /\ ~LiveAt(shards[s].lease, d)
Available(s) == AvailableAt(s, 0)
\* What claim_next_available takes: an available shard (bug
\* coord.claim-skips-expired tests only that no lease is set, so a shard
\* whose holder died is never claimed again).
ClaimableAt(s, d) ==
    IF Has("coord.claim-skips-expired")
    THEN AvailableAt(s, d) /\ ~shards[s].lease.set
    ELSE AvailableAt(s, d)

\* Claim records are per (tenant, worker).  The cooldown has passed for a
\* request at skew d when age + d >= ClaimCooldown; a record past it for
\* every request is as good as none.
CooldownAt(c, d) == ~c.set \/ c.age + d >= ClaimCooldown
CooldownOK(c) == CooldownAt(c, 0)
ClaimRec(age) == IF ClaimCooldown = 0 \/ age >= ClaimCooldown + MaxSkew THEN NoClaim
                 ELSE [set |-> TRUE, age |-> age, early |-> FALSE]

ClaimNextAvailable(w, s, delivered, d) ==
    LET g == grant[s] + 1
        next == AcquireNext(shards[s], w, d)
        c == <<TenantOf(s), w>>
    IN
    /\ Faulty \/ Idle(w)
    /\ CooldownAt(claims[c], d) \/ Has("coord.claim-ignores-cooldown")
    /\ ClaimableAt(s, d)
    /\ Bounded(s)
    /\ delivered \/ Faulty
    /\ Write(s, next)
    /\ grant' = [grant EXCEPT ![s] = g]
    /\ claims' = [claims EXCEPT ![c] = IF ClaimCooldown = 0 THEN NoClaim
                                       ELSE [ClaimRec(-d) EXCEPT !.early = ~CooldownAt(claims[c], d)]]
    /\ held' = IF delivered THEN held \cup {NewLease(s, w, next, g)} ELSE held
    /\ UNCHANGED <<runs, pending, progress, healed, writes>>

-----------------------------------------------------------------------------
(* Lease-gated operations.  A worker presents a lease it holds (perhaps an *)
(* old one: a zombie) as caller tenant `caller` (a client mistake when it  *)
(* is not the lease's tenant).                                             *)

\* CheckLeaseScope then ValidateLease (lease.go); bugs coord.no-tenant-check
\* and coord.no-fence-check skip their comparisons.
LeaseValid(rec, l, caller, d) ==
    LET t == TenantOf(l.shard) IN
    /\ (caller = t) \/ Has("coord.no-tenant-check")
    /\ RunOpen(l.shard)
    /\ rec.status = "Active"
    /\ (l.fence = rec.fence) \/ Has("coord.no-fence-check")
    /\ LiveAt(rec.lease, d)
    /\ rec.lease.owner = l.owner

\* The ghost `progress` of a shard after it accepted a lease-gated write
\* from ownership period l.grant: the latest period that has written
\* (high), and three facts about this write: it came from an older period
\* than one that already wrote (late), with a fence below the shard's
\* (stale), or from a request scoped to another tenant (foreign).
AcceptedRec(s, l, caller) ==
    [high |-> IF l.grant > progress[s].high THEN l.grant ELSE progress[s].high,
     late |-> l.grant < progress[s].high,
     stale |-> l.fence < shards[s].fence,
     foreign |-> caller # TenantOf(s)]
Accepted(s, l, caller) == progress' = [progress EXCEPT ![s] = AcceptedRec(s, l, caller)]

\* State bound (not protocol): at most MaxWrites lease-gated writes before heal.
Spend == /\ healed \/ writes < MaxWrites
         /\ writes' = IF healed THEN writes ELSE writes + 1

\* Requests a worker can make: before heal anything it holds, as any
\* tenant; after heal only its current lease, as its own tenant.
Presentable(l, caller) ==
    /\ l.shard \in DOMAIN shards
    /\ Faulty \/ (caller = TenantOf(l.shard) /\ l.grant = grant[l.shard] /\ Holds(l.owner, l.shard))

StepRenew(l, caller, d) ==
    LET s == l.shard
        rec == shards[s]
    IN
    /\ Faulty
    /\ Presentable(l, caller)
    /\ LeaseValid(rec, l, caller, d)
    /\ Write(s, [rec EXCEPT !.lease = LeaseOf(l.owner, d)])
    /\ Accepted(s, l, caller)
    /\ UNCHANGED <<runs, held, claims, pending, grant, healed>>
    /\ Spend

\* CheckCursorUpdate of cursor.go; bugs skip the regression and bounds rules.
CursorOK(sp, old, new, requireKey) ==
    IF new = NoKey
    THEN ~requireKey /\ old = NoKey
    ELSE /\ old = NoKey \/ new >= old \/ Has("coord.cursor-regression")
         /\ Contains(sp, new) \/ Has("coord.cursor-out-of-bounds")

\* The common shape of an idempotent lease-gated step: classify first (a
\* replay or a conflict changes nothing), then the lease, then op's checks.
Gate(s, l, caller, d, op, kind, payload) ==
    /\ Presentable(l, caller)
    /\ LeaseValid(shards[s], l, caller, d)
    /\ Classify(shards[s].opLog, op, kind, payload) = "new"

Logged(rec, op, kind, payload) == Push(rec.opLog, Entry(op, kind, payload), ShardOpLogCap)
\* The op-log of a shard that ends with op: earlier checkpoints superseded.
Ending(rec, op, kind, payload) ==
    Push(Supersede(rec.opLog), Entry(op, kind, payload), ShardOpLogCap)

StepCheckpoint(l, caller, d, key, op) ==
    LET s == l.shard
        rec == shards[s]
    IN
    /\ Faulty
    /\ Gate(s, l, caller, d, op, "checkpoint", <<key>>)
    /\ CursorOK(rec.spec, rec.cursor, key, TRUE)
    /\ Write(s, [rec EXCEPT !.cursor = key, !.opLog = Logged(rec, op, "checkpoint", <<key>>)])
    /\ Accepted(s, l, caller)
    /\ UNCHANGED <<runs, held, claims, pending, grant, healed>>
    /\ Spend

\* complete: final cursor, lease released (bug coord.complete-keeps-lease
\* keeps it), Done.
StepComplete(l, caller, d, key, op) ==
    LET s == l.shard
        rec == shards[s]
    IN
    /\ Gate(s, l, caller, d, op, "complete", <<key>>)
    /\ CursorOK(rec.spec, rec.cursor, key, FALSE)
    /\ Write(s, [rec EXCEPT !.cursor = key, !.status = "Done",
                            !.lease = IF Has("coord.complete-keeps-lease") THEN @ ELSE NoLease,
                            !.opLog = Ending(rec, op, "complete", <<key>>)])
    /\ Accepted(s, l, caller)
    /\ UNCHANGED <<runs, held, claims, pending, grant, healed>>
    /\ Spend

StepPark(l, caller, d, reason, op) ==
    LET s == l.shard
        rec == shards[s]
    IN
    /\ Faulty
    /\ Gate(s, l, caller, d, op, "park", <<reason>>)
    /\ reason \in ParkReasons
    /\ Write(s, [rec EXCEPT !.status = "Parked", !.lease = NoLease,
                            !.parkReason = IF Has("coord.park-drops-reason") THEN NoReason ELSE reason,
                            !.opLog = Ending(rec, op, "park", <<reason>>)])
    /\ Accepted(s, l, caller)
    /\ UNCHANGED <<runs, held, claims, pending, grant, healed>>
    /\ Spend

\* coverage of split.go: pieces, in key order, exactly partition old; bug
\* coord.split-gap lets gaps through (never overlaps or pieces outside).
Coverage(old, pieces) ==
    /\ \A i \in 1..Len(pieces) : WellFormed(pieces[i])
    /\ pieces[1].start >= old.start
    /\ pieces[Len(pieces)].end <= old.end
    /\ \A i \in 1..Len(pieces) - 1 : pieces[i].end <= pieces[i + 1].start
    /\ \/ Has("coord.split-gap")
       \/ /\ pieces[1].start = old.start
          /\ pieces[Len(pieces)].end = old.end
          /\ \A i \in 1..Len(pieces) - 1 : pieces[i].end = pieces[i + 1].start

\* Plans a client may send for a shard of range sp: two ranges inside it, in
\* key order (overlapping or outside plans are refused under every bug).
AllPlans == {<<a, b, c, d>> \in (1..Inf) \X (1..Inf) \X (1..Inf) \X (1..Inf) : a < b /\ b <= c /\ c < d}
TwoPieces(sp) == {p \in AllPlans : sp.start <= p[1] /\ p[4] <= sp.end}
\* A plan is a flat tuple of range bounds: <<start1, end1, start2, end2, ...>>.
Pieces(p) == [i \in 1..(Len(p) \div 2) |-> Range(p[2 * i - 1], p[2 * i])]

\* The plan checks of split_replace and split_residual (split.go).
SplitReplaceOK(rec, plan) ==
    /\ Len(Pieces(plan)) >= 2
    /\ Coverage(rec.spec, Pieces(plan))
    /\ Len(rec.spawned) + Len(Pieces(plan)) <= MaxSpawned
SplitResidualOK(rec, plan) ==
    /\ Len(Pieces(plan)) = 2
    /\ Pieces(plan)[1].start = rec.spec.start
    /\ Coverage(rec.spec, Pieces(plan))
    /\ rec.cursor = NoKey \/ Contains(Pieces(plan)[1], rec.cursor)
    /\ Len(rec.spawned) + 1 <= MaxSpawned

\* split_replace: validate, retire the parent as Split, create the children.
\* Bug coord.split-two-txns writes the parent first and the children in a
\* second transaction (SplitWriteChildren).
StepSplitReplace(l, caller, d, plan, op) ==
    LET s == l.shard
        rec == shards[s]
        n == Len(rec.spawned)
        m == Len(Pieces(plan))
        new == [k \in {ChildId(s, n + i) : i \in 1..m} |-> NewShard(Pieces(plan)[k[Len(k)] - n], s)]
    IN
    /\ Faulty
    /\ Gate(s, l, caller, d, op, "split_replace", plan)
    /\ SplitReplaceOK(rec, plan)
    /\ LET parent == [rec EXCEPT !.status = "Split", !.lease = NoLease,
                                 !.spawned = @ \o [i \in 1..m |-> [op |-> op, kind |-> "child"]],
                                 !.opLog = Ending(rec, op, "split_replace", plan)]
           done == [progress EXCEPT ![s] = AcceptedRec(s, l, caller)]
       IN IF Has("coord.split-two-txns")
          THEN /\ Write(s, parent)
               /\ pending' = pending \cup {[id |-> k, rec |-> new[k]] : k \in DOMAIN new}
               /\ progress' = done
               /\ UNCHANGED grant
          ELSE /\ shards' = Extend([shards EXCEPT ![s] = parent], new)
               /\ Touch(s)
               /\ grant' = Extend(grant, [k \in DOMAIN new |-> 0])
               /\ progress' = Extend(done, [k \in DOMAIN new |-> NoProgress])
               /\ UNCHANGED pending
    /\ UNCHANGED <<runs, held, claims, healed>>
    /\ Spend

\* The second transaction of the wrong two-transaction split_replace.
SplitWriteChildren(c) ==
    /\ c \in pending
    /\ pending' = pending \ {c}
    /\ shards' = Extend(shards, c.id :> c.rec)
    /\ grant' = Extend(grant, c.id :> 0)
    /\ progress' = Extend(progress, c.id :> NoProgress)
    /\ UNCHANGED <<runs, held, inflight, claims, healed, writes>>

\* split_residual's second replay tier: a residual this op id spawned,
\* found in the spawned list after the op-log evicted the op.
ResidualsOf(rec, s, op) ==
    {ChildId(s, i) : i \in {j \in 1..Len(rec.spawned) : rec.spawned[j] = [op |-> op, kind |-> "residual"]}}

\* The probe: a residual op spawned, when the op-log evicted op, makes the
\* request a replay when it starts where plan's does, otherwise a conflict
\* (executed again under coord.opid-conflict-ignored).
ProbeNew(s, plan, op) ==
    LET probe == ResidualsOf(shards[s], s, op) IN
    probe = {} \/ (Has("coord.opid-conflict-ignored")
                   /\ \A p \in probe : shards[p].spec.start # Pieces(plan)[2].start)

\* split_residual: the parent keeps its start (and its lease) and shrinks to
\* plan's first range; a new residual shard gets the second.
StepSplitResidual(l, caller, d, plan, op) ==
    LET s == l.shard
        rec == shards[s]
        n == Len(rec.spawned)
        rid == ChildId(s, n + 1)
    IN
    /\ Faulty
    /\ Presentable(l, caller)
    /\ Classify(rec.opLog, op, "split_residual", plan) = "new"
    /\ ProbeNew(s, plan, op)
    /\ LeaseValid(rec, l, caller, d)
    /\ SplitResidualOK(rec, plan)
    /\ shards' = Extend([shards EXCEPT ![s] =
                          [rec EXCEPT !.spec = Pieces(plan)[1],
                                      !.spawned = Append(@, [op |-> op, kind |-> "residual"]),
                                      !.opLog = Logged(rec, op, "split_residual", plan)]],
                        rid :> NewShard(Pieces(plan)[2], s))
    /\ Touch(s)
    /\ grant' = Extend(grant, rid :> 0)
    /\ progress' = Extend([progress EXCEPT ![s] = AcceptedRec(s, l, caller)], rid :> NoProgress)
    /\ UNCHANGED <<runs, held, claims, pending, healed>>
    /\ Spend

\* The payload checks of the lease-gated steps, after the lease (a refusal
\* here is logged: OpError).
PayloadOK(rec, kind, payload) ==
    CASE kind = "checkpoint"     -> CursorOK(rec.spec, rec.cursor, payload[1], TRUE)
      [] kind = "complete"       -> CursorOK(rec.spec, rec.cursor, payload[1], FALSE)
      [] kind = "park"           -> payload[1] \in ParkReasons
      [] kind = "split_replace"  -> SplitReplaceOK(rec, payload)
      [] kind = "split_residual" -> SplitResidualOK(rec, payload)

\* A lease holder's request refused for its payload (a cursor that is
\* missing, regressing or out of bounds, a plan that does not partition the
\* range, the spawn cap, an unknown park reason): the refusal is logged, so
\* a retry of the op answers it again, and nothing else changes.  (A
\* split_residual whose op id already spawned a residual is a replay or a
\* conflict, never refused here.)
StepRefuse(l, caller, d, kind, payload, op) ==
    LET s == l.shard
        rec == shards[s]
    IN
    /\ Faulty
    /\ Gate(s, l, caller, d, op, kind, payload)
    /\ kind = "split_residual" => ProbeNew(s, payload, op)
    /\ ~PayloadOK(rec, kind, payload)
    /\ Write(s, [rec EXCEPT !.opLog = Push(rec.opLog, RefusalEntry(op, kind, payload), ShardOpLogCap)])
    /\ UNCHANGED <<runs, held, claims, pending, grant, progress, healed>>
    /\ Spend

\* unpark_shard (admin): Parked -> Active with a raised fence and no lease,
\* only while the run is Active.  Bug coord.unpark-done accepts Done.
StepUnpark(s, op) ==
    LET rec == shards[s] IN
    /\ s \in DOMAIN shards
    /\ FenceRoom(s)
    /\ Classify(rec.opLog, op, "unpark", <<>>) = "new"
    /\ runs[RunOf(s)].status = "Active"
    /\ \/ /\ rec.status = "Parked" \/ (rec.status = "Done" /\ Has("coord.unpark-done"))
          /\ Write(s, [rec EXCEPT !.status = "Active", !.parkReason = NoReason, !.lease = NoLease,
                                  !.fence = @ + 1, !.opLog = Logged(rec, op, "unpark", <<>>)])
       \* bug coord.unpark-bumps-first: the fence and the op-log are written
       \* before the status check refuses a Done or Split shard
       \/ /\ rec.status \in {"Done", "Split"} /\ Has("coord.unpark-bumps-first")
          /\ ~(rec.status = "Done" /\ Has("coord.unpark-done"))
          /\ Write(s, [rec EXCEPT !.fence = @ + 1, !.opLog = Logged(rec, op, "unpark", <<>>)])
    /\ UNCHANGED <<runs, held, claims, pending, grant, progress, healed, writes>>

-----------------------------------------------------------------------------
(* Time and the heal phase. *)

\* n ticks of true time: ttls fall (to Dead at most), claim records age.
TickLease(h, n) == IF h.ttl - n > Dead THEN [h EXCEPT !.ttl = @ - n] ELSE [h EXCEPT !.ttl = Dead]
TickClaim(c, n) == IF ~c.set THEN c
                   ELSE LET r == ClaimRec(c.age + n) IN IF r.set THEN [r EXCEPT !.early = c.early] ELSE r
ClaimKeys == Tenants \X Workers

Timed == \/ \E s \in DOMAIN shards : shards[s].lease.ttl > Dead
         \/ \E c \in ClaimKeys : claims[c].set

\* After heal time passes only while something waits for it: a lease no
\* behaving worker holds (its holder crashed, or the answer was lost), or an
\* idle worker's cooldown.  Leases in a behaving worker's hand do not run
\* out from under it (it renews in time in the Go world).
Orphan(s) == Live(shards[s].lease) /\ ~Holds(shards[s].lease.owner, s)
TimeNeeded ==
    \/ \E s \in DOMAIN shards : Orphan(s)
    \/ \E c \in ClaimKeys : Idle(c[2]) /\ ~CooldownOK(claims[c]) /\ \E s \in DOMAIN shards : Available(s)

TickBy(n) ==
    /\ shards' = [s \in DOMAIN shards |-> [shards[s] EXCEPT !.lease = TickLease(@, n)]]
    /\ inflight' = [w \in Workers |-> IF inflight[w].busy
                                      THEN [inflight[w] EXCEPT !.next.lease = TickLease(@, n)]
                                      ELSE inflight[w]]
    /\ claims' = [c \in ClaimKeys |-> TickClaim(claims[c], n)]
    /\ UNCHANGED <<runs, held, pending, grant, progress, healed, writes>>

Tick ==
    /\ Timed
    /\ healed => TimeNeeded
    /\ TickBy(1)

Heal ==
    /\ Liveness /\ ~healed
    /\ healed' = TRUE
    /\ UNCHANGED <<runs, shards, held, inflight, claims, pending, grant, progress, writes>>

-----------------------------------------------------------------------------
(* The next-state relation. *)

Presented == {<<l, t>> : l \in held, t \in Tenants}

Next ==
    \/ \E r \in Runs, op \in OpIds :
          \/ RegisterShards(r, op)
          \/ CompleteRun(r, op) \/ FailRun(r, op) \/ CancelRun(r, op)
    \/ \E w \in Workers, s \in DOMAIN shards, d \in Skews : AcquireRead(w, s, d)
    \/ \E w \in Workers, dl \in BOOLEAN : AcquireCommit(w, dl)
    \/ \E w \in Workers : AcquireFail(w)
    \/ \E w \in Workers, s \in DOMAIN shards, dl \in BOOLEAN, d \in Skews : ClaimNextAvailable(w, s, dl, d)
    \/ \E lt \in Presented, d \in Skews :
          LET l == lt[1]  t == lt[2] IN
          /\ l.shard \in DOMAIN shards
          /\ \/ StepRenew(l, t, d)
             \/ \E op \in OpIds :
                  \/ \E k \in Keys : StepCheckpoint(l, t, d, k, op)
                  \/ \E k \in {NoKey} \cup Keys : StepComplete(l, t, d, k, op)
                  \/ \E reason \in ParkReasons : StepPark(l, t, d, reason, op)
                  \/ \E p \in TwoPieces(shards[l.shard].spec) :
                        \/ StepSplitReplace(l, t, d, p, op) \/ StepSplitResidual(l, t, d, p, op)
                        \/ StepRefuse(l, t, d, "split_replace", p, op)
                        \/ StepRefuse(l, t, d, "split_residual", p, op)
                  \/ \E k \in Keys : StepRefuse(l, t, d, "checkpoint", <<k>>, op)
                  \/ \E k \in {NoKey} \cup Keys : StepRefuse(l, t, d, "complete", <<k>>, op)
    \/ \E c \in pending : SplitWriteChildren(c)
    \/ \E s \in DOMAIN shards, op \in OpIds : StepUnpark(s, op)
    \/ Tick
    \/ Heal

Spec == Init /\ [][Next]_vars

\* Workers and op ids are interchangeable (safety configurations only).
Symmetry == Permutations(Workers) \cup Permutations(OpIds)

-----------------------------------------------------------------------------
(* Fairness of the heal phase: behaving workers claim when idle and        *)
(* complete what they hold, the admin registers, unparks and ends runs,    *)
(* children of a two-transaction split get written, time passes when       *)
(* something waits for it.                                                 *)

FreshOp(log) == {op \in OpIds : FindOp(log, op) = {}}

HealedClaim(w) ==
    /\ healed /\ Idle(w)
    /\ \E s \in DOMAIN shards : ClaimNextAvailable(w, s, TRUE, 0)

HealedComplete(w) ==
    /\ healed
    /\ \E l \in held :
         /\ l.owner = w /\ l.shard \in DOMAIN shards
         /\ \E op \in FreshOp(shards[l.shard].opLog) :
              StepComplete(l, TenantOf(l.shard), 0, shards[l.shard].cursor, op)

HealedAdmin(r) ==
    /\ healed
    /\ \E op \in FreshOp(runs[r].opLog) :
         \/ RegisterShards(r, op)
         \/ CompleteRun(r, op)
         \/ FailRun(r, op)
         \/ \E s \in DOMAIN shards : RunOf(s) = r /\ StepUnpark(s, op)

LiveSpec ==
    /\ Spec
    /\ WF_vars(Heal)
    /\ WF_vars(healed /\ Tick)
    /\ \A w \in Workers : WF_vars(HealedClaim(w)) /\ WF_vars(HealedComplete(w))
                          /\ WF_vars(healed /\ AcquireFail(w))
    /\ \A r \in Runs : WF_vars(HealedAdmin(r))
    /\ WF_vars(\E c \in pending : SplitWriteChildren(c))

-----------------------------------------------------------------------------
(* Types *)

RangeT == [start : 1..Inf, end : 1..Inf]
LeaseT == [set : BOOLEAN, owner : Workers \cup {NoWorker}, ttl : Dead..(LeaseDuration + MaxSkew)]

TypeOK ==
    /\ \A r \in DOMAIN runs : runs[r].status \in RunStatus /\ Len(runs[r].opLog) <= RunOpLogCap
    /\ \A s \in DOMAIN shards :
         LET rec == shards[s] IN
         /\ rec.spec \in RangeT
         /\ rec.status \in ShardStatus
         /\ rec.lease \in LeaseT
         /\ rec.fence \in Nat
         /\ rec.cursor \in {NoKey} \cup Keys
    /\ DOMAIN grant = DOMAIN shards /\ DOMAIN progress = DOMAIN shards
    /\ \A l \in held : l.owner \in Workers /\ l.fence \in Nat

-----------------------------------------------------------------------------
(* Safety properties, named after the catalog (PROPERTIES.md): C.X is C_X. *)

\* C.ZombieRejection: no lease-gated write was accepted with a lease whose
\* fence is below the shard's fence at the time.
C_ZombieRejection ==
    \A s \in DOMAIN progress : ~progress[s].stale

\* C.TerminalUnleased: Done, Split and Parked shards hold no lease.
C_TerminalUnleased ==
    \A s \in DOMAIN shards : shards[s].status # "Active" => ~shards[s].lease.set

\* C.RecordInvariants: the structural invariants of ShardRecord and
\* RunRecord (record.go, run.go) that the abstraction keeps.
UniqueOps(log) == \A i, j \in 1..Len(log) : i # j => log[i].op # log[j].op
C_RecordInvariants ==
    /\ \A s \in DOMAIN shards :
         LET rec == shards[s] IN
         /\ (rec.parkReason # NoReason) <=> (rec.status = "Parked")
         /\ rec.fence >= 1
         /\ Len(rec.opLog) <= ShardOpLogCap /\ UniqueOps(rec.opLog)
         /\ rec.status = "Split" => Len(rec.spawned) > 0
         /\ (rec.parent # <<>>) <=> IsDerived(s)
         /\ IsDerived(s) => rec.parent = ParentOf(s)
         /\ Len(rec.spawned) <= MaxSpawned
         /\ WellFormed(rec.spec)
    /\ \A r \in DOMAIN runs :
         /\ Len(runs[r].opLog) <= RunOpLogCap /\ UniqueOps(runs[r].opLog)
         /\ (runs[r].status = "Initializing") => ~(<<r, 1>> \in DOMAIN shards)
         /\ (runs[r].status \in {"Active", "Done", "Failed"}) => <<r, 1>> \in DOMAIN shards

\* C.CursorBounds: a cursor's last key lies in its shard's [start, end).
C_CursorBounds ==
    \A s \in DOMAIN shards : shards[s].cursor # NoKey => Contains(shards[s].spec, shards[s].cursor)

\* C.SplitCoverage: the unsplit shards of each registered root's tree tile
\* the root's range: every key of it is covered by exactly one of them.
Leaves(root) == {s \in DOMAIN shards : RootOf(s) = root /\ shards[s].status # "Split"}
C_SplitCoverage ==
    \A r \in Runs : \A i \in 1..Len(Manifest[r]) : <<r, i>> \in DOMAIN shards =>
        \A k \in Keys : Contains(Manifest[r][i], k) =>
            Cardinality({s \in Leaves(<<r, i>>) : Contains(shards[s].spec, k)}) = 1

\* C.SplitAtomicity: every shard a shard spawned exists and names it as its
\* parent; every derived shard is in its parent's spawned list.
C_SplitAtomicity ==
    /\ \A s \in DOMAIN shards : \A i \in 1..Len(shards[s].spawned) :
         ChildId(s, i) \in DOMAIN shards /\ shards[ChildId(s, i)].parent = s
    /\ \A s \in DOMAIN shards : IsDerived(s) =>
         ParentOf(s) \in DOMAIN shards /\ s[Len(s)] <= Len(shards[ParentOf(s)].spawned)

\* C.TenantIsolation: every accepted lease-gated write came from a request
\* scoped to the shard's own tenant.
C_TenantIsolation ==
    \A s \in DOMAIN progress : ~progress[s].foreign

\* C.Cooldown: a worker's successful claims are at least ClaimCooldown apart.
C_Cooldown == \A c \in ClaimKeys : ~claims[c].early

SafetyInvariants ==
    /\ C_Cooldown /\ C_ZombieRejection /\ C_TerminalUnleased /\ C_RecordInvariants
    /\ C_CursorBounds /\ C_SplitCoverage /\ C_SplitAtomicity /\ C_TenantIsolation

-----------------------------------------------------------------------------
(* Properties of a step: [][A]_vars, checked by TLC on every transition. *)

\* C.FenceMonotonicity: a fence never decreases; every acquisition and every
\* unpark raises it.
FenceStep ==
    \A s \in DOMAIN shards :
      /\ s \in DOMAIN shards'
      /\ shards'[s].fence >= shards[s].fence
      /\ grant'[s] > grant[s] => shards'[s].fence > shards[s].fence
      /\ (shards[s].status = "Parked" /\ shards'[s].status = "Active")
            => shards'[s].fence > shards[s].fence
C_FenceMonotonicity == [][FenceStep]_vars

\* C.TerminalIrreversibility: a Done or Split record never changes at all
\* (status, fence, cursor, op-log: everything but the passing of time);
\* Parked changes only to Active (by unpark, whose fence bump
\* C_FenceMonotonicity checks).
Frozen(s) == [shards'[s] EXCEPT !.lease = shards[s].lease] = shards[s]
                /\ shards'[s].lease.set = shards[s].lease.set
                /\ shards'[s].lease.owner = shards[s].lease.owner
TerminalStep ==
    \A s \in DOMAIN shards :
      /\ s \in DOMAIN shards'
      /\ shards[s].status \in {"Done", "Split"} => Frozen(s)
      /\ shards[s].status = "Parked" => shards'[s].status \in {"Parked", "Active"}
C_TerminalIrreversibility == [][TerminalStep]_vars

\* C.CursorMonotonicity: a cursor never moves back and never returns to none.
CursorStep ==
    \A s \in DOMAIN shards :
      shards[s].cursor # NoKey => (shards'[s].cursor # NoKey /\ shards'[s].cursor >= shards[s].cursor)
C_CursorMonotonicity == [][CursorStep]_vars

\* C.Idempotency: an op id held in an op-log keeps its entry (same kind and
\* payload) as long as it is held: a retry replays, another payload is a
\* conflict; neither executes again.
\* (A checkpoint's "done" may become "superseded" when its shard ends.)
SameEntry(e, e2) ==
    /\ e.kind = e2.kind /\ e.payload = e2.payload
    /\ e.result = e2.result \/ (e.result = "done" /\ e2.result = "superseded" /\ e.kind = "checkpoint")
SameEntries(log, log2) ==
    \A e \in Entries(log), e2 \in Entries(log2) : e.op = e2.op => SameEntry(e, e2)
IdempotencyStep ==
    /\ \A s \in DOMAIN shards : SameEntries(shards[s].opLog, shards'[s].opLog)
    /\ \A r \in Runs : SameEntries(runs[r].opLog, runs'[r].opLog)
C_Idempotency == [][IdempotencyStep]_vars

\* C.RunTerminalIrreversibility: Done, Failed and Cancelled runs never
\* change, and no shard record of a run that has ended changes (none
\* returns to Active, none is leased, none takes progress).
RunStep ==
    /\ \A r \in Runs : RunTerminal(runs[r].status) => runs'[r].status = runs[r].status
    /\ \A s \in DOMAIN shards : RunTerminal(runs[RunOf(s)].status) => Frozen(s)
C_RunTerminalIrreversibility == [][RunStep]_vars

\* C.MutualExclusion: no two workers hold unexpired leases on one shard: a
\* live lease is never replaced by another worker's (the record holds one
\* lease; a worker's copy never outlives it); and accepted lease-gated
\* writes never interleave two ownership periods: once a later
\* acquisition's lease wrote, no earlier one's is accepted.  (An ownership
\* period is one acquisition, the ghost grant: the fence is the mechanism
\* meant to tell them apart, so the property cannot use it.)
MutexStep ==
    /\ \A s \in DOMAIN shards :
         (Live(shards[s].lease) /\ shards'[s].lease.set) => shards'[s].lease.owner = shards[s].lease.owner
    \* a live lease is never replaced by a new grant, its own holder's included
    /\ \A s \in DOMAIN grant : (s \in DOMAIN shards /\ Live(shards[s].lease)) => grant'[s] = grant[s]
    /\ \A s \in DOMAIN progress' : ~progress'[s].late
C_MutualExclusion == [][MutexStep]_vars

-----------------------------------------------------------------------------
(* Liveness (LiveSpec). *)

\* Every shard id the model can create.
RECURSIVE ShardIdsUpTo(_)
ShardIdsUpTo(d) ==
    IF d = 0 THEN UNION {{<<r, i>> : i \in 1..Len(Manifest[r])} : r \in Runs}
    ELSE LET shorter == ShardIdsUpTo(d - 1) IN
         shorter \cup {Append(s, i) : s \in shorter, i \in 1..MaxSpawned}
AllShardIds == ShardIdsUpTo(NKeys - 1)

\* C.EventuallyLeased: after heal, an Active, unleased shard of an Active
\* run is eventually leased (or stops being Active) while workers are
\* available (they are: behaving workers claim when idle).
C_EventuallyLeased ==
    \A s \in AllShardIds : (healed /\ Available(s)) ~> ~Available(s)

\* C.Convergence: after heal every run reaches a terminal state, and every
\* shard too, unless its run ended first (an ended run's shards are
\* settled: nothing may lease them again).
AllTerminal ==
    /\ \A r \in Runs : RunTerminal(runs[r].status)
    /\ \A s \in DOMAIN shards : shards[s].status # "Active" \/ RunTerminal(runs[RunOf(s)].status)
C_Convergence == <>[]AllTerminal

=============================================================================
