// never-answers.mjs — reads stdin and never writes to stdout: a wedged server for handshake-timeout tests.
// It exits quietly when stdin reaches EOF (so a client that closes the pipe is not left with an orphan);
// set IGNORE_EOF=1 to keep it alive even then, like a truly hung process that must be killed.
process.stdin.resume();
process.stdin.on("data", () => {});
process.stdin.on("end", () => {
  if (process.env.IGNORE_EOF === "1") setInterval(() => {}, 1 << 30);
  else process.exit(0);
});
