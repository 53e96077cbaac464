// exit-after.mjs — the invoice server, which exits on its own after EXIT_AFTER_MS (default 1500 ms)
// with EXIT_CODE (default 0).
setTimeout(() => process.exit(Number(process.env.EXIT_CODE ?? 0)), Number(process.env.EXIT_AFTER_MS ?? 1500));
await import("./invoice.mjs");
