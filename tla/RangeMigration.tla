------------------------------- MODULE RangeMigration -------------------------------
(***************************************************************************)
(* Range split and cross-group migration (model/migrate; seeds 003, 000;  *)
(* ../shared/design/MIGRATION.md).  One SplitJob moves the right half of  *)
(* the source route from the source group S to the target group T.        *)
(*                                                                         *)
(* Layer 1 (what model/migrate implements): the catalog in group 0, every *)
(* change a compare-and-swap adding one version; the SplitJob phase       *)
(* machine driven from its record (migrator.go); export brackets per key  *)
(* family with (key, ts) cursors (copy.go, mvcc/export.go); the write     *)
(* fence, checked by the group at apply time (fsm.WriteCheck); the target *)
(* HLC raised by imports and by the cutover floor; staged visibility with *)
(* the merge read (mvcc/read.go); promotion (promoter.go); cleanup;       *)
(* abandon.  Catalogs reach a group only through the migrator's pushes,   *)
(* at CUTOVER the source first.                                           *)
(*                                                                         *)
(* Layer 2 (Layer2 = TRUE, the design's hardening, not yet in Go): every  *)
(* source voter applies catalog snapshots from its own watcher at its own *)
(* pace and the leader (which moves) enforces its own view; barriers wait *)
(* for every voter; the read fence (armed before CUTOVER, the             *)
(* max_cutover_version_seen watermark, the ownership query to group 0,    *)
(* failing closed); caller-supplied low timestamps and the delta floor.   *)
(*                                                                         *)
(* Property names: catalog name "M.X" is operator M_X here.  Invariants   *)
(* are state predicates; M_CatalogVersionMonotone and M_PhaseOrder are    *)
(* properties of a step ([][A]_vars); M_JobTerminates is temporal, under  *)
(* the fairness of LiveSpec.                                              *)
(***************************************************************************)
EXTENDS Naturals, Sequences, FiniteSets, TLC

CONSTANTS
    Voters,     \* the source group's voters (model values)
    MaxWrites,  \* state bound: client writes accepted
    Layer2,     \* TRUE: the layer-2 design (per-voter views, read fence, delta floor)
    Liveness,   \* TRUE: a heal phase, after which the migrator is fair and never fails
    Bugs        \* injected bugs, by their model/bugs names (BUGS.md)

ASSUME MaxWrites \in Nat /\ Layer2 \in BOOLEAN /\ Liveness \in BOOLEAN

Has(b) == b \in Bugs

-----------------------------------------------------------------------------
(* The world.  Raw keys are <<family, user key>>; the route key of a raw  *)
(* key is its user key.  The source route covers route keys [1, Inf); the *)
(* job splits it at SplitKey and moves [SplitKey, Inf).  Family "meta"     *)
(* stands for every internal family (!lst|meta|, !txn|, ...), which sorts  *)
(* outside the user-key band and needs its own export bracket.             *)

S == "S"
T == "T"
Groups == {S, T}
Inf == 3
SplitKey == 2
Families == <<"user", "meta">>
Left == <<"user", 1>>
Keys == {Left, <<"user", 2>>, <<"meta", 2>>}
RK(k) == k[2]
Moving(k) == RK(k) >= SplitKey
MovingKey(f) == <<f, SplitKey>>       \* the one moving key of family f

\* Phases of job.Phase.
Planned == "PLANNED"
Backfill == "BACKFILL"
Fence == "FENCE"
DeltaCopy == "DELTA_COPY"
Cutover == "CUTOVER"
Cleanup == "CLEANUP"
Done == "DONE"
Failed == "FAILED"
Abandoning == "ABANDONING"
Abandoned == "ABANDONED"
Chain == <<Planned, Backfill, Fence, DeltaCopy, Cutover, Cleanup, Done>>
Rank(p) == CHOOSE i \in 1..Len(Chain) : Chain[i] = p
Live(p) == p \in {Planned, Backfill, Fence, DeltaCopy, Cutover, Cleanup}
BeforeCutover(p) == p \in {Planned, Backfill, Fence, DeltaCopy}

\* job.Allowed: the forward chain, any live phase to FAILED and back to the
\* phase it failed in, abandon from before CUTOVER, ABANDONING -> ABANDONED.
Allowed(from, to, retry) ==
    \/ Live(from) /\ to = Chain[Rank(from) + 1]
    \/ Live(from) /\ to = Failed
    \/ from = Failed /\ to = retry
    \/ to = Abandoning /\ (BeforeCutover(from) \/ (from = Failed /\ BeforeCutover(retry)))
    \/ from = Abandoning /\ to = Abandoned

-----------------------------------------------------------------------------
(* Routes and catalogs (catalog.go). *)

Route(id, s, e, g, st) == [id |-> id, start |-> s, end |-> e, group |-> g, state |-> st,
                           staged |-> FALSE, floor |-> 0]
InRoute(r, rk) == r.start <= rk /\ rk < r.end
Overlap(r1, r2) == r1.start < r2.end /\ r2.start < r1.end
InitialCatalog == {Route(1, 1, Inf, S, "Active")}

VARIABLES
    catalogs,   \* every published catalog, version i at index i (group 0)
    job,        \* the SplitJob record (group 0)
    sview,      \* source voter -> catalog version it enforces
    sleader,    \* the source group's leader
    tview,      \* the catalog version the target group enforces
    hlc,        \* group -> its last commit ts (the HLC's durable lower bound)
    store,      \* group -> raw key -> live versions (ids of writes)
    staged,     \* raw key -> versions in the target's staged keyspace of the job
    promoted,   \* the target promoted every staged version of the job
    armed,      \* layer 2: every source voter armed the read fence for the moving range
    watermark,  \* layer 2: the source's max_cutover_version_seen (group-0 heartbeats)
    writes,     \* ghost oracle: every acknowledged client write, in acknowledgement order
    copied,     \* ghost: ids of the versions ever imported into the staged keyspace
    healed      \* the heal phase has begun (only when Liveness)

vars == <<catalogs, job, sview, sleader, tview, hlc, store, staged, promoted, armed,
          watermark, writes, copied, healed>>

Version == Len(catalogs)
Current == catalogs[Version]
Lookup(cat, rk) == {r \in cat : InRoute(r, rk)}
RouteById(cat, id) == CHOOSE r \in cat : r.id = id
HasRoute(cat, id) == \E r \in cat : r.id = id
ReplaceRoute(cat, id, new) == {IF r.id = id THEN new ELSE r : r \in cat}
Publish(cat) == catalogs' = Append(catalogs, cat)

Faulty == ~healed

-----------------------------------------------------------------------------
(* Versions.  A version is the id of the write that made it; writes[i] is *)
(* [key, ts, tomb, group, callerTS, inForce].                             *)

TS(w) == writes[w].ts
\* The newest of a set of versions at or below ts (ties, which only a
\* broken clock produces, go to the later write); 0 if none.
Newest(vs, ts) ==
    LET c == {w \in vs : TS(w) <= ts}
    IN IF c = {} THEN 0 ELSE CHOOSE w \in c : \A x \in c : TS(x) < TS(w) \/ (TS(x) = TS(w) /\ x <= w)
AllOf(k) == {w \in 1..Len(writes) : writes[w].key = k}
OracleNewest(k, ts) == Newest(AllOf(k), ts)
MaxTS == 100

\* mvcc.Store.Get: the newest live and the newest staged version at or
\* below ts, the later of the two; bug migrate.staged-first-read prefers
\* staged data.  (Visibility of tombstones comes after this choice, so the
\* chosen version is what the properties compare.)
ReadChosen(g, k, ts, stagedOn) ==
    LET live == Newest(store[g][k], ts)
        stg == IF stagedOn THEN Newest(staged[k], ts) ELSE 0
    IN IF stg = 0 THEN live
       ELSE IF live = 0 \/ Has("migrate.staged-first-read") THEN stg
       ELSE IF TS(stg) > TS(live) THEN stg ELSE live

-----------------------------------------------------------------------------
(* Initial state: the job was created (SplitRange) and is PLANNED. *)

NoBracket == [cursor |-> MaxTS, done |-> FALSE]

Init ==
    /\ catalogs = <<InitialCatalog>>
    /\ job = [phase |-> Planned, retry |-> "none", abandonFrom |-> "none",
              snapshotTS |-> 0, fenceTS |-> 0, low |-> 0, fenceVersion |-> 0,
              cutoverVersion |-> 0, maxImported |-> 0, pass |-> 0,
              brackets |-> [f \in {"user", "meta"} |-> NoBracket],
              stagedCleared |-> FALSE, sourceCleaned |-> FALSE]
    /\ sview = [v \in Voters |-> 1]
    /\ sleader \in Voters
    /\ tview = 1
    /\ hlc = [g \in Groups |-> 0]
    /\ store = [g \in Groups |-> [k \in Keys |-> {}]]
    /\ staged = [k \in Keys |-> {}]
    /\ promoted = FALSE
    /\ armed = FALSE
    /\ watermark = 0
    /\ writes = <<>>
    /\ copied = {}
    /\ healed = FALSE

-----------------------------------------------------------------------------
(* What a group enforces.  Layer 1: the catalog the migrator last pushed  *)
(* into its log (every voter checks writes at apply time in log order, so *)
(* the group acts as one).  Layer 2: the source leader's own view.        *)

SView == sview[sleader]
ViewOf(g) == IF g = S THEN catalogs[SView] ELSE catalogs[tview]
ServingRoute(g, k) ==
    LET rs == {r \in Lookup(ViewOf(g), RK(k)) : r.group = g}
    IN IF rs = {} THEN [none |-> TRUE] ELSE [none |-> FALSE, r |-> CHOOSE r \in rs : TRUE]

\* fsm.WriteCheck: the route must be the group's and not WriteFenced (bug
\* migrate.fence-needs-version skips the fence for requests without an
\* observed catalog version), and the ts above the route's floor (bug
\* migrate.no-hlc-advance has no floor).
WriteOK(g, k, ts, hasVersion) ==
    LET sr == ServingRoute(g, k) IN
    /\ ~sr.none
    /\ sr.r.state = "Active" \/ (Has("migrate.fence-needs-version") /\ ~hasVersion)
    /\ sr.r.floor = 0 \/ ts > sr.r.floor \/ Has("migrate.no-hlc-advance")

\* The write fence is in force from the moment fence_ts is taken until
\* abandon lifts it (after CUTOVER the range is not the source's at all).
InForce == job.fenceTS > 0 /\ job.phase \notin {Abandoning, Abandoned}

Accept(g, k, ts, tomb, callerTS) ==
    /\ writes' = Append(writes, [key |-> k, ts |-> ts, tomb |-> tomb, group |-> g,
                                 callerTS |-> callerTS, inForce |-> InForce])
    /\ store' = [store EXCEPT ![g][k] = @ \cup {Len(writes) + 1}]

\* A client write (put or delete) at a leader-issued timestamp.
ClientWrite(g, k, tomb, hasVersion) ==
    LET ts == hlc[g] + 1 IN
    /\ Len(writes) < MaxWrites
    /\ WriteOK(g, k, ts, hasVersion)
    /\ Accept(g, k, ts, tomb, FALSE)
    /\ hlc' = [hlc EXCEPT ![g] = ts]
    /\ UNCHANGED <<catalogs, job, sview, sleader, tview, staged, promoted, armed, watermark, copied, healed>>

\* Layer 2: a write admitted with a caller-supplied (or prepared) timestamp
\* below the source's clock, at a timestamp the key does not use yet.
ClientWriteAt(k, ts, tomb) ==
    /\ Layer2
    /\ Len(writes) < MaxWrites
    /\ ts \in 1..hlc[S]
    /\ \A w \in store[S][k] : TS(w) # ts
    /\ WriteOK(S, k, ts, TRUE)
    /\ Accept(S, k, ts, tomb, TRUE)
    /\ UNCHANGED <<catalogs, job, sview, sleader, tview, hlc, staged, promoted, armed, watermark, copied, healed>>

-----------------------------------------------------------------------------
(* Reads change nothing, so the properties quantify over every read a     *)
(* group would serve now.  The target serves what its view routes to it.  *)
(* The source serves what its leader's view routes to it, and in layer 2  *)
(* a read of the moving range passes the read fence: a coordinator stamps *)
(* the version cv it routed by; once the fence is armed, or the watermark *)
(* shows a cutover newer than the source's view, the source asks group 0  *)
(* who owns the key and serves only if the answer is "the source"; a      *)
(* timeout fails closed.                                                   *)

Owner(k) == LET rs == Lookup(Current, RK(k)) IN IF rs = {} THEN "none" ELSE (CHOOSE r \in rs : TRUE).group

SourceServes(k, cv) ==
    /\ ~ServingRoute(S, k).none
    /\ \E r \in Lookup(catalogs[cv], RK(k)) : r.group = S    \* the coordinator routed here
    /\ \/ ~Layer2 \/ ~Moving(k)
       \/ Has("migrate.no-read-fence")
       \/ Has("migrate.read-fence-less-than") /\ ~(cv < SView)
       \/ /\ ~Has("migrate.no-read-fence") /\ ~Has("migrate.read-fence-less-than")
          /\ \/ ~(armed \/ watermark > SView)
             \/ Owner(k) = S
             \/ Has("migrate.ownership-timeout-serves")      \* a timed-out query read as "still mine"

Serves(g, k) ==
    IF g = T THEN ~ServingRoute(T, k).none
    ELSE \E cv \in 1..Version : SourceServes(k, cv)

StagedOn(g, k) == ~ServingRoute(g, k).none /\ ServingRoute(g, k).r.staged

-----------------------------------------------------------------------------
(* The migrator (migrator.go, copy.go).  Every step is one CAS on the job *)
(* record (with the catalog, when it changes), resuming from the record.  *)

SetPhase(p) == job' = [job EXCEPT !.phase = p]
Resets(pass) == [f \in {"user", "meta"} |-> NoBracket]

\* Layer 1: the migrator pushes the current catalog into a group's log.
PushS(ver) == sview' = [v \in Voters |-> IF sview[v] < ver THEN ver ELSE sview[v]]

\* PLANNED -> BACKFILL: snapshot_ts through a source barrier.  Bug
\* migrate.overlapping-routes publishes the target route at once.
Plan ==
    /\ job.phase = Planned
    /\ job' = [job EXCEPT !.phase = Backfill, !.snapshotTS = hlc[S], !.pass = 1, !.brackets = Resets(1)]
    /\ IF Has("migrate.overlapping-routes")
       THEN /\ Publish(Current \cup {Route(3, SplitKey, Inf, T, "Active")})
            /\ tview' = Version + 1
       ELSE UNCHANGED <<catalogs, tview>>
    /\ UNCHANGED <<sview, sleader, hlc, store, staged, promoted, armed, watermark, writes, copied, healed>>

\* The copy window of the current pass: (snapshot_ts's floor, high].
Window == IF job.pass = 1 THEN <<0, job.snapshotTS>> ELSE <<job.low, job.fenceTS>>
InWindow(w) == Window[1] < TS(w) /\ TS(w) <= Window[2]

\* The first unfinished bracket, in family order.
NextBracket == LET open == {i \in 1..2 : ~job.brackets[Families[i]].done}
               IN IF open = {} THEN "none" ELSE Families[CHOOSE i \in open : \A j \in open : i <= j]

\* One export chunk of one row scanned (the scan budget counts rejected
\* rows too): the next version of the bracket's key after the cursor, in
\* commit_ts DESC order; imported if it lies in the window.  Bug
\* migrate.key-only-cursor resumes after the whole key; bug
\* migrate.read-visible-export emits only the newest visible version <= high;
\* bug migrate.raw-range-export never exports the internal families.
CopyBatch ==
    LET f == NextBracket
        k == MovingKey(f)
        b == job.brackets[f]
        after == {w \in store[S][k] : TS(w) < b.cursor}
        next == IF after = {} THEN 0 ELSE CHOOSE w \in after : \A x \in after : TS(x) <= TS(w)
        visible == LET n == Newest(store[S][k], Window[2]) IN
                   IF n # 0 /\ ~writes[n].tomb /\ TS(n) > Window[1] THEN {n} ELSE {}
        rows == CASE Has("migrate.raw-range-export") /\ f # "user" -> {}
                  [] Has("migrate.read-visible-export") -> visible
                  [] next # 0 /\ InWindow(next) -> {next}
                  [] OTHER -> {}
        finished == \/ next = 0
                    \/ Has("migrate.raw-range-export") /\ f # "user"
                    \/ Has("migrate.read-visible-export")
                    \/ Has("migrate.key-only-cursor")
        maxTS == IF rows = {} THEN 0 ELSE TS(CHOOSE w \in rows : TRUE)
    IN
    /\ job.phase \in {Backfill, DeltaCopy}
    /\ f # "none"
    /\ staged' = [staged EXCEPT ![k] = @ \cup rows]
    /\ copied' = copied \cup rows
    /\ hlc' = IF maxTS > hlc[T] /\ ~Has("migrate.no-hlc-advance") THEN [hlc EXCEPT ![T] = maxTS] ELSE hlc
    /\ job' = [job EXCEPT !.brackets[f] = [cursor |-> IF next = 0 THEN 0 ELSE TS(next), done |-> finished],
                          !.maxImported = IF maxTS > @ THEN maxTS ELSE @]
    /\ UNCHANGED <<catalogs, sview, sleader, tview, store, promoted, armed, watermark, writes, healed>>

AllDone == \A f \in {"user", "meta"} : job.brackets[f].done

\* BACKFILL -> FENCE: one catalog CAS splits the source route; the moving
\* half becomes a new WriteFenced route on the source.
FenceRoutes ==
    LET r == RouteById(Current, 1) IN
    (Current \ {r}) \cup {[r EXCEPT !.end = SplitKey], Route(2, SplitKey, r.end, S, "WriteFenced")}

DoFence ==
    /\ job.phase = Backfill /\ AllDone
    /\ HasRoute(Current, 1) /\ RouteById(Current, 1).group = S
    /\ Publish(FenceRoutes)
    /\ job' = [job EXCEPT !.phase = Fence, !.fenceVersion = Version + 1]
    /\ UNCHANGED <<sview, sleader, tview, hlc, store, staged, promoted, armed, watermark, writes, copied, healed>>

\* The source voters that must have applied a catalog version for a barrier:
\* every voter (layer 2), a majority (bug migrate.quorum-fence-ack), none
\* (bug migrate.fence-ts-no-barrier).
Applied(ver) == {v \in Voters : sview[v] >= ver}
FenceBarrier ==
    CASE Has("migrate.fence-ts-no-barrier") -> TRUE
      [] Has("migrate.quorum-fence-ack") -> 2 * Cardinality(Applied(job.fenceVersion)) > Cardinality(Voters)
      [] OTHER -> Applied(job.fenceVersion) = Voters

\* Layer 2's write tracker: the lowest timestamp admitted in the moving
\* range (the job exists from the start, so every admitted write counts).
MinAdmitted == LET ts == {TS(w) : w \in {x \in 1..Len(writes) : writes[x].group = S /\ Moving(writes[x].key)}}
               IN IF ts = {} THEN MaxTS ELSE CHOOSE t \in ts : \A u \in ts : t <= u
DeltaLow == IF Layer2 /\ ~Has("migrate.delta-from-snapshot") /\ MinAdmitted - 1 < job.snapshotTS
            THEN MinAdmitted - 1 ELSE job.snapshotTS

\* FENCE -> DELTA_COPY: once the fence is applied on the source, fence_ts
\* is its last commit ts; the delta pass copies (low, fence_ts].
FenceApplied ==
    /\ job.phase = Fence
    /\ IF Layer2 THEN FenceBarrier /\ UNCHANGED sview ELSE PushS(Version)
    /\ job' = [job EXCEPT !.phase = DeltaCopy, !.fenceTS = hlc[S], !.low = DeltaLow,
                          !.pass = 2, !.brackets = Resets(2)]
    /\ UNCHANGED <<catalogs, sleader, tview, hlc, store, staged, promoted, armed, watermark, writes, copied, healed>>

\* Layer 2: every source voter arms the read fence before the CUTOVER CAS
\* (bug migrate.no-read-fence has no read fence at all).
ArmReadFence ==
    /\ Layer2 /\ ~armed /\ ~Has("migrate.no-read-fence")
    /\ job.phase = DeltaCopy
    /\ armed' = TRUE
    /\ UNCHANGED <<catalogs, job, sview, sleader, tview, hlc, store, staged, promoted, watermark, writes, copied, healed>>

DeltaDone == IF Has("migrate.cutover-before-delta") THEN job.brackets["user"].done ELSE AllDone
Floor == IF job.maxImported > job.fenceTS THEN job.maxImported ELSE job.fenceTS

\* DELTA_COPY -> CUTOVER: raise the target's clock floor to
\* max(max_imported_ts, fence_ts), then one O(1) catalog CAS gives the route
\* to the target with staged visibility and the floor.
DoCutover ==
    LET fl == IF Has("migrate.no-hlc-advance") THEN 0 ELSE Floor
        r == RouteById(Current, 2)
    IN
    /\ job.phase = DeltaCopy /\ DeltaDone
    /\ Layer2 /\ ~Has("migrate.no-read-fence") => armed
    /\ HasRoute(Current, 2) /\ r.state = "WriteFenced"
    /\ hlc' = IF fl > hlc[T] THEN [hlc EXCEPT ![T] = fl] ELSE hlc
    /\ Publish(ReplaceRoute(Current, 2, [r EXCEPT !.group = T, !.state = "Active", !.staged = TRUE, !.floor = fl]))
    /\ job' = [job EXCEPT !.phase = Cutover, !.cutoverVersion = Version + 1]
    /\ UNCHANGED <<sview, sleader, tview, store, staged, promoted, armed, watermark, writes, copied, healed>>

\* CUTOVER -> CLEANUP.  Layer 1 installs the cutover in the source first
\* (it stops serving the range), raises the target's clock to the source's
\* horizon, then installs it in the target.  Layer 2 waits until every
\* source voter and the target applied it from their watchers.
PublishCutover ==
    /\ job.phase = Cutover
    /\ IF Layer2
       THEN /\ Applied(job.cutoverVersion) = Voters /\ tview >= job.cutoverVersion
            /\ UNCHANGED <<sview, tview, hlc>>
       ELSE /\ PushS(Version)
            /\ tview' = Version
            /\ hlc' = IF hlc[S] > hlc[T] /\ ~Has("migrate.no-hlc-advance") THEN [hlc EXCEPT ![T] = hlc[S]] ELSE hlc
    /\ SetPhase(Cleanup)
    /\ UNCHANGED <<catalogs, sleader, store, staged, promoted, armed, watermark, writes, copied, healed>>

\* CLEANUP: once promotion is durable, staged visibility is cleared (one
\* catalog CAS); then, after the grace period and drained reads, the source
\* deletes the moved versions at or below fence_ts; then DONE.  Bug
\* migrate.cleanup-before-promotion deletes the source data first, without
\* waiting for promotion.
ClearStaged ==
    LET r == RouteById(Current, 2) IN
    /\ job.phase = Cleanup /\ ~job.stagedCleared
    /\ promoted
    /\ Has("migrate.cleanup-before-promotion") => job.sourceCleaned
    /\ Publish(ReplaceRoute(Current, 2, [r EXCEPT !.staged = FALSE]))
    /\ job' = [job EXCEPT !.stagedCleared = TRUE]
    /\ IF Layer2 THEN UNCHANGED tview ELSE tview' = Version + 1
    /\ UNCHANGED <<sview, sleader, hlc, store, staged, promoted, armed, watermark, writes, copied, healed>>

CleanSource ==
    /\ job.phase = Cleanup /\ ~job.sourceCleaned
    /\ job.stagedCleared \/ Has("migrate.cleanup-before-promotion")
    /\ Layer2 => Applied(job.cutoverVersion) = Voters
    /\ store' = [store EXCEPT ![S] = [k \in Keys |->
                   IF Moving(k) THEN {w \in store[S][k] : TS(w) > job.fenceTS} ELSE store[S][k]]]
    /\ job' = [job EXCEPT !.sourceCleaned = TRUE]
    /\ UNCHANGED <<catalogs, sview, sleader, tview, hlc, staged, promoted, armed, watermark, writes, copied, healed>>

Finish ==
    /\ job.phase = Cleanup /\ job.stagedCleared /\ job.sourceCleaned
    /\ SetPhase(Done)
    /\ UNCHANGED <<catalogs, sview, sleader, tview, hlc, store, staged, promoted, armed, watermark, writes, copied, healed>>

\* A step failed too often: FAILED, keeping the phase to retry (from the
\* record, so an ambiguous CUTOVER CAS that landed is retried as CUTOVER).
ToFailed ==
    /\ Faulty /\ Live(job.phase)
    /\ job' = [job EXCEPT !.phase = Failed, !.retry = job.phase]
    /\ UNCHANGED <<catalogs, sview, sleader, tview, hlc, store, staged, promoted, armed, watermark, writes, copied, healed>>

Retry ==
    /\ job.phase = Failed
    /\ job' = [job EXCEPT !.phase = job.retry, !.retry = "none"]
    /\ UNCHANGED <<catalogs, sview, sleader, tview, hlc, store, staged, promoted, armed, watermark, writes, copied, healed>>

\* AbandonSplitJob (an operator, before CUTOVER only).
RequestAbandon ==
    /\ Faulty
    /\ Allowed(job.phase, Abandoning, job.retry)
    /\ job' = [job EXCEPT !.phase = Abandoning, !.retry = "none",
                          !.abandonFrom = IF job.phase = Failed THEN job.retry ELSE job.phase]
    /\ UNCHANGED <<catalogs, sview, sleader, tview, hlc, store, staged, promoted, armed, watermark, writes, copied, healed>>

\* ABANDONING -> ABANDONED: delete the staged data, lift the fence (bug
\* migrate.abandon-keeps-fence leaves the route WriteFenced), install on the
\* source.
Abandon ==
    LET fenced == HasRoute(Current, 2) /\ RouteById(Current, 2).state = "WriteFenced"
        lift == fenced /\ ~Has("migrate.abandon-keeps-fence")
        cat == IF lift THEN ReplaceRoute(Current, 2, [RouteById(Current, 2) EXCEPT !.state = "Active"]) ELSE Current
    IN
    /\ job.phase = Abandoning
    /\ staged' = [k \in Keys |-> {}]
    /\ IF lift THEN Publish(cat) ELSE UNCHANGED catalogs
    /\ IF Layer2 THEN UNCHANGED sview ELSE PushS(IF lift THEN Version + 1 ELSE Version)
    /\ SetPhase(Abandoned)
    /\ UNCHANGED <<sleader, tview, hlc, store, promoted, armed, watermark, writes, copied, healed>>

-----------------------------------------------------------------------------
(* The target's promoter (promoter.go, fsm.applyPromote): while its view  *)
(* shows the route with staged visibility, copy a staged version to its   *)
(* live position at its original timestamp and delete the staged row; bug *)
(* migrate.promote-skips-shadowed drops it when a newer live version      *)
(* exists.  Promotion is done when nothing staged is left.                *)

StagedRoute == \E r \in catalogs[tview] : r.group = T /\ r.staged

Promote ==
    /\ StagedRoute /\ ~promoted
    /\ IF \A k \in Keys : staged[k] = {}
       THEN /\ promoted' = TRUE
            /\ UNCHANGED <<store, staged>>
       ELSE \E k \in Keys, w \in 1..Len(writes) :
              /\ w \in staged[k]
              /\ staged' = [staged EXCEPT ![k] = @ \ {w}]
              /\ LET shadowed == \E x \in store[T][k] : TS(x) > TS(w)
                 IN store' = IF shadowed /\ Has("migrate.promote-skips-shadowed") THEN store
                             ELSE [store EXCEPT ![T][k] = @ \cup {w}]
              /\ UNCHANGED promoted
    /\ UNCHANGED <<catalogs, job, sview, sleader, tview, hlc, armed, watermark, writes, copied, healed>>

-----------------------------------------------------------------------------
(* Layer 2's environment: watchers install catalog snapshots into each    *)
(* voter and into the target, one version at a time, forward only; the    *)
(* source's leadership moves to any voter; group-0 heartbeats carry the   *)
(* newest cutover version to the source.                                   *)

WatchSource(v) ==
    /\ Layer2 /\ sview[v] < Version
    /\ sview' = [sview EXCEPT ![v] = @ + 1]
    /\ UNCHANGED <<catalogs, job, sleader, tview, hlc, store, staged, promoted, armed, watermark, writes, copied, healed>>

WatchTarget ==
    /\ Layer2 /\ tview < Version
    /\ tview' = tview + 1
    /\ UNCHANGED <<catalogs, job, sview, sleader, hlc, store, staged, promoted, armed, watermark, writes, copied, healed>>

ElectLeader(v) ==
    /\ Layer2 /\ v # sleader
    /\ sleader' = v
    /\ UNCHANGED <<catalogs, job, sview, tview, hlc, store, staged, promoted, armed, watermark, writes, copied, healed>>

Heartbeat ==
    /\ Layer2 /\ job.cutoverVersion > watermark
    /\ watermark' = job.cutoverVersion
    /\ UNCHANGED <<catalogs, job, sview, sleader, tview, hlc, store, staged, promoted, armed, writes, copied, healed>>

Heal ==
    /\ Liveness /\ ~healed
    /\ healed' = TRUE
    /\ UNCHANGED <<catalogs, job, sview, sleader, tview, hlc, store, staged, promoted, armed, watermark, writes, copied>>

-----------------------------------------------------------------------------

Migrator == Plan \/ CopyBatch \/ DoFence \/ FenceApplied \/ ArmReadFence \/ DoCutover
            \/ PublishCutover \/ ClearStaged \/ CleanSource \/ Finish \/ Retry \/ Abandon

Next ==
    \/ \E g \in Groups, k \in Keys, tomb, hv \in BOOLEAN : ClientWrite(g, k, tomb, hv)
    \/ \E k \in Keys, ts \in 1..MaxWrites, tomb \in BOOLEAN : ClientWriteAt(k, ts, tomb)
    \/ Migrator
    \/ ToFailed \/ RequestAbandon
    \/ Promote
    \/ \E v \in Voters : WatchSource(v) \/ ElectLeader(v)
    \/ WatchTarget \/ Heartbeat
    \/ Heal

Spec == Init /\ [][Next]_vars

Symmetry == Permutations(Voters)

\* After heal the migrator, the promoter and the watchers are fair (and
\* the migrator no longer fails); clients and the operator need not act.
LiveSpec ==
    /\ Spec
    /\ WF_vars(Heal)
    /\ WF_vars(Migrator) /\ WF_vars(Promote) /\ WF_vars(WatchTarget) /\ WF_vars(Heartbeat)
    /\ \A v \in Voters : WF_vars(WatchSource(v))

-----------------------------------------------------------------------------
(* Safety properties (PROPERTIES.md): M.X is M_X. *)

TypeOK ==
    /\ job.phase \in {Planned, Backfill, Fence, DeltaCopy, Cutover, Cleanup, Done, Failed, Abandoning, Abandoned}
    /\ \A v \in Voters : sview[v] \in 1..Version
    /\ tview \in 1..Version
    /\ sleader \in Voters
    /\ copied \subseteq 1..Len(writes)

\* M.CatalogNonOverlap: no published catalog has overlapping routes.
M_CatalogNonOverlap ==
    \A i \in 1..Version : \A r1, r2 \in catalogs[i] : r1 # r2 => ~Overlap(r1, r2)

\* M.SingleWriter: at every instant at most one group would accept a
\* (versioned, leader-timestamped) write for each key.
M_SingleWriter ==
    \A k \in Keys : Cardinality({g \in Groups : WriteOK(g, k, hlc[g] + 1, TRUE)}) <= 1

\* M.NoLostWrite: every acknowledged write is still what a read at its
\* commit ts returns from the key's owner by the current catalog (merging
\* the staged rows while the catalog says so), unless another write at the
\* same timestamp supersedes it.
M_NoLostWrite ==
    \A w \in 1..Len(writes) :
      LET k == writes[w].key
          g == Owner(k)
          rs == Lookup(Current, RK(k))
          on == \E r \in rs : r.staged
      IN g \in Groups => (ReadChosen(g, k, TS(w), on) = w \/ OracleNewest(k, TS(w)) # w)

\* M.SnapshotReads: every read a group would serve, at every timestamp up
\* to its clock, returns the newest acknowledged version at or below it.
M_SnapshotReads ==
    \A g \in Groups, k \in Keys : Serves(g, k) =>
      \A ts \in 1..hlc[g] : ReadChosen(g, k, ts, StagedOn(g, k)) = OracleNewest(k, ts)

\* M.Linearizable (the per-key order it needs, stated on the spec's atomic
\* operations): a read at a group's latest timestamp returns the newest
\* acknowledged version, and leader-timestamped writes of one key are
\* timestamped in the order they were acknowledged.
M_Linearizable ==
    /\ \A g \in Groups, k \in Keys : Serves(g, k) =>
         ReadChosen(g, k, hlc[g], StagedOn(g, k)) = OracleNewest(k, MaxTS)
    /\ \A w1, w2 \in 1..Len(writes) :
         (w1 < w2 /\ writes[w1].key = writes[w2].key /\ ~writes[w1].callerTS /\ ~writes[w2].callerTS)
            => TS(w1) < TS(w2)

\* M.HLCMonotone: every commit ts the target issues is above
\* max(max_imported_ts, fence_ts).
M_HLCMonotone ==
    \A w \in 1..Len(writes) : writes[w].group = T => TS(w) > Floor

\* M.FencedWritesRejected: no write to the moving range is accepted on the
\* source while the fence is in force.
M_FencedWritesRejected ==
    \A w \in 1..Len(writes) : ~(writes[w].group = S /\ Moving(writes[w].key) /\ writes[w].inForce)

\* M.NoStaleRead: once the target acknowledged a write to a key, the source
\* serves no read of it (it could only return something older).
M_NoStaleRead ==
    \A k \in Keys : (\E w \in 1..Len(writes) : writes[w].group = T /\ writes[w].key = k)
                      => ~Serves(S, k)

\* M.ExactlyOnceCopy: from CUTOVER on, the versions imported are exactly the
\* source versions of the moving range (every family) with commit_ts <=
\* fence_ts.  (Imports are idempotent upserts, so staged rows are a set: a
\* version imported twice is one version.)
Expected == {w \in 1..Len(writes) : writes[w].group = S /\ Moving(writes[w].key) /\ TS(w) <= job.fenceTS}
CutOver == job.cutoverVersion > 0
M_ExactlyOnceCopy == CutOver => copied = Expected

\* M.CleanupSafe: the source's moved data is deleted only after promotion
\* is durable.  (Reads are atomic here, so "drained" holds trivially.)
M_CleanupSafe == job.sourceCleaned => promoted

SafetyInvariants ==
    /\ M_CatalogNonOverlap /\ M_SingleWriter /\ M_NoLostWrite /\ M_SnapshotReads /\ M_Linearizable
    /\ M_HLCMonotone /\ M_FencedWritesRejected /\ M_NoStaleRead /\ M_ExactlyOnceCopy /\ M_CleanupSafe

\* M.CatalogVersionMonotone: published catalogs are never rewritten, the
\* version rises by at most one per step, and no view moves back.
CatalogStep ==
    /\ Len(catalogs') \in {Version, Version + 1}
    /\ SubSeq(catalogs', 1, Version) = catalogs
    /\ \A v \in Voters : sview'[v] >= sview[v]
    /\ tview' >= tview
M_CatalogVersionMonotone == [][CatalogStep]_vars

\* M.PhaseOrder: only the state machine's transitions; CUTOVER once.
PhaseStep ==
    /\ job'.phase # job.phase => Allowed(job.phase, job'.phase, job.retry)
    /\ (job'.cutoverVersion # job.cutoverVersion) => job.cutoverVersion = 0
M_PhaseOrder == [][PhaseStep]_vars

-----------------------------------------------------------------------------
(* Liveness. *)

\* M.JobTerminates: after heal the job reaches DONE or ABANDONED, and what
\* it did to the catalog is resolved: no route is left WriteFenced (an
\* abandoned job that keeps the fence leaves the range unwritable forever).
M_JobTerminates ==
    <>[](job.phase \in {Done, Abandoned} /\ \A r \in Current : r.state = "Active")

=============================================================================
