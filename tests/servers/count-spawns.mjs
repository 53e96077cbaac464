// count-spawns.mjs — appends one line to the file named by SPAWN_LOG, then runs changing.mjs (for cache tests).
import { appendFileSync } from "node:fs";
if (process.env.SPAWN_LOG) appendFileSync(process.env.SPAWN_LOG, "spawn\n");
await import("./changing.mjs");
