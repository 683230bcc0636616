#!/usr/bin/env bash
# A full mutation run of src/ in shards, one folder at a time (`npm run test:mutation:shards`).
#
# Each shard adds its results to Stryker's incremental file (reports/stryker-incremental.json),
# so a long run can stop between shards and go on later, and a last `npx stryker run` over all of
# src/ reuses every result that still holds and prints the whole report. A shard that did not
# finish (its initial test run failed) is tried again a minute later, up to three more times.
# Extra arguments go to Stryker: `--ignoreStatic` skips the static mutants (module-level code,
# about two thirds of the run's time), which a later run without it then tests.
set -uo pipefail
cd "$(dirname "$0")/.."
# The initial test run holds every test file in one worker: about 6.5 GB, over Node's default heap.
export NODE_OPTIONS=--max-old-space-size=8192
mkdir -p reports/shards
shards=(
  'src/payments/**/*.ts' 'src/watches/**/*.ts' 'src/feed/**/*.ts' 'src/views/**/*.ts'
  'src/listeners/**/*.ts' 'src/installations/**/*.ts' 'src/store/**/*.ts'
  'src/*.ts,!src/main.ts,src/domain/**/*.ts,src/pipeline/**/*.ts,src/http/**/*.ts,src/slack/**/*.ts'
  'src/demo/**/*.ts'
)
for shard in "${shards[@]}"; do
  name=$(echo "${shard%%/\**}" | tr -c 'a-z0-9\n' '-')
  for attempt in 1 2 3 4; do
    start=$(date +%s)
    npx stryker run "$@" --mutate "$shard" > "reports/shards/$name.log" 2>&1
    if grep -aq 'MutationTestExecutor.*Done in' "reports/shards/$name.log"; then
      echo "$shard: $(grep -ao 'Done in .*' "reports/shards/$name.log" | tail -1) (attempt $attempt)"
      cp reports/mutation/mutation.json "reports/shards/$name.json"
      break
    fi
    echo "$shard: did not finish after $(( $(date +%s) - start )) s (attempt $attempt), see reports/shards/$name.log"
    sleep 60
  done
done
