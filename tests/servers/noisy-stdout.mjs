// noisy-stdout.mjs — writes the non-JSON line "this is not json" to stdout first, then serves the invoice server over stdio.
import { serveStdio } from "@modelcontextprotocol/server/stdio";
import { invoiceServer } from "./invoice-factory.mjs";
process.stdout.write("this is not json\n");
serveStdio(invoiceServer);
