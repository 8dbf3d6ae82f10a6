---------------------------------- MODULE KeyMove ----------------------------------
(***************************************************************************)
(* The key-level migration executor of model/keymove (seed 002), per key: *)
(* Planned -> Copying -> Copied -> Verifying -> Verified -> Swapping ->    *)
(* Done | Failed, with the executor's memory (st, cp) apart from its       *)
(* durable checkpoint (ck), crashes that lose the memory and resume from   *)
(* the checkpoint (reconciling against the shard map), torn copies, a      *)
(* client that writes by the map it last read, the fence on the source    *)
(* that compares the copied revision (the race fix), swaps that land,      *)
(* land with a lost answer, or are refused and rolled back.               *)
(*                                                                         *)
(* Abstractions: every key moves Src -> Tgt; a swap batch is one key; the  *)
(* retry budgets of the Go executor (verify failures, races, rollbacks)   *)
(* are one counter per key; force, verification modes and concurrency are *)
(* left out (they do not change what a key may go through).               *)
(*                                                                         *)
(* Property names: catalog name "KM.X" is operator KM_X here.             *)
(***************************************************************************)
EXTENDS Naturals, Sequences, FiniteSets, TLC

CONSTANTS
    Keys,        \* the keys the plan moves
    MaxWrites,   \* state bound: client writes (the n-th writes value n)
    MaxRetries,  \* the executor's MaxRetries (one budget per key here)
    MaxCrashes,  \* state bound: executor crashes
    Missing,     \* keys with no data at the start (permanent failure)
    Dead,        \* TRUE: the source cannot be reached, ever (transient failures forever)
    Bugs         \* the injected bugs, by their model/bugs names (BUGS.md)

Src == "s1"
Tgt == "s2"
Shards == {Src, Tgt}
NoValue == 100  \* no data
Torn == 101     \* a torn copy
Init0 == 0      \* the initial value; the n-th client write writes n
Terminal == {"Done", "Failed"}
Has(b) == b \in Bugs

VARIABLES
    owner,    \* the shard map in etcd: key -> shard
    data,     \* shard -> key -> value (NoValue: absent)
    rev,      \* shard -> key -> mod revision of the key's data
    ctl,      \* shard -> key -> control word: "open", "moved" or "none"
    st,       \* executor memory: key -> state
    cp,       \* executor memory: key -> source revision of the current copy
    lost,     \* executor memory: key -> a swap whose answer was lost is outstanding
    ck,       \* the durable checkpoint: key -> [s |-> state, rev |-> copied revision]
    budget,   \* durable: key -> retries spent
    view,     \* the client's map: key -> shard
    writes,   \* client writes so far
    crashes,  \* executor crashes so far
    latest,   \* ghost: key -> value of the last applied client write (or initial)
    swaps,    \* ghost: key -> changes of the key's map entry
    ever,     \* ghost: key -> shards the key was ever mapped to
    verified, \* ghost: key -> the current copy's verification succeeded
    copyVal,  \* ghost: key -> the source value the current copy was taken from
    swapOk    \* ghost: key -> every swap so far moved a verified, exact copy

vars == <<owner, data, rev, ctl, st, cp, lost, ck, budget, view, writes, crashes,
          latest, swaps, ever, verified, copyVal, swapOk>>

InitVal(k) == IF k \in Missing THEN NoValue ELSE Init0

Init ==
    /\ owner = [k \in Keys |-> Src]
    /\ data = [s \in Shards |-> [k \in Keys |-> IF s = Src THEN InitVal(k) ELSE NoValue]]
    /\ rev = [s \in Shards |-> [k \in Keys |-> IF s = Src /\ k \notin Missing THEN 1 ELSE 0]]
    /\ ctl = [s \in Shards |-> [k \in Keys |-> IF s = Src THEN "open" ELSE "none"]]
    /\ st = [k \in Keys |-> "Planned"]
    /\ cp = [k \in Keys |-> 0]
    /\ lost = [k \in Keys |-> FALSE]
    /\ ck = [k \in Keys |-> [s |-> "Planned", rev |-> 0]]
    /\ budget = [k \in Keys |-> 0]
    /\ view = [k \in Keys |-> Src]
    /\ writes = 0
    /\ crashes = 0
    /\ latest = [k \in Keys |-> InitVal(k)]
    /\ swaps = [k \in Keys |-> 0]
    /\ ever = [k \in Keys |-> {Src}]
    /\ verified = [k \in Keys |-> FALSE]
    /\ copyVal = [k \in Keys |-> NoValue]
    /\ swapOk = [k \in Keys |-> TRUE]

-----------------------------------------------------------------------------
(* The executor. Durable(k): the key's current state is in the checkpoint; *)
(* every step beyond Copying waits for it (checkpoint after every          *)
(* transition beyond Copying).                                             *)

Durable(k) == ck[k].s = st[k] /\ ck[k].rev = cp[k]

Persist(k) ==
    /\ st[k] \notin {"Planned", "Copying"}
    /\ ~Durable(k)
    /\ ck' = [ck EXCEPT ![k] = [s |-> st[k], rev |-> cp[k]]]
    /\ UNCHANGED <<owner, data, rev, ctl, st, cp, lost, budget, view, writes, crashes,
                   latest, swaps, ever, verified, copyVal, swapOk>>

\* Spend one retry of key k and go to state next, or fail once spent.
Retry(k, next) ==
    IF budget[k] >= MaxRetries
    THEN /\ st' = [st EXCEPT ![k] = "Failed"] /\ budget' = budget
    ELSE /\ st' = [st EXCEPT ![k] = next] /\ budget' = [budget EXCEPT ![k] = @ + 1]

StartCopy(k) ==
    /\ st[k] = "Planned"
    /\ st' = [st EXCEPT ![k] = "Copying"]
    /\ UNCHANGED <<owner, data, rev, ctl, cp, lost, ck, budget, view, writes, crashes,
                   latest, swaps, ever, verified, copyVal, swapOk>>

\* A copy: the source's value (or, a fault of the data path, a torn one)
\* written to the target, which then serves the key too (no reader routes
\* there before the swap). A missing source value fails the key for good.
Copy(k) ==
    /\ st[k] = "Copying" /\ ~Dead
    /\ IF data[Src][k] = NoValue
       THEN /\ st' = [st EXCEPT ![k] = "Failed"]
            /\ UNCHANGED <<data, rev, ctl, cp, verified, copyVal>>
       ELSE \E v \in {data[Src][k], Torn}:
            /\ data' = [data EXCEPT ![Tgt][k] = v]
            /\ rev' = [rev EXCEPT ![Tgt][k] = @ + 1]
            /\ ctl' = [ctl EXCEPT ![Tgt][k] = "open"]
            /\ cp' = [cp EXCEPT ![k] = rev[Src][k]]
            /\ copyVal' = [copyVal EXCEPT ![k] = data[Src][k]]
            /\ verified' = [verified EXCEPT ![k] = FALSE]
            /\ st' = [st EXCEPT ![k] = "Copied"]
    /\ UNCHANGED <<owner, lost, ck, budget, view, writes, crashes, latest, swaps, ever, swapOk>>

\* The source cannot be reached: a transient failure, retried within the
\* budget (keymove.retry-unbounded: forever, spending nothing).
CopyFails(k) ==
    /\ st[k] = "Copying" /\ Dead
    /\ IF Has("keymove.retry-unbounded")
       THEN UNCHANGED <<st, budget>>
       ELSE Retry(k, "Copying")
    /\ UNCHANGED <<owner, data, rev, ctl, cp, lost, ck, view, writes, crashes,
                   latest, swaps, ever, verified, copyVal, swapOk>>

StartVerify(k) ==
    /\ st[k] = "Copied" /\ Durable(k)
    /\ st' = [st EXCEPT ![k] = IF Has("keymove.swap-before-verify") THEN "Verified" ELSE "Verifying"]
    /\ UNCHANGED <<owner, data, rev, ctl, cp, lost, ck, budget, view, writes, crashes,
                   latest, swaps, ever, verified, copyVal, swapOk>>

\* Verification: a source that moved since the copy (a racing write) or a
\* copy that differs sends the key back to Copying.
Verify(k) ==
    /\ st[k] = "Verifying" /\ Durable(k)
    /\ IF rev[Src][k] = cp[k] /\ data[Tgt][k] = data[Src][k]
       THEN /\ st' = [st EXCEPT ![k] = "Verified"]
            /\ verified' = [verified EXCEPT ![k] = TRUE]
            /\ budget' = budget
       ELSE /\ Retry(k, "Copying")
            /\ verified' = verified
    /\ UNCHANGED <<owner, data, rev, ctl, cp, lost, ck, view, writes, crashes,
                   latest, swaps, ever, copyVal, swapOk>>

BeginSwap(k) ==
    /\ st[k] = "Verified" /\ Durable(k)
    /\ st' = [st EXCEPT ![k] = "Swapping"]
    /\ UNCHANGED <<owner, data, rev, ctl, cp, lost, ck, budget, view, writes, crashes,
                   latest, swaps, ever, verified, copyVal, swapOk>>

\* The fence: the source stops serving the key, in a transaction that
\* compares the source's revision with the copied one (the race fix; not
\* with keymove.swap-ignores-source-revision). A moved source: re-copy.
Fence(k) ==
    /\ st[k] = "Swapping" /\ Durable(k) /\ ctl[Src][k] = "open" /\ owner[k] = Src
    /\ IF rev[Src][k] = cp[k] \/ Has("keymove.swap-ignores-source-revision")
       THEN /\ ctl' = [ctl EXCEPT ![Src][k] = "moved"]
            /\ UNCHANGED <<st, budget>>
       ELSE /\ Retry(k, "Copying")
            /\ ctl' = ctl
    /\ UNCHANGED <<owner, data, rev, cp, lost, ck, view, writes, crashes,
                   latest, swaps, ever, verified, copyVal, swapOk>>

\* keymove.checkpoint-before-effect: Done is recorded before the swap.
RecordDoneEarly(k) ==
    /\ Has("keymove.checkpoint-before-effect")
    /\ st[k] = "Swapping" /\ Durable(k) /\ ctl[Src][k] = "moved"
    /\ ck' = [ck EXCEPT ![k].s = "Done"]
    /\ UNCHANGED <<owner, data, rev, ctl, st, cp, lost, budget, view, writes, crashes,
                   latest, swaps, ever, verified, copyVal, swapOk>>

Fenced(k) ==
    /\ st[k] = "Swapping" /\ ctl[Src][k] = "moved" /\ ~lost[k]
    /\ (Durable(k) \/ (Has("keymove.checkpoint-before-effect") /\ ck[k].s = "Done"))

MapTo(k, s) ==
    /\ owner' = [owner EXCEPT ![k] = s]
    /\ swaps' = [swaps EXCEPT ![k] = @ + 1]
    /\ ever' = [ever EXCEPT ![k] = @ \cup {s}]

\* The swap transaction lands. If its answer is lost the executor does not
\* know (lost); the map already naming the target means an earlier
\* attempt landed.
Swap(k) ==
    /\ Fenced(k)
    /\ IF owner[k] = Tgt
       THEN /\ st' = [st EXCEPT ![k] = "Done"]
            /\ UNCHANGED <<owner, swaps, ever, swapOk, lost>>
       ELSE /\ MapTo(k, Tgt)
            /\ swapOk' = [swapOk EXCEPT ![k] = @ /\ verified[k] /\ data[Tgt][k] = copyVal[k]]
            /\ \E answered \in BOOLEAN:
                 IF answered THEN st' = [st EXCEPT ![k] = "Done"] /\ lost' = lost
                 ELSE st' = st /\ lost' = [lost EXCEPT ![k] = TRUE]
    /\ UNCHANGED <<data, rev, ctl, cp, ck, budget, view, writes, crashes, latest, verified, copyVal>>

\* The swap is refused (known not applied): roll back to Copied, releasing
\* the fence, within the budget.
SwapRefused(k) ==
    /\ Fenced(k) /\ owner[k] = Src
    /\ ctl' = [ctl EXCEPT ![Src][k] = "open"]
    /\ Retry(k, "Copied")
    /\ UNCHANGED <<owner, data, rev, cp, lost, ck, view, writes, crashes,
                   latest, swaps, ever, verified, copyVal, swapOk>>

\* A lost answer is settled by reading the map (after bumping the swap
\* epoch); keymove.compensating-rollback writes the old assignment back.
Settle(k) ==
    /\ lost[k]
    /\ lost' = [lost EXCEPT ![k] = FALSE]
    /\ IF Has("keymove.compensating-rollback")
       THEN /\ MapTo(k, Src)
            /\ ctl' = [ctl EXCEPT ![Src][k] = "open"]
            /\ st' = [st EXCEPT ![k] = "Copied"]
       ELSE /\ st' = [st EXCEPT ![k] = IF owner[k] = Tgt THEN "Done" ELSE "Swapping"]
            /\ UNCHANGED <<owner, swaps, ever, ctl>>
    /\ UNCHANGED <<data, rev, cp, ck, budget, view, writes, crashes, latest, verified, copyVal, swapOk>>

\* keymove.map-before-copy: the map entry moves before the copy.
MapFirst(k) ==
    /\ Has("keymove.map-before-copy")
    /\ st[k] = "Copying" /\ owner[k] = Src
    /\ MapTo(k, Tgt)
    /\ swapOk' = [swapOk EXCEPT ![k] = FALSE]
    /\ UNCHANGED <<data, rev, ctl, st, cp, lost, ck, budget, view, writes, crashes,
                   latest, verified, copyVal>>

\* A crash loses the executor's memory; the new incarnation resumes from
\* the checkpoint and reconciles with the map: a key mapped to its target
\* is Done.
Crash ==
    /\ crashes < MaxCrashes
    /\ crashes' = crashes + 1
    /\ st' = [k \in Keys |-> IF ck[k].s \notin Terminal /\ owner[k] = Tgt THEN "Done" ELSE ck[k].s]
    /\ cp' = [k \in Keys |-> ck[k].rev]
    /\ lost' = [k \in Keys |-> FALSE]
    /\ UNCHANGED <<owner, data, rev, ctl, ck, budget, view, writes, latest, swaps, ever,
                   verified, copyVal, swapOk>>

-----------------------------------------------------------------------------
(* The client: writes by the map it last read, if that shard serves the   *)
(* key; a refusal makes it read the map again.                             *)

Write(k) ==
    /\ writes < MaxWrites
    /\ LET s == view[k] IN
       IF ctl[s][k] = "open"
       THEN /\ data' = [data EXCEPT ![s][k] = writes + 1]
            /\ rev' = [rev EXCEPT ![s][k] = @ + 1]
            /\ latest' = [latest EXCEPT ![k] = writes + 1]
            /\ writes' = writes + 1
            /\ view' = view
       ELSE /\ view' = [view EXCEPT ![k] = owner[k]]
            /\ UNCHANGED <<data, rev, latest, writes>>
    /\ UNCHANGED <<owner, ctl, st, cp, lost, ck, budget, crashes, swaps, ever, verified, copyVal, swapOk>>

ExecStep(k) ==
    \/ Persist(k) \/ StartCopy(k) \/ Copy(k) \/ CopyFails(k) \/ StartVerify(k) \/ Verify(k)
    \/ BeginSwap(k) \/ Fence(k) \/ RecordDoneEarly(k) \/ Swap(k) \/ SwapRefused(k)
    \/ Settle(k) \/ MapFirst(k)

Next == (\E k \in Keys: ExecStep(k) \/ Write(k)) \/ Crash

Spec == Init /\ [][Next]_vars
LiveSpec == Spec /\ \A k \in Keys: WF_vars(ExecStep(k))

-----------------------------------------------------------------------------
(* Properties *)

TypeOK ==
    /\ owner \in [Keys -> Shards]
    /\ st \in [Keys -> {"Planned", "Copying", "Copied", "Verifying", "Verified", "Swapping", "Done", "Failed"}]
    /\ \A k \in Keys: budget[k] <= MaxRetries

\* A key's assignment changes at most once, and only to its target.
KM_SingleSwap == \A k \in Keys: swaps[k] <= 1 /\ (swaps[k] = 1 => owner[k] = Tgt)

\* A reader follows some map entry the key has had: every such shard but
\* the owner refuses it, and the owner holds the key if it has a value.
KM_NoDualMapping ==
    \A k \in Keys:
        /\ \A s \in ever[k] \ {owner[k]}: ctl[s][k] # "open"
        /\ latest[k] # NoValue => data[owner[k]][k] # NoValue

\* Every swap moved a copy that was verified and equals the source value it
\* was taken from.
KM_VerifiedBeforeSwap == \A k \in Keys: swapOk[k]

\* The owner always holds the key's latest value.
KM_NoLoss == \A k \in Keys: data[owner[k]][k] = latest[k]

\* Resuming (or re-running) from the checkpoint is safe: a key the
\* checkpoint calls Done is on its target, so no re-run would move it
\* again or differently.
KM_Idempotent == \A k \in Keys: ck[k].s = "Done" => owner[k] = Tgt

\* The plan ends: every key Done or Failed, and recorded so.
KM_Completes == <>[](\A k \in Keys: st[k] \in Terminal /\ Durable(k))
=====================================================================================
