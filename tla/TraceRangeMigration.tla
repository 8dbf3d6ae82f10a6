------------------------------ MODULE TraceRangeMigration ------------------------------
(***************************************************************************)
(* Trace validation of RangeMigrationSteps.tla: MigTrace.tla, written by   *)
(* simrun run -tla-trace for the migrate and migrate-abandon scenarios,    *)
(* holds a run's steps; this module replays them.  Each event names the    *)
(* specification's action with its parameters ("job" is any compare-and-  *)
(* swap of the job record or the catalog: one of the metadata steps, the  *)
(* new record's fields as parameters) and carries the abstract state after *)
(* it (scalars whole, sets as what was added and removed); the event is a  *)
(* step of the specification when the action is enabled and leaves the     *)
(* state exactly as the event says.  The specification has no bugs: a step *)
(* a bug let through is not a step of it.                                  *)
(*                                                                         *)
(* MigTrace.tla holds a sequence of traces (Traces; one per run, several  *)
(* when tla/tracecheck validates a batch of seeds in one TLC run): the     *)
(* behaviours start in any one of them.  TLC explores the behaviours that  *)
(* follow a trace; the trace validates when some behaviour reaches its     *)
(* end, which TraceNext prints as <<"validated", t>> (and, for a single    *)
(* trace, the search's depth shows: one more than the trace's length).     *)
(***************************************************************************)
EXTENDS Naturals, Sequences, FiniteSets, TLC, MigTrace

VARIABLES phase, job, routes, src, tgt, stg, tfloor, armed, prom, cleaned, acked, tacked, hist, gone,
          t,  \* the trace followed
          i   \* the events of it followed

RM == INSTANCE RangeMigrationSteps WITH Keys <- TraceKeys, MaxTS <- TraceMaxTS, MaxWrites <- 1000000000, Bugs <- {}

specVars == <<phase, job, routes, src, tgt, stg, tfloor, armed, prom, cleaned, acked, tacked, hist, gone>>

Do(e) ==
    CASE e.act = "write" -> RM!ClientWrite(e.g, e.rows)
      [] e.act = "import" -> RM!Import(e.rows, e.pass)
      [] e.act = "promote" -> RM!Promote(e.rows)
      [] e.act = "cleanup" -> RM!CleanSource(e.ts)
      [] e.act = "abandon_staged" -> RM!AbandonStaged
      [] e.act = "floor" -> RM!TargetFloor(e.ts)
      [] e.act = "arm" -> RM!ArmFence
      [] e.act = "disarm" -> RM!DisarmFence
      [] e.act = "compact" -> RM!Compact(e.g, e.rows)
      [] e.act = "job" -> \/ RM!MetaStep
                          \/ RM!StartBackfill(e.job.snap)
                          \/ RM!Progress(e.job.maxImp, e.job.allDone)
                          \/ RM!FenceApplied(e.job.fence, e.job.low)
                          \/ RM!ReadFenceStep(e.job.rf)
      [] OTHER -> FALSE

\* The state after the step is the one the event records.
Seen(e) ==
    /\ phase' = e.ph /\ job' = e.job /\ routes' = e.routes
    /\ src' = (src \ e.srcDel) \cup e.srcAdd
    /\ tgt' = (tgt \ e.tgtDel) \cup e.tgtAdd
    /\ stg' = (stg \ e.stgDel) \cup e.stgAdd
    /\ tfloor' = e.tfloor /\ armed' = e.armed /\ prom' = e.prom /\ cleaned' = e.cleaned

TraceInit == t \in 1..Len(Traces) /\ i = 0 /\ RM!Init

TraceNext ==
    LET tr == Traces[t] IN
    /\ i < Len(tr)
    /\ i' = i + 1 /\ UNCHANGED t
    /\ Do(tr[i + 1])
    /\ Seen(tr[i + 1])
    /\ i + 1 = Len(tr) => PrintT(<<"validated", t>>)

TraceSpec == TraceInit /\ [][TraceNext]_<<specVars, t, i>>

\* Violated exactly when a behaviour of the specification follows a whole trace.
NotDone == i < Len(Traces[t])
=============================================================================
