// progress.mjs — a server whose calls report progress: `steps` sends `n` notifications/progress (progress i of
// total n, message "<label> i/n", `gap_ms` apart) under the call's progressToken before it answers "<label> done",
// and with `late` one more (progress n+1) 100 ms after its answer; `stray` sends one for each progress token 0..n-1
// (numbers, message "stray"), tokens this server was not given for the call, then answers "stray done"; a `steps`
// call the client cancels stops reporting, and `cancelled` answers how many were.
import { serveStdio } from "@modelcontextprotocol/server/stdio";
import { progressServer } from "./progress-factory.mjs";

serveStdio(progressServer);
