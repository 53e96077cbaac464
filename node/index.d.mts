// The ESM entry point's declarations: the same as the CommonJS one's.
export * from './index.js'
