package main

import (
	"fmt"
	"math/bits"
	"os"
	"strconv"
	"strings"
	"time"
)

// A sweep too big for one machine runs as n shards, each a contiguous block
// of the seed range (block i of n, from 0), each writing one JSON result;
// `simrun merge` adds them up. A shard learns its place from the batch
// engine running it:
//
//	-shard i/n                               explicit (any engine, or by hand)
//	TEST_SHARD_INDEX, TEST_TOTAL_SHARDS      Bazel's test sharding; simrun touches
//	                                         TEST_SHARD_STATUS_FILE to say it shards
//	SLURM_ARRAY_TASK_ID, SLURM_ARRAY_TASK_COUNT  a Slurm job array (the index is
//	                                         the task id less SLURM_ARRAY_TASK_MIN)
//	JOB_COMPLETION_INDEX with -shards N      a Kubernetes Indexed Job of N completions
//
// in that order of precedence. Contiguous blocks keep -first exact: the
// merge stops at the first shard that failed.

// shardSpec is one shard of a sweep: index (from 0) of count.
type shardSpec struct {
	index, count int
	source       string // which convention named it
	statusFile   string // Bazel's TEST_SHARD_STATUS_FILE, touched when set
}

// resolveShard works out the shard from the -shard and -shards flags and
// the environment; count 0 means the sweep is not sharded.
func resolveShard(getenv func(string) string, flagShard string, flagShards int) (shardSpec, error) {
	if flagShard != "" {
		if flagShards != 0 {
			return shardSpec{}, usagef("sweep: -shard i/n and -shards N are exclusive (-shards goes with JOB_COMPLETION_INDEX)")
		}
		i, n, err := parseShard(flagShard)
		return shardSpec{index: i, count: n, source: "-shard"}, err
	}
	if total := getenv("TEST_TOTAL_SHARDS"); total != "" {
		s, err := shardFromEnv("TEST_SHARD_INDEX", getenv("TEST_SHARD_INDEX"), "TEST_TOTAL_SHARDS", total, 0)
		s.statusFile = getenv("TEST_SHARD_STATUS_FILE")
		return s, err
	}
	if count := getenv("SLURM_ARRAY_TASK_COUNT"); count != "" {
		min := 0
		if m := getenv("SLURM_ARRAY_TASK_MIN"); m != "" {
			v, err := strconv.Atoi(m)
			if err != nil || v < 0 {
				return shardSpec{}, usagef("sweep: SLURM_ARRAY_TASK_MIN=%q is not a task id", m)
			}
			min = v
		}
		return shardFromEnv("SLURM_ARRAY_TASK_ID", getenv("SLURM_ARRAY_TASK_ID"), "SLURM_ARRAY_TASK_COUNT", count, min)
	}
	if index := getenv("JOB_COMPLETION_INDEX"); index != "" {
		if flagShards == 0 {
			return shardSpec{}, usagef("sweep: JOB_COMPLETION_INDEX=%s is set (a Kubernetes Indexed Job): give -shards N, the Job's completions", index)
		}
		return shardFromEnv("JOB_COMPLETION_INDEX", index, "-shards", strconv.Itoa(flagShards), 0)
	}
	if flagShards != 0 {
		return shardSpec{}, usagef("sweep: -shards %d needs JOB_COMPLETION_INDEX (a Kubernetes Indexed Job); elsewhere use -shard i/n", flagShards)
	}
	return shardSpec{}, nil
}

// shardFromEnv reads an index and a count given by name (the index less
// base, for engines whose indices do not start at 0).
func shardFromEnv(indexName, index, countName, count string, base int) (shardSpec, error) {
	n, err := strconv.Atoi(count)
	if err != nil || n < 1 {
		return shardSpec{}, usagef("sweep: %s=%q is not a shard count (at least 1)", countName, count)
	}
	i, err := strconv.Atoi(index)
	if err != nil || i-base < 0 || i-base >= n {
		return shardSpec{}, usagef("sweep: %s=%q is not a shard index in %d..%d", indexName, index, base, base+n-1)
	}
	return shardSpec{index: i - base, count: n, source: indexName}, nil
}

// parseShard parses "i/n" with 0 <= i < n.
func parseShard(s string) (int, int, error) {
	a, b, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 0 || i >= n {
		return 0, 0, usagef("sweep: -shard %q: want i/n with 0 <= i < n (shard i of n, from 0)", s)
	}
	return i, n, nil
}

// touchStatus creates or touches Bazel's shard status file, which tells
// Bazel the test runner understood sharding.
func (s shardSpec) touchStatus() error {
	if s.statusFile == "" {
		return nil
	}
	f, err := os.OpenFile(s.statusFile, os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		return usagef("sweep: cannot touch TEST_SHARD_STATUS_FILE: %v", err)
	}
	now := time.Now()
	os.Chtimes(s.statusFile, now, now)
	return f.Close()
}

// shard returns block i of n of the range (blocks differ in size by at
// most one seed) and whether it holds any seed. It computes in 128 bits:
// the range may hold 2^64 seeds.
func (r seedRange) shard(i, n int) (seedRange, bool) {
	start := r.blockStart(i, n)
	end := r.span()
	if i+1 < n {
		next := r.blockStart(i+1, n)
		if next == start {
			return seedRange{}, false
		}
		end = next - 1
	}
	return seedRange{r.lo + start, r.lo + end}, true
}

// blockStart is floor(i * size / n) for i < n, size = span+1 <= 2^64.
func (r seedRange) blockStart(i, n int) uint64 {
	sizeHi, sizeLo := uint64(0), r.span()+1
	if sizeLo == 0 { // span+1 wrapped: the range holds 2^64 seeds
		sizeHi = 1
	}
	hi, lo := bits.Mul64(uint64(i), sizeLo)
	hi += uint64(i) * sizeHi
	q, _ := bits.Div64(hi, lo, uint64(n))
	return q
}

func (s shardSpec) String() string { return fmt.Sprintf("%d/%d", s.index, s.count) }
