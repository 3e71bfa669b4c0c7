import fs from "node:fs";
import {cliReferencePath, renderCliReference} from "../tools/docs/cliReference.js";

// Writes docs/cli-reference.md from the commands' own --help: `npm run docs:cli`.
fs.writeFileSync(cliReferencePath, renderCliReference());
process.stdout.write(`Wrote ${cliReferencePath}\n`);
