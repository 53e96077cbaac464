// count-spawns.mjs — appends one line to the file named by SPAWN_LOG, then runs changing.mjs (for cache tests).
// FAIL_AFTER_SPAWNS=N (with SPAWN_LOG): once the log holds N lines, writes `refused spawn <N+1>` to stderr and
// exits 3 instead (a server that fails a later connect).
import { appendFileSync, existsSync, readFileSync } from "node:fs";
const log = process.env.SPAWN_LOG;
const limit = Number.parseInt(process.env.FAIL_AFTER_SPAWNS ?? "", 10);
if (log && Number.isInteger(limit)) {
  const spawns = existsSync(log) ? readFileSync(log, "utf8").split("\n").filter(Boolean).length : 0;
  if (spawns >= limit) {
    process.stderr.write(`refused spawn ${spawns + 1}\n`);
    process.exit(3);
  }
}
if (log) appendFileSync(log, "spawn\n");
await import("./changing.mjs");
