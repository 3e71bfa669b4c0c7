import fs from "node:fs";
import path from "node:path";
import {benchBlockEnd, benchBlockStart, renderBenchmarks} from "../bench/renderReports.js";

// Replaces the generated block of docs/benchmarks.md with the figures of the JSON reports in
// bench-results/ (`npm run bench`, `bench:store`, `bench:secrets` write them): `npm run docs:bench [-- <reports folder>]`.
const reportsDir = path.resolve(process.argv[2] ?? "bench-results");
const doc = "docs/benchmarks.md";
const text = fs.readFileSync(doc, "utf8");
const start = text.indexOf(benchBlockStart);
const end = text.indexOf(benchBlockEnd);
if (start < 0 || end < start)
    throw new Error(`${doc} has no generated block (${benchBlockStart} … ${benchBlockEnd}).`);
fs.writeFileSync(doc, text.slice(0, start) + renderBenchmarks(reportsDir) + text.slice(end + benchBlockEnd.length));
process.stdout.write(`Rendered ${path.relative(process.cwd(), reportsDir)}/*.json into ${doc}\n`);
