------------------------------ MODULE TraceShardCoordination ------------------------------
(***************************************************************************)
(* Trace validation of ShardCoordination.tla: CoordTrace.tla, written by   *)
(* simrun run -tla-trace, holds a coordination run's steps; this module    *)
(* replays them.  Each event names the specification's action and its      *)
(* parameters (a "tick" moves true time by n) and lists the records the    *)
(* Go step changed, mapped onto the specification's variables; the event   *)
(* is a step of the specification when the action is enabled and leaves   *)
(* exactly those records as the event says and every other one as it was.  *)
(* The specification runs without bugs (Bugs = {}), whatever the run had   *)
(* switched on: a step a bug let through is not a step of it.              *)
(*                                                                         *)
(* TLC explores the behaviours that follow the trace; the trace validates  *)
(* when some behaviour reaches its end, which TLC reports as the violation *)
(* of the invariant NotDone (tla/tracecheck reads it so).                  *)
(***************************************************************************)
EXTENDS Integers, Sequences, TLC, CoordTrace

VARIABLES runs, shards, held, inflight, claims, pending, grant, progress, healed, writes, i

Big == 1000000000

\* OpIds only bounds the model checker's choice of op ids (and its symmetry
\* set, which TLC would expand into every permutation); the trace names its
\* op ids itself.

SC == INSTANCE ShardCoordination WITH
        Workers <- TraceWorkers, Tenants <- TraceTenants, Runs <- TraceRuns,
        RunTenant <- TraceRunTenant, Manifest <- TraceManifest, ParkReasons <- 0..4,
        MaxSkew <- TraceMaxSkew, NKeys <- TraceNKeys, OpIds <- {},
        ShardOpLogCap <- 16, RunOpLogCap <- 8, MaxSpawned <- 1024,
        LeaseDuration <- TraceLeaseDuration, ClaimCooldown <- TraceClaimCooldown,
        MaxFence <- Big, MaxAcquires <- Big, MaxWrites <- Big,
        NoWorker <- "none", Liveness <- FALSE, EndInFlight <- TRUE, Bugs <- {}

specVars == <<runs, shards, held, inflight, claims, pending, grant, progress, healed, writes>>

\* The records the event lists are as it says; every other one is unchanged.
Changed(f, f2, ch) ==
    /\ DOMAIN f2 = DOMAIN f \cup DOMAIN ch
    /\ \A x \in DOMAIN ch : f2[x] = ch[x]
    /\ \A x \in DOMAIN f \ DOMAIN ch : f2[x] = f[x]
Applied(e) == Changed(shards, shards', e.sh) /\ Changed(runs, runs', e.ru) /\ Changed(claims, claims', e.cl)

\* The lease the request presented: one its owner received, with its fence.
Presented(e) == {l \in held : l.shard = e.s /\ l.owner = e.owner /\ l.fence = e.fence}

Do(e) ==
    CASE e.act = "tick" -> SC!TickBy(e.n)
      [] e.act = "stutter" -> UNCHANGED specVars
      [] e.act = "acquire_read" -> SC!AcquireRead(e.w, e.s, e.d)
      [] e.act = "acquire_commit" -> SC!AcquireCommit(e.w, e.dl)
      [] e.act = "claim" -> SC!ClaimNextAvailable(e.w, e.s, e.dl, e.d)
      [] e.act = "renew" -> \E l \in Presented(e) : SC!StepRenew(l, e.caller, e.d)
      [] e.act = "checkpoint" -> \E l \in Presented(e) : SC!StepCheckpoint(l, e.caller, e.d, e.payload[1], e.op)
      [] e.act = "complete" -> \E l \in Presented(e) : SC!StepComplete(l, e.caller, e.d, e.payload[1], e.op)
      [] e.act = "park" -> \E l \in Presented(e) : SC!StepPark(l, e.caller, e.d, e.payload[1], e.op)
      [] e.act = "split_replace" -> \E l \in Presented(e) : SC!StepSplitReplace(l, e.caller, e.d, e.payload, e.op)
      [] e.act = "split_residual" -> \E l \in Presented(e) : SC!StepSplitResidual(l, e.caller, e.d, e.payload, e.op)
      [] e.act = "refuse" -> \E l \in Presented(e) : SC!StepRefuse(l, e.caller, e.d, e.kind, e.payload, e.op)
      [] e.act = "unpark" -> SC!StepUnpark(e.s, e.op)
      [] e.act = "register_shards" -> SC!RegisterShards(e.r, e.op)
      [] e.act = "complete_run" -> SC!RunTransition(e.r, "complete_run", e.op)
      [] e.act = "fail_run" -> SC!RunTransition(e.r, "fail_run", e.op)
      [] e.act = "cancel_run" -> SC!RunTransition(e.r, "cancel_run", e.op)

TraceInit == i = 0 /\ SC!Init

TraceNext ==
    /\ i < Len(Trace)
    /\ i' = i + 1
    /\ Do(Trace[i + 1])
    /\ Trace[i + 1].act = "tick" \/ Applied(Trace[i + 1])

TraceSpec == TraceInit /\ [][TraceNext]_<<specVars, i>>

\* Violated exactly when a behaviour of the specification follows the whole trace.
NotDone == i < Len(Trace)
=============================================================================
