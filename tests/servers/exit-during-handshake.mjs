// exit-during-handshake.mjs — dies on the first line it reads (writes "fatal: config missing" to stderr, exit code 3) without answering; no SDK.
process.stdin.setEncoding("utf8");
let buffered = "";
process.stdin.on("data", (chunk) => {
  buffered += chunk;
  if (!buffered.includes("\n")) return;
  process.stdin.pause();
  // Exit only once stderr has been flushed, so the message is never lost.
  process.stderr.write("fatal: config missing\n", () => process.exit(3));
});
