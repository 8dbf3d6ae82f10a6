---------------------------- MODULE RangeMigrationSteps ----------------------------
(***************************************************************************)
(* Range migration at the granularity of model/migrate's durable steps:   *)
(* the target of the migration scenarios' trace validation                *)
(* (TraceRangeMigration.tla).  RangeMigration.tla states the protocol with *)
(* atomic migrator steps; here every step is one thing Go makes durable   *)
(* on its own:                                                             *)
(*                                                                         *)
(*   - the first apply of one log entry of the source group S or the      *)
(*     target group T (every voter applies the same log in order, so a    *)
(*     group's state is the state after its committed prefix): a client   *)
(*     write (put, delete, transaction commit or rollback, range delete)  *)
(*     with all the versions it created, an import batch, a promote batch,*)
(*     the source cleanup, the target's abandon of staged rows, a durable *)
(*     write floor, a read fence armed or disarmed, a compaction;          *)
(*   - one compare-and-swap of the metadata store on the job record (with *)
(*     the catalog when it changes).                                       *)
(*                                                                         *)
(* Only the moving span is modelled (the data outside it never moves),    *)
(* and of the catalog only the routes that overlap it.  A version is      *)
(* <<key, ts>>; keys and timestamps are ranks (only their order matters). *)
(* What a step leaves unchanged here is a stutter: entries that change    *)
(* nothing below (barriers, ceilings, membership, the tracker and the     *)
(* retention pin, transaction locks, which are drained before fence_ts and *)
(* never exported) and job-record writes of unmodelled fields (cursors,   *)
(* tracker flags, retries, history).  Reads change nothing and are not    *)
(* modelled: M.SnapshotReads, M.Linearizable and M.NoStaleRead are the Go *)
(* checkers' alone here (RangeMigration.tla states them on its coarser    *)
(* model), and so is M.CatalogVersionMonotone (versions are not mapped).  *)
(*                                                                         *)
(* The guards are what the protocol promises at each step, not what the   *)
(* Go code checks: a trace step a bug let through is no step of this      *)
(* module.                                                                 *)
(***************************************************************************)
EXTENDS Naturals, FiniteSets, TLC

CONSTANTS
    Keys,       \* the raw keys of the moving span (ranks)
    MaxTS,      \* timestamps are 1..MaxTS (0: none)
    MaxWrites,  \* state bound: client writes (model checking only)
    Bugs        \* injected bugs, by their model/bugs names (gap configurations; {} for traces)

Has(b) == b \in Bugs

S == "S"
T == "T"
TSs == 1..MaxTS
Ver == Keys \X TSs
TSOf(v) == v[2]
Max2(a, b) == IF a > b THEN a ELSE b
MaxOf(xs) == IF xs = {} THEN 0 ELSE CHOOSE x \in xs : \A y \in xs : y <= x
MaxTSIn(vs) == MaxOf({TSOf(v) : v \in vs})

None == "NONE"          \* before the job exists
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
Live(p) == p \in {Planned, Backfill, Fence, DeltaCopy, Cutover, Cleanup}
BeforeCutover(p) == p \in {Planned, Backfill, Fence, DeltaCopy}
Next2(p) == CASE p = Planned -> Backfill [] p = Backfill -> Fence [] p = Fence -> DeltaCopy
              [] p = DeltaCopy -> Cutover [] p = Cutover -> Cleanup [] p = Cleanup -> Done
              [] OTHER -> None

\* job.Allowed: the forward chain, any live phase to FAILED and back to the
\* phase it failed in, abandon from before CUTOVER, ABANDONING -> ABANDONED.
Allowed(from, to, retry) ==
    \/ from = None /\ to = Planned
    \/ Live(from) /\ to = Next2(from)
    \/ Live(from) /\ to = Failed
    \/ from = Failed /\ to = retry
    \/ to = Abandoning /\ (BeforeCutover(from) \/ (from = Failed /\ BeforeCutover(retry)))
    \/ from = Abandoning /\ to = Abandoned

Route(g, st, staged) == [g |-> g, st |-> st, stg |-> staged]
Unmoved == {Route(S, "Active", FALSE)}

NoJob == [snap |-> 0, fence |-> 0, low |-> 0, maxImp |-> 0, rf |-> "NONE", allDone |-> FALSE,
          retry |-> "NONE", cut |-> FALSE, cleared |-> FALSE, cleaned |-> FALSE]

VARIABLES
    phase,     \* the job's phase (metadata store)
    job,       \* the job record's fields that matter (metadata store)
    routes,    \* the current catalog's routes overlapping the moving span
    src,       \* the source's versions in the moving span
    tgt,       \* the target's live versions in the moving span
    stg,       \* the target's staged rows of the job
    tfloor,    \* the target's durable write floor for the job (0: none)
    armed,     \* the source holds the job's cutover read fence
    prom,      \* the target promoted every staged row of the job
    cleaned,   \* the source applied the job's cleanup
    acked,     \* ghost: every version a client write created (either group)
    tacked,    \* ghost: the versions client writes created on the target
    hist,      \* ghost: every version the source ever held in the moving span
    gone       \* ghost: versions compaction removed

vars == <<phase, job, routes, src, tgt, stg, tfloor, armed, prom, cleaned, acked, tacked, hist, gone>>
data == <<src, tgt, stg, tfloor, armed, prom, cleaned>>
meta == <<phase, job, routes>>
ghosts == <<acked, tacked, hist, gone>>

Init ==
    /\ phase = None /\ job = NoJob /\ routes = Unmoved
    /\ src = {} /\ tgt = {} /\ stg = {} /\ tfloor = 0
    /\ armed = FALSE /\ prom = FALSE /\ cleaned = FALSE
    /\ acked = {} /\ tacked = {} /\ hist = {} /\ gone = {}

\* The write fence is in force from the moment fence_ts is taken until the
\* job is abandoned; after CUTOVER the span is not the source's at all.
FenceInForce == job.fence > 0 /\ phase \notin {Abandoning, Abandoned}
\* The target's floor: every commit ts it issues in the span lies above.
Floor == Max2(job.fence, job.maxImp)

-----------------------------------------------------------------------------
(* Group steps (first applies). *)

\* A client write: every version one entry created in the span.  The source
\* takes it only while the fence is not in force and before CUTOVER; the
\* target only after CUTOVER and above the floor (M.HLCMonotone).
ClientWrite(g, vs) ==
    /\ vs # {}
    /\ IF g = S
       THEN /\ ~FenceInForce \/ Has("migrate.fence-needs-version")
            /\ ~job.cut
            /\ src' = src \cup vs /\ hist' = hist \cup vs
            /\ UNCHANGED <<tgt, tacked>>
       ELSE /\ job.cut
            /\ \A v \in vs : TSOf(v) > Floor \/ Has("migrate.no-hlc-advance")
            /\ tgt' = tgt \cup vs /\ tacked' = tacked \cup vs
            /\ UNCHANGED <<src, hist>>
    /\ acked' = acked \cup vs
    /\ UNCHANGED <<meta, stg, tfloor, armed, prom, cleaned, gone>>

\* Pass pass's window: BACKFILL copies (0, snapshot_ts], DELTA_COPY
\* (delta_floor, fence_ts].
InWindow(v, pass) == IF pass = 1 THEN TSOf(v) <= job.snap
                     ELSE job.low < TSOf(v) /\ TSOf(v) <= job.fence

\* An import batch into the staged keyspace: versions the source held, in
\* the window of their pass, before CUTOVER.  A delayed batch may land
\* after the job moved on to FAILED or ABANDONING (never after the target
\* abandoned its rows: then it is refused and changes nothing).
Import(vs, pass) ==
    /\ phase \in {Backfill, DeltaCopy, Failed, Abandoning} /\ ~job.cut
    /\ phase = Failed => BeforeCutover(job.retry)
    /\ pass = 1 => job.snap > 0
    /\ pass = 2 => job.fence > 0
    /\ vs \subseteq hist
    /\ \A v \in vs : InWindow(v, pass)
    /\ stg' = stg \cup vs
    /\ UNCHANGED <<meta, src, tgt, tfloor, armed, prom, cleaned, ghosts>>

\* A promote batch (after CUTOVER): staged rows to live at their own ts.
\* The batch that leaves nothing staged marks promotion done.
Promote(vs) ==
    /\ job.cut
    /\ vs \subseteq stg
    /\ vs # {} \/ stg = {}
    /\ stg' = stg \ vs
    /\ tgt' = tgt \cup vs
    /\ prom' = (stg' = {})
    /\ UNCHANGED <<meta, src, tfloor, armed, cleaned, ghosts>>

\* The source deletes its versions at or below fence_ts, only once the
\* target's promotion is durable and staged visibility is off.
CleanSource(fts) ==
    /\ phase = Cleanup
    /\ (prom /\ job.cleared) \/ Has("migrate.cleanup-before-promotion")
    /\ fts = job.fence
    /\ src' = {v \in src : TSOf(v) > fts}
    /\ cleaned' = TRUE
    /\ UNCHANGED <<meta, tgt, stg, tfloor, armed, prom, ghosts>>

\* The target drops the abandoned job's staged rows.
AbandonStaged ==
    /\ phase \in {Abandoning, Abandoned}
    /\ stg' = {}
    /\ UNCHANGED <<meta, src, tgt, tfloor, armed, prom, cleaned, ghosts>>

\* Target readiness: a durable write floor at or above fence_ts and every
\* timestamp imported, before CUTOVER.
TargetFloor(ts) ==
    /\ phase = DeltaCopy
    /\ ts >= job.fence /\ ts >= MaxTSIn(stg)
    /\ tfloor' = Max2(tfloor, ts)
    /\ UNCHANGED <<meta, src, tgt, stg, armed, prom, cleaned, ghosts>>

\* The cutover read fence: armed once ARMING is durable; disarmed when a
\* failed CUTOVER clears it, at cleanup, on abandon, never while CUTOVER
\* relies on it.
ArmFence ==
    /\ phase = DeltaCopy /\ job.rf \in {"ARMING", "ARMED"}
    /\ armed' = TRUE
    /\ UNCHANGED <<meta, src, tgt, stg, tfloor, prom, cleaned, ghosts>>

DisarmFence ==
    /\ ~(phase = DeltaCopy /\ job.rf = "ARMED")
    /\ armed' = FALSE
    /\ UNCHANGED <<meta, src, tgt, stg, tfloor, prom, cleaned, ghosts>>

\* Compaction drops versions a newer version of the same key (kept) shadows.
\* While the job copies (snapshot_ts taken, not cut over, not abandoned)
\* the retention pin keeps every source version of the span the target has
\* not staged: the export may still need it, and the target answers reads
\* down to the source's compaction watermark of the start of the job.
\* (A set, not \E: TLC would take each witness of an \E in an action for a
\* successor of its own.)
Pinned == job.snap > 0 /\ ~job.cut /\ phase \notin {Abandoning, Abandoned}
Shadowed(v, after) == {w \in after : w[1] = v[1] /\ TSOf(w) > TSOf(v)} # {}
Compact(g, vs) ==
    /\ vs # {}
    /\ IF g = S
       THEN /\ vs \subseteq src /\ \A v \in vs : Shadowed(v, src \ vs)
            /\ Pinned => vs \subseteq stg
            /\ src' = src \ vs /\ UNCHANGED tgt
       ELSE /\ vs \subseteq tgt /\ \A v \in vs : Shadowed(v, tgt \ vs)
            /\ tgt' = tgt \ vs /\ UNCHANGED src
    /\ gone' = gone \cup vs
    /\ UNCHANGED <<meta, stg, tfloor, armed, prom, cleaned, acked, tacked, hist>>

-----------------------------------------------------------------------------
(* Metadata steps: one CAS each on the job record (and the catalog).  The *)
(* new record's fields are parameters where the migrator computes them.    *)

SetJob(p, j, rs) == phase' = p /\ job' = j /\ routes' = rs /\ UNCHANGED <<data, ghosts>>

Create == phase = None /\ SetJob(Planned, NoJob, routes)

\* PLANNED -> BACKFILL: snapshot_ts taken through the source's log.
StartBackfill(snap) ==
    /\ phase = Planned /\ snap > 0
    /\ SetJob(Backfill, [job EXCEPT !.snap = snap, !.allDone = FALSE], routes)

\* Copy progress recorded (cursors, max imported ts, brackets done).
Progress(maxImp, allDone) ==
    /\ phase \in {Backfill, DeltaCopy}
    /\ maxImp >= job.maxImp
    /\ maxImp <= MaxTSIn(stg) \/ maxImp = job.maxImp
    /\ SetJob(phase, [job EXCEPT !.maxImp = maxImp, !.allDone = allDone], routes)

\* BACKFILL -> FENCE: the moving span becomes its own WriteFenced route.
DoFence ==
    /\ phase = Backfill /\ job.allDone
    /\ SetJob(Fence, job, {Route(S, "WriteFenced", FALSE)})

\* FENCE -> DELTA_COPY: fence_ts is above every version the source took in
\* the span (no write gets in after it), and delta_floor below every version
\* at or below fence_ts not yet staged (the write tracker's minimum).
FenceApplied(fence, low) ==
    /\ phase = Fence
    /\ fence >= MaxTSIn(src) /\ fence > 0
    /\ low <= job.snap
    /\ \A v \in src \ stg : TSOf(v) <= fence => TSOf(v) > low
    /\ SetJob(DeltaCopy, [job EXCEPT !.fence = fence, !.low = low, !.allDone = FALSE], routes)

\* The read fence's intent machine (job.ReadFence) during DELTA_COPY.
ReadFenceStep(rf) ==
    /\ phase = DeltaCopy
    /\ \/ job.rf \in {"NONE", "CLEARING"} /\ rf = "ARMING"
       \/ job.rf = "ARMING" /\ rf = "ARMED" /\ armed
       \/ job.rf = "ARMED" /\ rf = "CLEARING"
    /\ SetJob(DeltaCopy, [job EXCEPT !.rf = rf], routes)

\* DELTA_COPY -> CUTOVER: both passes done, the read fence armed, the
\* target's floor durable, and every source version at or below fence_ts
\* staged (M.ExactlyOnceCopy: none missing; the import guard: none extra);
\* one catalog CAS gives the span to the target with staged visibility.
DoCutover ==
    /\ phase = DeltaCopy /\ job.allDone
    /\ job.rf = "ARMED" /\ armed
    /\ tfloor >= Floor
    /\ {v \in src : TSOf(v) <= job.fence} \subseteq stg
    /\ SetJob(Cutover, [job EXCEPT !.cut = TRUE], {Route(T, "Active", TRUE)})

StartCleanup == phase = Cutover /\ SetJob(Cleanup, job, routes)

\* CLEANUP: staged visibility off once promotion is durable.
ClearStaged ==
    /\ phase = Cleanup /\ ~job.cleared /\ prom
    /\ SetJob(Cleanup, [job EXCEPT !.cleared = TRUE], {Route(T, "Active", FALSE)})

\* CLEANUP: the source's cleanup is recorded once it applied.
SourceCleaned ==
    /\ phase = Cleanup /\ job.cleared /\ ~job.cleaned /\ cleaned
    /\ SetJob(Cleanup, [job EXCEPT !.cleaned = TRUE], routes)

Finish ==
    /\ phase = Cleanup /\ job.cleared /\ job.cleaned
    /\ SetJob(Done, job, routes)

ToFailed ==
    /\ Live(phase)
    /\ SetJob(Failed, [job EXCEPT !.retry = phase], routes)

Retry ==
    /\ phase = Failed
    /\ SetJob(job.retry, [job EXCEPT !.retry = "NONE"], routes)

\* AbandonSplitJob (before CUTOVER only): ABANDONING; the migrator then
\* drops the staged rows, clears the read fence's record, lifts the fence.
RequestAbandon ==
    /\ Allowed(phase, Abandoning, job.retry)
    /\ SetJob(Abandoning, [job EXCEPT !.retry = "NONE"], routes)

AbandonClearFence ==
    /\ phase = Abandoning /\ job.rf # "NONE"
    /\ SetJob(Abandoning, [job EXCEPT !.rf = "NONE"], routes)

LiftFence ==
    /\ phase = Abandoning /\ routes = {Route(S, "WriteFenced", FALSE)}
    /\ SetJob(Abandoning, job, {Route(S, "Active", FALSE)})

\* ABANDONED: nothing staged is left and no route of the span is fenced.
Abandon ==
    /\ phase = Abandoning /\ stg = {} /\ ~armed
    /\ \A r \in routes : r.g = S /\ r.st = "Active"
    /\ SetJob(Abandoned, job, routes)

MetaStep ==
    \/ Create \/ DoFence \/ DoCutover \/ StartCleanup \/ ClearStaged \/ SourceCleaned \/ Finish
    \/ ToFailed \/ Retry \/ RequestAbandon \/ AbandonClearFence \/ LiftFence \/ Abandon

-----------------------------------------------------------------------------
(* Model checking: parameters drawn from small domains.  The metadata     *)
(* steps' parameters are the values the migrator would record (the newest *)
(* staged ts as max_imported; delta_floor snapshot_ts or just below a     *)
(* version not yet staged): other values only multiply the states.         *)

LowChoices == {job.snap} \cup {TSOf(v) - 1 : v \in {w \in src \ stg : TSOf(w) <= job.snap}}

Next ==
    \/ /\ Cardinality(acked) < MaxWrites
       /\ \E g \in {S, T}, k \in Keys, ts \in TSs : ClientWrite(g, {<<k, ts>>})
    \/ \E v \in hist, pass \in {1, 2} : Import({v}, pass)
    \/ \E v \in stg : Promote({v})
    \/ stg = {} /\ Promote({})
    \/ CleanSource(job.fence)
    \/ AbandonStaged
    \/ \E ts \in TSs : TargetFloor(ts)
    \/ ArmFence \/ DisarmFence
    \/ \E g \in {S, T}, k \in Keys, ts \in TSs : Compact(g, {<<k, ts>>})
    \/ \E ts \in TSs : StartBackfill(ts)
    \/ \E d \in BOOLEAN : Progress(Max2(job.maxImp, MaxTSIn(stg)), d)
    \/ \E f \in TSs, l \in LowChoices : FenceApplied(f, l)
    \/ \E rf \in {"ARMING", "ARMED", "CLEARING"} : ReadFenceStep(rf)
    \/ MetaStep
    \/ UNCHANGED <<meta, src, tgt, stg, tfloor, armed, prom, cleaned, ghosts>> /\ FALSE

Spec == Init /\ [][Next]_vars

-----------------------------------------------------------------------------
(* Safety properties (PROPERTIES.md), restricted to the moving span. *)

\* M.CatalogNonOverlap: exactly one route of the catalog covers the span.
M_CatalogNonOverlap == Cardinality(routes) = 1

\* M.SingleWriter: at most one group has an Active route over the span and
\* the source takes no write once fence_ts is taken (unless abandoned).
M_SingleWriter ==
    /\ Cardinality({r \in routes : r.st = "Active"}) <= 1
    /\ job.cut => \A r \in routes : r.g = T

\* M.FencedWritesRejected: no source version above fence_ts while the
\* fence is in force.
M_FencedWritesRejected == FenceInForce => \A v \in src : TSOf(v) <= job.fence

\* M.HLCMonotone: every target write lies above max(max_imported, fence_ts).
M_HLCMonotone == \A v \in tacked : TSOf(v) > Floor

\* M.ExactlyOnceCopy: from CUTOVER until the source is cleaned, every source
\* version at or below fence_ts is on the target (staged or promoted, unless
\* the target's compaction dropped it under a newer version), and
\* nothing staged or promoted in the span came from anywhere but the source
\* within its window or a target write.
M_ExactlyOnceCopy ==
    /\ (job.cut /\ ~cleaned) => {v \in src : TSOf(v) <= job.fence} \subseteq stg \cup tgt \cup gone
    /\ stg \subseteq hist
    /\ job.cut => \A v \in stg : TSOf(v) <= job.fence

\* M.CleanupSafe: the source's moved data goes only after promotion.
M_CleanupSafe == cleaned => prom

\* M.NoLostWrite: every version a write created (and no compaction
\* shadowed) is held by the span's owner: the source before CUTOVER, the
\* target (live, or staged while visible) after.
Owned == IF job.cut THEN tgt \cup (IF \E r \in routes : r.stg THEN stg ELSE {}) ELSE src
M_NoLostWrite == \A v \in acked \ gone : v \in Owned

\* M.PhaseOrder: only the state machine's transitions.
PhaseStep == phase' # phase => Allowed(phase, phase', job.retry)
M_PhaseOrder == [][PhaseStep]_vars

TypeOK ==
    /\ src \subseteq Ver /\ tgt \subseteq Ver /\ stg \subseteq Ver
    /\ armed \in BOOLEAN /\ prom \in BOOLEAN /\ cleaned \in BOOLEAN
=============================================================================
